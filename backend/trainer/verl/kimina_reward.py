"""verl reward function that scores with a Kimina backend's reward service (format reward x Lean verdict).

Two entry points, one per verl reward path (backend/training/verlVersions.ts):
- verl 0.5 and 0.6: `reward`, the batch signature of the Kimina recipe's reward (training-recipe.md §7.1), with
  `reward_model.reward_manager=batch`, `custom_reward_function.name=reward`,
  `+custom_reward_function.reward_kwargs.return_dict=True`.
- verl 0.7 to 0.9: `compute_score`, the coroutine verl's reward loop awaits once per answer
  (`reward_model.reward_manager=naive`, `custom_reward_function.name=compute_score`). The answers that arrive
  together (the loop starts every answer of its share of the batch at once) are gathered and scored by one
  `reward` call, so they go out in the same size-limited batches, spread over the servers with the same
  failover; each call gets its own answer's dict back.
Standard library only, so the Ray workers need nothing extra.

Environment: KIMINA_REWARD_URL (a backend root, or several separated by commas: one `kimina serve` per node of a
Ray cluster), KIMINA_API_TOKEN (optional, the same for every server), KIMINA_VERDICT_MODE (`strict`, the default,
or `recipe`: kimina-client's rule, as the published runs were scored), KIMINA_REWARD_CONCURRENCY (batches in
flight per server, 2), KIMINA_REWARD_TIMEOUT_S (900), KIMINA_REWARD_BATCH_ITEMS (answers per request, 64).

Several servers: batches are spread by load (in-flight batches plus the server's own figure from the
authenticated GET /v1/load); a server that fails or stops answering is taken out, its batches go to the others,
and it comes back once /health answers again. Every answer gets exactly one reward, in order. A server stops
answering when a batch of its runs past a deadline derived from the batch's size and the throughput observed on
every server's answers (at least MIN_DEADLINE_S, at most KIMINA_REWARD_TIMEOUT_S) while another server answers.
The /health and /v1/load probes run in their own threads with a PROBE_TIMEOUT_S bound: they never hold up the
loop that hands out batches (a health probe due at the start of a call gets up to PROBE_GRACE_S first).

Requests are cut by size, not only by count: Kimina answers run to tens of kilobytes, and the backend refuses
bodies over its limit (413). The limit is read from the backend's /health (`bodyLimitBytes`) when it says,
else DEFAULT_BODY_LIMIT (the backend's default, backend/api/body.ts); each request stays BODY_MARGIN below it.
A 429 (Lean queue full) is retried after its Retry-After; connection errors and 5xx with back-off, on another
server when there is one; any other answer stops with the status and the backend's message.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import queue
import threading
import time
import urllib.error
import urllib.request
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

DEFAULT_URL = "__KIMINA_REWARD_URL__"
DEFAULT_BODY_LIMIT = 4 * 1024 * 1024
BODY_MARGIN = 64 * 1024
MAX_ITEMS = 64
ATTEMPTS = 4
MAX_WAIT_S = 15 * 60
PER_SERVER = 2  # batches in flight per server (KIMINA_REWARD_CONCURRENCY)
REQUEST_TIMEOUT_S = 900.0  # a server that has not answered a batch by then is taken out (KIMINA_REWARD_TIMEOUT_S)
LOAD_TTL_S = 1.0
PROBE_TIMEOUT_S = 2.0  # /health and /v1/load: a server that cannot answer them in this time counts as not answering
PROBE_GRACE_S = 0.25  # a health probe due when a call starts: how long the first batches wait for its answer
# A batch overdue while another server answers: its server is taken out and the batch goes to the others. The
# deadline is DEADLINE_FACTOR x the batch's answers x the slowest seconds per answer among the last batches any
# server answered, at least MIN_DEADLINE_S (above the backend's default Lean time of 60 s for one snippet,
# KIMINA_TIMEOUT, so one proof that runs to Lean's limit does not look like a hung server) and at most the request
# timeout; it doubles each time the same batch was taken from an overdue server.
MIN_DEADLINE_S = 120.0
DEADLINE_FACTOR = 4.0

_limits: dict[str, int] = {}
_item_seconds: deque[float] = deque(maxlen=16)  # seconds per answer of the last batches answered, any server
_lock = threading.Lock()  # Server fields written by the probe threads


class RewardServiceError(RuntimeError):
    pass


def _headers(token: str | None) -> dict[str, str]:
    h = {"Content-Type": "application/json"}
    if token:
        h["Authorization"] = f"Bearer {token}"
    return h


def body_limit(base: str, token: str | None) -> int:
    """The backend's body limit from /health, once per process; the documented default when it does not say."""
    if base not in _limits:
        limit = DEFAULT_BODY_LIMIT
        try:
            with urllib.request.urlopen(urllib.request.Request(base + "/health", headers=_headers(token)),
                                        timeout=PROBE_TIMEOUT_S) as r:
                said = json.loads(r.read().decode("utf-8")).get("bodyLimitBytes")
                if isinstance(said, int) and said > BODY_MARGIN:
                    limit = said
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError, ValueError, AttributeError):
            pass
        _limits.setdefault(base, limit)
    return _limits[base]


