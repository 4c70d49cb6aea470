"""verl reward function that scores with a Kimina backend's reward service (format reward x strict Lean verdict).

Use with `reward_model.reward_manager=batch`, `custom_reward_function.path=kimina_reward.py`,
`custom_reward_function.name=reward`, `+custom_reward_function.reward_kwargs.return_dict=True`.
Signature as the Kimina recipe's reward (training-recipe.md §7.1). Standard library only, so the Ray
workers need nothing extra. Environment: KIMINA_REWARD_URL (the backend root), KIMINA_API_TOKEN (optional).
"""
from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from typing import Any

DEFAULT_URL = "__KIMINA_REWARD_URL__"
CHUNK = 64
ATTEMPTS = 4


def _post(url: str, body: dict[str, Any], token: str | None) -> dict[str, Any]:
    data = json.dumps(body).encode("utf-8")
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    delay = 1.0
    for attempt in range(ATTEMPTS):
        try:
            req = urllib.request.Request(url, data=data, headers=headers, method="POST")
            with urllib.request.urlopen(req, timeout=900) as r:
                return json.loads(r.read().decode("utf-8"))
        except (urllib.error.URLError, TimeoutError) as e:
            if isinstance(e, urllib.error.HTTPError) and e.code < 500:
                raise RuntimeError(f"reward service refused the batch: {e.code} {e.read().decode('utf-8', 'replace')[:500]}")
            if attempt == ATTEMPTS - 1:
                raise RuntimeError(f"reward service at {url} unreachable after {ATTEMPTS} attempts: {e}")
            time.sleep(delay)
            delay = min(delay * 2, 10.0)
    raise AssertionError("unreachable")


def _previous(extra: dict[str, Any]) -> list[str]:
    prompt = extra.get("prompt") or []
    return [m["content"] for m in prompt if isinstance(m, dict) and m.get("role") == "assistant"]


def reward(data_sources: list[str], solution_strs: list[str], ground_truths: list[Any], extra_infos: list[dict[str, Any]],
           return_dict: bool = False, **_: Any) -> list[Any]:
    base = os.environ.get("KIMINA_REWARD_URL") or DEFAULT_URL
    if base.startswith("__"):
        raise RuntimeError("KIMINA_REWARD_URL is not set")
    token = os.environ.get("KIMINA_API_TOKEN") or None
    items = []
    for text, extra in zip(solution_strs, extra_infos):
        previous = _previous(extra or {})
        items.append({"promptId": str((extra or {}).get("index", "")), "turn": len(previous) + 1,
                      "formalStatement": (extra or {})["formal_statement"], "previous": previous, "response": text})
    results: list[dict[str, Any]] = []
    for i in range(0, len(items), CHUNK):
        out = _post(base.rstrip("/") + "/v1/training/reward", {"step": 0, "purpose": "train", "items": items[i:i + CHUNK]}, token)
        results.extend(out["results"])
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
