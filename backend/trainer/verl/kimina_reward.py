"""verl reward function that scores with a Kimina backend's reward service (format reward x Lean verdict).

Use with `reward_model.reward_manager=batch`, `custom_reward_function.path=kimina_reward.py`,
`custom_reward_function.name=reward`, `+custom_reward_function.reward_kwargs.return_dict=True`.
Signature as the Kimina recipe's reward (training-recipe.md §7.1). Standard library only, so the Ray
workers need nothing extra.

Environment: KIMINA_REWARD_URL (a backend root, or several separated by commas: one `kimina serve` per node of a
Ray cluster), KIMINA_API_TOKEN (optional, the same for every server), KIMINA_VERDICT_MODE (`strict`, the default,
or `recipe`: kimina-client's rule, as the published runs were scored), KIMINA_REWARD_CONCURRENCY (batches in
flight per server, 2), KIMINA_REWARD_TIMEOUT_S (900), KIMINA_REWARD_BATCH_ITEMS (answers per request, 64).

Several servers: batches are spread by load (in-flight batches plus the server's own figure from the
authenticated GET /v1/load); a server that fails or stops answering is taken out, its batches go to the others,
and it comes back once /health answers again. Every answer gets exactly one reward, in order.

Requests are cut by size, not only by count: Kimina answers run to tens of kilobytes, and the backend refuses
bodies over its limit (413). The limit is read from the backend's /health (`bodyLimitBytes`) when it says,
else DEFAULT_BODY_LIMIT (the backend's default, backend/api/body.ts); each request stays BODY_MARGIN below it.
A 429 (Lean queue full) is retried after its Retry-After; connection errors and 5xx with back-off, on another
server when there is one; any other answer stops with the status and the backend's message.
"""
from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable

DEFAULT_URL = "__KIMINA_REWARD_URL__"
DEFAULT_BODY_LIMIT = 4 * 1024 * 1024
BODY_MARGIN = 64 * 1024
MAX_ITEMS = 64
ATTEMPTS = 4
MAX_WAIT_S = 15 * 60
PER_SERVER = 2  # batches in flight per server (KIMINA_REWARD_CONCURRENCY)
REQUEST_TIMEOUT_S = 900.0  # a server that has not answered a batch by then is taken out (KIMINA_REWARD_TIMEOUT_S)
LOAD_TTL_S = 1.0

_limits: dict[str, int] = {}


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
            with urllib.request.urlopen(urllib.request.Request(base + "/health", headers=_headers(token)), timeout=30) as r:
                said = json.loads(r.read().decode("utf-8")).get("bodyLimitBytes")
                if isinstance(said, int) and said > BODY_MARGIN:
                    limit = said
        except (urllib.error.URLError, TimeoutError, ValueError, AttributeError):
            pass
        _limits[base] = limit
    return _limits[base]


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


def refresh_load(server: Server, token: str | None, now: float) -> None:
    """Reads the server's admitted checks over its capacity from GET /v1/load, at most once a second."""
    if now - server.load_at < LOAD_TTL_S:
        return
    server.load_at = now
    try:
        said = _get_json(server.url + "/v1/load", token, 5)
        server.load = float(said["inFlight"]) / max(1.0, float(said["capacity"]))
    except (urllib.error.URLError, TimeoutError, ConnectionError, ValueError, KeyError, TypeError):
        server.load = 0.0  # an older server without the route: balance on in-flight batches alone


def healthy(server: Server, token: str | None) -> bool:
    try:
        return _get_json(server.url + "/health", token, 5).get("status") == "ok"
    except (urllib.error.URLError, TimeoutError, ConnectionError, ValueError, AttributeError):
        return False


def post_once(url: str, data: bytes, token: str | None, timeout: float) -> tuple[str, Any]:
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


def score_bodies(servers: list[Server], bodies: list[bytes], token: str | None,
                 sleep: Callable[[float], None] = time.sleep) -> list[dict[str, Any]]:
    """Scores every body exactly once, spread over the servers by load.

    A body goes to the usable server with the fewest in-flight batches plus its reported load. A server that fails
    or does not answer within REQUEST_TIMEOUT_S is taken out (back-off 1, 2, 4 … 10 s, then it must pass /health to
    come back) and its body goes back to the front of the queue, for any server. An answer is kept only the first
    time a body is answered, so a body checked by a server that died before answering is simply checked again.
    Stops when every server has failed ATTEMPTS times in a row, on any refusal other than 429, or after MAX_WAIT_S
    of 429s."""
    results: list[dict[str, Any] | None] = [None] * len(bodies)
    queue: deque[int] = deque(range(len(bodies)))
    waited_busy = 0.0
    per_server = max(1, int(os.environ.get("KIMINA_REWARD_CONCURRENCY") or PER_SERVER))
    timeout = float(os.environ.get("KIMINA_REWARD_TIMEOUT_S") or REQUEST_TIMEOUT_S)
    with ThreadPoolExecutor(max_workers=per_server * len(servers)) as pool:
        running: dict[Future[tuple[str, Any]], tuple[int, Server]] = {}
        while queue or running:
            now = time.monotonic()
            for server in servers:
                if server.out and now >= server.out_until and server.in_flight == 0:
                    if healthy(server, token):
                        server.out = False  # back in; its failures count on until it answers a batch
                    else:
                        server.take_out(server.last_error or "not healthy")
            if all(s.failures >= ATTEMPTS for s in servers) and not running:
                names = ", ".join(f"{s.url} ({s.last_error})" for s in servers)
                raise RewardServiceError(f"reward service unreachable after {ATTEMPTS} attempts: {names}")
            while queue:
                usable = [s for s in servers if s.usable(now, per_server)]
                if not usable:
                    break
                for s in usable:
                    refresh_load(s, token, now)
                server = min(usable, key=lambda s: (s.in_flight + s.load, s.url))
                index = queue.popleft()
                server.in_flight += 1
                fut = pool.submit(post_once, server.url + "/v1/training/reward", bodies[index], token, timeout)
                running[fut] = (index, server)
            if not running:
                wake = min(s.out_until if s.out else s.busy_until for s in servers)
                pause = max(0.05, min(10.0, wake - time.monotonic()))
                sleep(pause)
                if all(s.busy_until > now for s in servers):
                    waited_busy += pause
                    if waited_busy > MAX_WAIT_S:
                        raise RewardServiceError(f"reward service stayed busy (429) for {waited_busy:.0f} s")
                continue
            done, _ = wait(list(running), timeout=1.0, return_when=FIRST_COMPLETED)
            for fut in done:
                index, server = running.pop(fut)
                server.in_flight -= 1
                outcome = fut.result()
                if outcome[0] == "ok":
                    server.failures = 0
                    if results[index] is None:
                        results[index] = outcome[1]
                    continue
                if outcome[0] == "refused":
                    raise RewardServiceError(f"reward service refused the batch: {outcome[1]}")
                queue.appendleft(index)
                if outcome[0] == "busy":
                    server.busy_until = time.monotonic() + outcome[1]
                    server.last_error = f"429 {outcome[2]}"
                else:
                    server.take_out(outcome[1])
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

    limit = min(body_limit(s.url, token) for s in servers) - BODY_MARGIN
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