def body_limits(servers: list[Server], token: str | None) -> int:
    """The smallest body limit of the servers, their /health read in parallel (PROBE_TIMEOUT_S each at most)."""
    threads = [threading.Thread(target=body_limit, args=(s.url, token), daemon=True)
               for s in servers if s.url not in _limits]
    for t in threads:
        t.start()
    end = time.monotonic() + PROBE_TIMEOUT_S + 0.5
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    return min(_limits.get(s.url, DEFAULT_BODY_LIMIT) for s in servers)


def batches(items: list[dict[str, Any]], envelope: Callable[[list[dict[str, Any]]], bytes], max_bytes: int,
            max_items: int = MAX_ITEMS) -> list[bytes]:
    """Request bodies in order, each at most max_bytes and max_items; one item too large on its own is an error."""
    out: list[bytes] = []
    empty = len(envelope([]))
    current: list[dict[str, Any]] = []
    size = empty
    for i, item in enumerate(items):
        item_size = len(json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode("utf-8")) + 1  # the comma
        if empty + item_size > max_bytes:
            raise RewardServiceError(f"answer {i} alone is {item_size} bytes, over the backend's request limit of {max_bytes} bytes")
        if current and (size + item_size > max_bytes or len(current) >= max_items):
            out.append(envelope(current))
            current, size = [], empty
        current.append(item)
        size += item_size
    if current:
        out.append(envelope(current))
    for body in out:
        assert len(body) <= max_bytes, "batch size estimate was wrong"
    return out


def _retry_after(e: urllib.error.HTTPError) -> float:
    try:
        return max(0.5, min(60.0, float(e.headers.get("Retry-After", "1"))))
    except (TypeError, ValueError):
        return 1.0


class Server:
    """One reward server as this process sees it: whether it is in, its reported load and its in-flight batches."""

    def __init__(self, url: str):
        self.url = url
        self.in_flight = 0
        self.failures = 0  # consecutive failed requests and probes; 0 after any answer
        self.out = False  # taken out after a failure; back in once /health answers (probed from out_until on)
        self.out_until = 0.0
        self.busy_until = 0.0  # answered 429: no new batch before its Retry-After
        self.load = 0.0  # admitted checks / capacity, from the authenticated GET /v1/load
        self.load_at = -1e9
        self.last_error = ""
        self.answered_at = -1e9  # when it last answered a batch (time.monotonic)
        self.probing = False  # a /health probe is in flight
        self.load_probing = False  # a /v1/load probe is in flight

    def usable(self, now: float, per_server: int) -> bool:
        return not self.out and now >= self.busy_until and self.in_flight < per_server

    def take_out(self, error: str) -> None:
        self.failures += 1
        self.last_error = error
        self.out = True
        self.out_until = time.monotonic() + min(10.0, 2.0 ** (self.failures - 1))


