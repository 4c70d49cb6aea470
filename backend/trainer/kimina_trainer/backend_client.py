"""HTTP client for the backend's training routes: reward service, metrics, events.

Bodies are serialised once (`encode`) and sent as those exact bytes, so the reward chunker measures what goes on the
wire: UTF-8 without \\u escapes (`ensure_ascii=False`; with escapes CJK thinking grows 1.3-1.8x). Transient failures
(5xx, connection errors) are retried a few times; 429 waits for the server's Retry-After; any other 4xx stops.
"""
from __future__ import annotations

import json
import time
from typing import Any

import requests


class BackendError(RuntimeError):
    pass


# The backend refuses bodies over 4 MiB (4,194,304 bytes) and reward requests over 64 answers are what the verl
# recipe sends; a request stays below both with room to spare.
MAX_BODY_BYTES = 3_500_000
MAX_CHUNK_ITEMS = 64


def encode(body: Any) -> bytes:
    """The exact bytes sent for `body`."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def chunks(items: list[dict[str, Any]], envelope: dict[str, Any] | None = None,
           max_bytes: int = MAX_BODY_BYTES, max_items: int = MAX_CHUNK_ITEMS) -> list[list[dict[str, Any]]]:
    """Splits items so that each `{**envelope, "items": chunk}`, encoded, fits in `max_bytes` (exactly measured)."""
    base = len(encode({**(envelope or {}), "items": []}))
    out: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    size = base
    for item in items:
        n = len(encode(item))
        if base + n > max_bytes:
            raise BackendError(f"one answer is {n} bytes, over the {max_bytes - base}-byte request budget")
        comma = 1 if current else 0
        if current and (size + comma + n > max_bytes or len(current) >= max_items):
            out.append(current)
            current, size, comma = [], base, 0
        current.append(item)
        size += comma + n
    if current:
        out.append(current)
    return out


class BackendClient:
    def __init__(self, base_url: str, run_id: str, token: str | None = None, timeout: float = 900.0,
                 launch_id: str | None = None, max_queue_wait: float = 1800.0):
        self.base = base_url.rstrip("/") + f"/v1/training/runs/{run_id}"
        self.session = requests.Session()
        self.session.headers["Content-Type"] = "application/json"
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"
        if launch_id:
            self.session.headers["X-Kimina-Launch"] = launch_id
        self.timeout = timeout
        self.max_queue_wait = max_queue_wait

    def _post(self, path: str, body: dict[str, Any], attempts: int = 4) -> Any:
        data = encode(body)
        delay = 1.0
        waited = 0.0
        attempt = 0
        while True:
            try:
                r = self.session.post(self.base + path, data=data, timeout=self.timeout)
                if r.status_code == 429 and waited < self.max_queue_wait:
                    pause = min(60.0, max(1.0, float(r.headers.get("Retry-After") or 1)))
                    time.sleep(pause)
                    waited += pause
                    continue  # the verifier is busy: not a failure
                if r.status_code < 500:
                    if r.status_code >= 400:
                        raise BackendError(f"POST {path}: {r.status_code} {r.text[:500]}")
                    return r.json() if r.content else None
                err: Exception = BackendError(f"POST {path}: {r.status_code} {r.text[:500]}")
            except requests.RequestException as e:
                err = e
            attempt += 1
            if attempt >= attempts:
                raise BackendError(f"POST {path} failed after {attempts} attempts: {err}")
            time.sleep(delay)
            delay = min(delay * 2, 10.0)

    def reward(self, step: int, purpose: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Scores a batch. Each item: promptId, turn, formalStatement, previous (earlier assistant texts), response.

        Sent in chunks that stay under the backend's request-size and item limits; results keep the items' order."""
        results: list[dict[str, Any]] = []
        envelope = {"step": step, "purpose": purpose}
        for chunk in chunks(items, envelope):
            out = self._post("/reward", {**envelope, "items": chunk})
            if len(out["results"]) != len(chunk):
                raise BackendError(f"reward service answered {len(out['results'])} results for {len(chunk)} items")
            results.extend(out["results"])
        return results

    def metrics(self, step: int, metrics: dict[str, float], kind: str = "train") -> None:
        self._post("/metrics", {"step": step, "kind": kind, "metrics": metrics})

    def event(self, kind: str, **data: Any) -> None:
        self._post("/events", {"kind": kind, **data})
