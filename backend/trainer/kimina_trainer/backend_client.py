"""HTTP client for the backend's training routes: reward service, metrics, events. Retries transient failures."""
from __future__ import annotations

import json
import time
from typing import Any

import requests


class BackendError(RuntimeError):
    pass


MAX_CHUNK_BYTES = 2_500_000
MAX_CHUNK_ITEMS = 256


def chunks(items: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    size = 0
    for item in items:
        n = len(json.dumps(item, ensure_ascii=False).encode("utf-8"))
        if n > MAX_CHUNK_BYTES:
            raise BackendError(f"one answer is {n} bytes, over the {MAX_CHUNK_BYTES}-byte request budget")
        if current and (size + n > MAX_CHUNK_BYTES or len(current) >= MAX_CHUNK_ITEMS):
            out.append(current)
            current, size = [], 0
        current.append(item)
        size += n
    if current:
        out.append(current)
    return out


class BackendClient:
    def __init__(self, base_url: str, run_id: str, token: str | None = None, timeout: float = 900.0):
        self.base = base_url.rstrip("/") + f"/v1/training/runs/{run_id}"
        self.session = requests.Session()
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"
        self.timeout = timeout

    def _post(self, path: str, body: dict[str, Any], attempts: int = 4) -> Any:
        delay = 1.0
        for attempt in range(attempts):
            try:
                r = self.session.post(self.base + path, json=body, timeout=self.timeout)
                if r.status_code < 500:
                    if r.status_code >= 400:
                        raise BackendError(f"POST {path}: {r.status_code} {r.text[:500]}")
                    return r.json() if r.content else None
                err: Exception = BackendError(f"POST {path}: {r.status_code} {r.text[:500]}")
            except requests.RequestException as e:
                err = e
            if attempt == attempts - 1:
                raise BackendError(f"POST {path} failed after {attempts} attempts: {err}")
            time.sleep(delay)
            delay = min(delay * 2, 10.0)
        raise AssertionError("unreachable")

    def reward(self, step: int, purpose: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Scores a batch. Each item: promptId, turn, formalStatement, previous (earlier assistant texts), response.

        Sent in chunks that stay under the backend's request-size limit; results keep the items' order."""
        results: list[dict[str, Any]] = []
        for chunk in chunks(items):
            out = self._post("/reward", {"step": step, "purpose": purpose, "items": chunk})
            if len(out["results"]) != len(chunk):
                raise BackendError(f"reward service answered {len(out['results'])} results for {len(chunk)} items")
            results.extend(out["results"])
        return results

    def metrics(self, step: int, metrics: dict[str, float], kind: str = "train") -> None:
        self._post("/metrics", {"step": step, "kind": kind, "metrics": metrics})

    def event(self, kind: str, **data: Any) -> None:
        self._post("/events", {"kind": kind, **data})