# Servers live as long as the Ray worker's process: one that died stays out across reward calls until it is healthy.
_servers: dict[str, Server] = {}


def servers_from(spec: str) -> list[Server]:
    urls = [u.strip().rstrip("/") for u in spec.split(",") if u.strip()]
    if not urls:
        raise RewardServiceError("KIMINA_REWARD_URL is not set")
    for u in urls:
        if not u.startswith(("http://", "https://")):
            raise RewardServiceError(f"KIMINA_REWARD_URL holds {u!r}, which is not an http(s) URL")
    return [_servers.setdefault(u, Server(u)) for u in dict.fromkeys(urls)]


def _get_json(url: str, token: str | None, timeout: float) -> dict[str, Any]:
    with urllib.request.urlopen(urllib.request.Request(url, headers=_headers(token)), timeout=timeout) as r:
        return json.loads(r.read().decode("utf-8"))


def _spawn(target: Callable[[], None]) -> None:
    threading.Thread(target=target, daemon=True).start()


def refresh_load(server: Server, token: str | None, now: float) -> None:
    """Starts a read of the server's admitted checks over its capacity (GET /v1/load) in its own thread, at most
    once a second and one at a time; batches are handed out on the last figure meanwhile."""
    with _lock:
        if server.load_probing or now - server.load_at < LOAD_TTL_S:
            return
        server.load_at = now
        server.load_probing = True

    def probe() -> None:
        try:
            said = _get_json(server.url + "/v1/load", token, PROBE_TIMEOUT_S)
            load = float(said["inFlight"]) / max(1.0, float(said["capacity"]))
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError, ValueError, KeyError, TypeError):
            load = 0.0  # an older server without the route: balance on in-flight batches alone
        with _lock:
            server.load = load
            server.load_probing = False

    _spawn(probe)


def healthy(server: Server, token: str | None) -> bool:
    try:
        return _get_json(server.url + "/health", token, PROBE_TIMEOUT_S).get("status") == "ok"
    except (urllib.error.URLError, TimeoutError, ConnectionError, OSError, ValueError, AttributeError):
        return False


def probe_health(server: Server, token: str | None, wake: queue.Queue[tuple[Any, ...]]) -> None:
    """Starts a /health probe of a server that is out in its own thread (one at a time): back in when it answers
    ok, else out again for the next back-off. `wake` hears when it is done."""
    with _lock:
        if server.probing:
            return
        server.probing = True

    def probe() -> None:
        ok = healthy(server, token)
        with _lock:
            server.probing = False
            if ok:
                server.out = False  # back in; its failures count on until it answers a batch
            else:
                server.take_out(server.last_error or "not healthy")
        wake.put(("health",))

    _spawn(probe)


def batch_deadline(items: int, timeout: float, late: int) -> float:
    """Seconds a batch of `items` answers may take before its server counts as not answering (see MIN_DEADLINE_S)."""
    if not _item_seconds:
        return timeout
    base = max(MIN_DEADLINE_S, DEADLINE_FACTOR * items * max(_item_seconds))
    return min(timeout, base * 2.0 ** late)


def _items_in(body: bytes) -> int:
    try:
        return max(1, len(json.loads(body.decode("utf-8"))["items"]))
    except (ValueError, KeyError, TypeError):
        return 1


