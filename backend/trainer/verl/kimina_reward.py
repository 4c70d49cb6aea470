"""verl reward function that scores with a Kimina backend's reward service (format reward x Lean verdict).

Use with `reward_model.reward_manager=batch`, `custom_reward_function.path=kimina_reward.py`,
`custom_reward_function.name=reward`, `+custom_reward_function.reward_kwargs.return_dict=True`.
Signature as the Kimina recipe's reward (training-recipe.md §7.1). Standard library only, so the Ray
workers need nothing extra.

Environment: KIMINA_REWARD_URL (the backend root), KIMINA_API_TOKEN (optional), KIMINA_VERDICT_MODE
(`strict`, the default, or `recipe`: kimina-client's rule, as the published runs were scored).

Requests are cut by size, not only by count: Kimina answers run to tens of kilobytes, and the backend refuses
bodies over its limit (413). The limit is read from the backend's /health (`bodyLimitBytes`) when it says,
else DEFAULT_BODY_LIMIT (the backend's default, backend/api/body.ts); each request stays BODY_MARGIN below it.
A 429 (Lean queue full) is retried after its Retry-After; connection errors and 5xx with back-off; any other
answer stops with the status and the backend's message.
"""
from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from typing import Any, Callable

DEFAULT_URL = "__KIMINA_REWARD_URL__"
DEFAULT_BODY_LIMIT = 4 * 1024 * 1024
BODY_MARGIN = 64 * 1024
MAX_ITEMS = 64
ATTEMPTS = 4
MAX_WAIT_S = 15 * 60

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


def post(url: str, data: bytes, token: str | None, sleep: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    delay = 1.0
    failures = 0
    waited = 0.0
    while True:
        try:
            req = urllib.request.Request(url, data=data, headers=_headers(token), method="POST")
            with urllib.request.urlopen(req, timeout=900) as r:
                return json.loads(r.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            detail = e.read().decode("utf-8", "replace")[:500]
            if e.code == 429:
                wait = _retry_after(e)
                waited += wait
                if waited > MAX_WAIT_S:
                    raise RewardServiceError(f"reward service at {url} stayed busy (429) for {waited:.0f} s: {detail}") from None
                sleep(wait)
                continue
            if e.code < 500:
                raise RewardServiceError(f"reward service refused the batch: {e.code} {detail}") from None
            failures += 1
            if failures >= ATTEMPTS:
                raise RewardServiceError(f"reward service at {url} failed {ATTEMPTS} times: {e.code} {detail}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
            failures += 1
            if failures >= ATTEMPTS:
                raise RewardServiceError(f"reward service at {url} unreachable after {ATTEMPTS} attempts: {e}") from None
        sleep(delay)
        delay = min(delay * 2, 10.0)


def _previous(extra: dict[str, Any]) -> list[str]:
    prompt = extra.get("prompt") or []
    return [m["content"] for m in prompt if isinstance(m, dict) and m.get("role") == "assistant"]


def reward(data_sources: list[str], solution_strs: list[str], ground_truths: list[Any], extra_infos: list[dict[str, Any]],
           return_dict: bool = False, **_: Any) -> list[Any]:
    base = (os.environ.get("KIMINA_REWARD_URL") or DEFAULT_URL).rstrip("/")
    if base.startswith("__"):
        raise RewardServiceError("KIMINA_REWARD_URL is not set")
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

    results: list[dict[str, Any]] = []
    for data in batches(items, envelope, body_limit(base, token) - BODY_MARGIN):
        results.extend(post(base + "/v1/training/reward", data, token)["results"])
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
