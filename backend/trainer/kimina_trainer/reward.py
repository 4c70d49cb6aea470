"""The TRL reward function: one batched call to the backend's reward service per generation batch."""
from __future__ import annotations

from typing import Any

from .backend_client import BackendClient
from .chat import completion_text, previous_answers, prompt_tokens
from .config import RunConfig
from .fix_cache import FixCache


class BackendReward:
    """score = format reward x strict Lean verdict, computed by the backend; failed turn-1 answers feed the fix cache."""

    __name__ = "kimina"

    def __init__(self, client: BackendClient, cache: FixCache, cfg: RunConfig, tokenizer: Any):
        self.client = client
        self.cache = cache
        self.cfg = cfg
        self.tokenizer = tokenizer

    def __call__(self, prompts: list[Any], completions: list[Any], completion_ids: list[Any] | None = None, **kw: Any) -> list[float]:
        state = kw.get("trainer_state")
        step = (state.global_step if state is not None else 0) + 1
        turns = kw.get("turn") or [1] * len(prompts)
        statements = kw["formal_statement"]
        ids = kw.get("prompt_id") or [str(i) for i in range(len(prompts))]
        texts = [completion_text(c) for c in completions]
        items = [{
            "promptId": str(ids[i]),
            "turn": int(turns[i]),
            "formalStatement": statements[i],
            "previous": previous_answers(prompts[i]),
            "response": texts[i],
        } for i in range(len(prompts))]
        results = self.client.reward(step, "train", items)
        for i, result in enumerate(results):
            row = {"prompt": prompts[i], "formal_statement": statements[i], "prompt_id": str(ids[i]), "turn": int(turns[i])}
            self.cache.offer(row, texts[i], result, self.cfg.max_feedback_chars,
                             lambda conv: prompt_tokens(self.tokenizer, conv), self.cfg.max_prompt_length)
        return [float(r["score"]) for r in results]