def post_once(url: str, data: bytes, token: str | None, timeout: float) -> tuple[Any, ...]:
    """One request: ("ok", answer) | ("busy", retry-after s, detail) | ("refused", detail) | ("failed", detail)."""
    try:
        req = urllib.request.Request(url, data=data, headers=_headers(token), method="POST")
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return ("ok", json.loads(r.read().decode("utf-8")))
    except urllib.error.HTTPError as e:
        detail = e.read().decode("utf-8", "replace")[:500]
        if e.code == 429:
            return ("busy", _retry_after(e), detail)
        if e.code < 500:
            return ("refused", f"{e.code} {detail}")
        return ("failed", f"{e.code} {detail}")
    except (urllib.error.URLError, TimeoutError, ConnectionError, OSError, ValueError) as e:
        return ("failed", str(e))


def score_bodies(servers: list[Server], bodies: list[bytes], token: str | None) -> list[dict[str, Any]]:
    """Scores every body exactly once, spread over the servers by load.

    A body goes to the usable server with the fewest in-flight batches plus its reported load. A server that fails,
    does not answer within REQUEST_TIMEOUT_S, or holds a batch past its deadline (batch_deadline) while another
    server in service has answered within that deadline is taken out (back-off 1, 2, 4 … 10 s, then it must pass
    /health to come back) and its body goes back to the front of the queue, for any server. Each request runs in
    its own thread, so a request left behind by an overdue server does not hold up the call. An answer is kept only
    the first time a body is answered (a late answer from a server taken out counts if it comes first), so a body
    checked by a server that died before answering is simply checked again. Stops when every server has failed
    ATTEMPTS times in a row, on any refusal other than 429, or after MAX_WAIT_S of 429s."""
    results: list[dict[str, Any] | None] = [None] * len(bodies)
    items = [_items_in(b) for b in bodies]
    late = [0] * len(bodies)  # times each body was taken from an overdue server
    todo: deque[int] = deque(range(len(bodies)))
    waited_busy = 0.0
    per_server = max(1, int(os.environ.get("KIMINA_REWARD_CONCURRENCY") or PER_SERVER))
    timeout = float(os.environ.get("KIMINA_REWARD_TIMEOUT_S") or REQUEST_TIMEOUT_S)
    events: queue.Queue[tuple[Any, ...]] = queue.Queue()
    running: dict[int, tuple[int, Server, float]] = {}  # request id -> (body index, server, sent at)
    next_id = 0

    def due(now: float) -> list[Server]:
        return [s for s in servers if s.out and now >= s.out_until and s.in_flight == 0 and not s.probing]

    def post(rid: int, index: int, url: str) -> None:
        t0 = time.monotonic()
        outcome = post_once(url, bodies[index], token, timeout)
        events.put(("batch", rid, index, outcome, time.monotonic() - t0))

    def handle(event: tuple[Any, ...]) -> None:
        if event[0] != "batch":
            return
        _, rid, index, outcome, seconds = event
        entry = running.pop(rid, None)
        if entry is None:  # a request left behind when its server was taken out
            if outcome[0] == "ok" and results[index] is None:
                results[index] = outcome[1]
                if index in todo:
                    todo.remove(index)
            return
        server = entry[1]
        server.in_flight -= 1
        if outcome[0] == "ok":
            server.failures = 0
            server.answered_at = time.monotonic()
            _item_seconds.append(seconds / items[index])
            if results[index] is None:
                results[index] = outcome[1]
            return
        if outcome[0] == "refused":
            raise RewardServiceError(f"reward service refused the batch: {outcome[1]}")
        todo.appendleft(index)
        if outcome[0] == "busy":
            server.busy_until = time.monotonic() + outcome[1]
            server.last_error = f"429 {outcome[2]}"
        else:
            with _lock:
                server.take_out(outcome[1])

    try:
        # A health probe due now gets a short grace, so a server that is healthy again takes batches from the start.
        first = due(time.monotonic())
        for s in first:
            probe_health(s, token, events)
        grace_end = time.monotonic() + PROBE_GRACE_S
        while any(s.probing for s in first) and time.monotonic() < grace_end:
            try:
                handle(events.get(timeout=max(0.001, grace_end - time.monotonic())))
            except queue.Empty:
                break

        while todo or running:
            now = time.monotonic()
            for s in due(now):
                probe_health(s, token, events)
            for rid, (index, server, sent) in list(running.items()):
                limit = batch_deadline(items[index], timeout, late[index])
                # overdue: past its deadline, silent itself for that long, while another server answered since it was sent
                others_answer = any(o is not server and not o.out and o.answered_at >= sent for o in servers)
                silent = server.answered_at < now - limit
                if now - sent > limit and silent and others_answer:
                    del running[rid]  # its thread finishes on its own; a late answer is still taken if it comes first
                    server.in_flight -= 1
                    late[index] += 1
                    todo.appendleft(index)
                    with _lock:
                        server.take_out(f"no answer to a batch of {items[index]} in {now - sent:.1f} s"
                                        " while other servers answered")
            if all(s.failures >= ATTEMPTS for s in servers) and not running:
                names = ", ".join(f"{s.url} ({s.last_error})" for s in servers)
                raise RewardServiceError(f"reward service unreachable after {ATTEMPTS} attempts: {names}")
            while todo:
                usable = [s for s in servers if s.usable(now, per_server)]
                if not usable:
                    break
                index = todo.popleft()
                if results[index] is not None:
                    continue
                for s in usable:
                    refresh_load(s, token, now)  # in the background: the last figure serves meanwhile
                server = min(usable, key=lambda s: (s.in_flight + s.load, s.url))
                server.in_flight += 1
                running[next_id] = (index, server, time.monotonic())
                _spawn(lambda rid=next_id, index=index, url=server.url + "/v1/training/reward": post(rid, index, url))
                next_id += 1
            if not todo and not running:
                break
            if not running:
                wake = min(s.out_until if s.out else s.busy_until for s in servers)
                pause = max(0.05, min(10.0, wake - time.monotonic()))
            else:
                pause = 0.1  # the deadlines are checked this often
            try:
                handle(events.get(timeout=pause))
                while True:
                    handle(events.get_nowait())
            except queue.Empty:
                pass
            # no request out and no server usable, one of them answering 429: count the wait (a server taken out
            # beside a busy one must not make the wait endless)
            if (not running and any(s.busy_until > now for s in servers)
                    and all(s.out or s.busy_until > now for s in servers)):
                waited_busy += pause
                if waited_busy > MAX_WAIT_S:
                    raise RewardServiceError(f"reward service stayed busy (429) for {waited_busy:.0f} s")
    finally:
        for _, server, _ in running.values():  # left running when the call stops: no longer counted
            server.in_flight -= 1
    return [r for r in results if r is not None]


def _previous(extra: dict[str, Any]) -> list[str]:
    prompt = extra.get("prompt") or []
    return [m["content"] for m in prompt if isinstance(m, dict) and m.get("role") == "assistant"]


def reward(data_sources: list[str], solution_strs: list[str], ground_truths: list[Any], extra_infos: list[dict[str, Any]],
           return_dict: bool = False, **_: Any) -> list[Any]:
    spec = os.environ.get("KIMINA_REWARD_URL") or DEFAULT_URL
    if spec.startswith("__"):
        raise RewardServiceError("KIMINA_REWARD_URL is not set")
    servers = servers_from(spec)
    token = os.environ.get("KIMINA_API_TOKEN") or None
    mode = os.environ.get("KIMINA_VERDICT_MODE") or None
    if mode not in (None, "strict", "recipe"):
        raise RewardServiceError(f"KIMINA_VERDICT_MODE must be strict or recipe, got {mode!r}")
    items = []
    for text, extra in zip(solution_strs, extra_infos):
        previous = _previous(extra or {})
        items.append({"promptId": str((extra or {}).get("index", "")), "turn": len(previous) + 1,
                      "formalStatement": (extra or {})["formal_statement"], "previous": previous, "response": text})

    def envelope(chunk: list[dict[str, Any]]) -> bytes:
        body: dict[str, Any] = {"step": 0, "purpose": "train", "items": chunk}
        if mode:
            body["mode"] = mode
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    limit = body_limits(servers, token) - BODY_MARGIN
    bodies = batches(items, envelope, limit, max(1, int(os.environ.get("KIMINA_REWARD_BATCH_ITEMS") or MAX_ITEMS)))
    results: list[dict[str, Any]] = []
    for body, answer in zip(bodies, score_bodies(servers, bodies, token)):
        got = answer.get("results") if isinstance(answer, dict) else None
        sent = len(json.loads(body.decode("utf-8"))["items"])
        if not isinstance(got, list) or len(got) != sent:
            raise RewardServiceError(f"reward service answered {len(got) if isinstance(got, list) else 'no'} results for {sent} answers")
        results.extend(got)
    if not return_dict:
        return [float(r["score"]) for r in results]
    return [{
        "score": float(r["score"]),
        "acc": float(r["acc"]),
        "pred": r.get("code") or "",
        "tool_feedback": "valid proof found." if r["acc"] >= 1 else ("filtered proof." if r["feedback"] is None else r["feedback"]),
        "response": text,
        "format_error": r["formatErrorText"],
    } for r, text in zip(results, solution_strs)]



# The per-answer path (verl >= 0.7). An answer waits at most GATHER_QUIET_S for the next one to arrive and at most
# GATHER_MAX_WAIT_S in all before its gathering is scored; verl starts all answers of a call together, so a call
# is normally one gathering.
GATHER_QUIET_S = 0.05
GATHER_MAX_WAIT_S = 1.0


class _Gathering:
    """Answers waiting in one event loop to be scored together; scored one gathering at a time, in a thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.waiting: list[tuple[tuple[str, str, Any, dict[str, Any]], asyncio.Future[Any]]] = []
        self.first_at = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="kimina-reward")

    def add(self, args: tuple[str, str, Any, dict[str, Any]]) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = self.loop.create_future()
        now = self.loop.time()
        if not self.waiting:
            self.first_at = now
        self.waiting.append((args, future))
        if self.timer is not None:
            self.timer.cancel()
        delay = max(0.0, min(GATHER_QUIET_S, self.first_at + GATHER_MAX_WAIT_S - now))
        self.timer = self.loop.call_later(delay, self.flush)
        return future

    def flush(self) -> None:
        batch, self.waiting, self.timer = self.waiting, [], None
        if batch:
            self.loop.create_task(self.score(batch))

    async def score(self, batch: list[tuple[tuple[str, str, Any, dict[str, Any]], asyncio.Future[Any]]]) -> None:
        columns = list(zip(*(args for args, _ in batch)))
        try:
            results = await self.loop.run_in_executor(
                self.pool, lambda: reward(list(columns[0]), list(columns[1]), list(columns[2]), list(columns[3]),
                                          return_dict=True))
        except BaseException as e:  # every waiting answer hears why
            for _, future in batch:
                if not future.done():
                    future.set_exception(e if isinstance(e, Exception) else RewardServiceError(repr(e)))
            return
        for (_, future), result in zip(batch, results):
            if not future.done():
                future.set_result(result)


_gatherings: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Gathering] = weakref.WeakKeyDictionary()


async def compute_score(data_source: str, solution_str: str, ground_truth: Any = None,
                        extra_info: dict[str, Any] | None = None, **_: Any) -> dict[str, Any]:
    """One answer's reward as verl's reward loop asks for it (verl >= 0.7): the same dict `reward(...,
    return_dict=True)` gives, scored together with the answers that arrive with it."""
    loop = asyncio.get_running_loop()
    gathering = _gatherings.get(loop)
    if gathering is None:
        gathering = _gatherings[loop] = _Gathering(loop)
    return await gathering.add((data_source, solution_str, ground_truth, dict(extra_info or {})))
