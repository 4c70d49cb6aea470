"""The error-fix cache (training-recipe.md §4): failed first-turn answers become fix prompts.

A fix prompt is [system, user, assistant(turn-1 answer), user(Lean feedback)]. Once the cache holds any,
each prompt group of a generation batch is replaced by a cached fix prompt with probability
`sampling_rate`, drawn as cache[index mod len(cache)] like the recipe. Replacement is per group, so all
samples of a group answer the same conversation and form one GRPO group.
"""
from __future__ import annotations

import json
import os
import random
from collections import Counter
from collections.abc import Callable
from typing import Any


class FixCache:
    def __init__(self, capacity: int = 5000, sampling_rate: float = 0.5, seed: int = 0):
        self.capacity = capacity
        self.sampling_rate = sampling_rate
        self.seed = seed
        self.entries: list[dict[str, Any]] = []
        self.counters: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self.entries)

    def add(self, row: dict[str, Any]) -> None:
        self.entries.append(row)
        if len(self.entries) > self.capacity:
            del self.entries[: len(self.entries) - self.capacity]

    def substitute(self, rows: list[dict[str, Any]], group_size: int, step: int) -> list[dict[str, Any]]:
        """Returns the batch with whole groups swapped for fix prompts. Deterministic for (seed, step)."""
        if not self.entries or self.sampling_rate <= 0:
            return rows
        if len(rows) % group_size != 0:
            raise ValueError(f"batch of {len(rows)} rows is not made of groups of {group_size}")
        rng = random.Random(f"{self.seed}:{step}")
        out: list[dict[str, Any]] = []
        for g in range(0, len(rows), group_size):
            if rng.random() < self.sampling_rate:
                fix = self.entries[rng.randrange(1 << 30) % len(self.entries)]
                out.extend(dict(fix) for _ in range(group_size))
            else:
                out.extend(rows[g : g + group_size])
        return out

    def offer(self, row: dict[str, Any], response: str, result: dict[str, Any], max_feedback_chars: int,
              prompt_tokens: Callable[[list[dict[str, str]]], int], max_prompt_tokens: int) -> None:
        """Applies the recipe's filters (kimina-format.md §6.3) in order and caches a fix prompt when all pass."""
        turn = int(row.get("turn", 1))
        prefix = f"multiturn/turn_{turn}/"
        if result.get("acc", 0) >= 1:
            self.counters[prefix + "valid"] += 1
            return
        feedback = result.get("feedback")
        if feedback is None:
            self.counters[prefix + "filtered"] += 1
            return
        if len(feedback) > max_feedback_chars:
            self.counters[prefix + "feedback_too_long"] += 1
            return
        if turn >= 2:
            self.counters[prefix + "exceed_max_turn"] += 1
            return
        conversation = list(row["prompt"]) + [
            {"role": "assistant", "content": response},
            {"role": "user", "content": feedback},
        ]
        if prompt_tokens(conversation) > max_prompt_tokens:
            self.counters[prefix + "max_prompt_token_len_exceeded"] += 1
            return
        self.counters[prefix + "added_in_database"] += 1
        self.add({**row, "prompt": conversation, "turn": 2})

    def add_seeds(self, rows: list[dict[str, Any]], max_feedback_chars: int, prompt_tokens: Callable[[list[dict[str, str]]], int],
             max_prompt_tokens: int) -> Counter[str]:
        """Harvested fix prompts [system, user, assistant, user(feedback)] under the recipe's filters (feedback cap in
        code points, prompt budget in tokens); returns how many were kept and dropped, by reason."""
        counts: Counter[str] = Counter()
        for row in rows:
            prompt = row["prompt"]
            if len(prompt[-1]["content"]) > max_feedback_chars:
                counts["feedback_too_long"] += 1
            elif prompt_tokens(prompt) > max_prompt_tokens:
                counts["max_prompt_token_len_exceeded"] += 1
            else:
                counts["added_in_database"] += 1
                self.add({"prompt": prompt, "formal_statement": row["formal_statement"], "prompt_id": str(row["prompt_id"]), "turn": 2})
        return counts

    def take_counters(self) -> dict[str, float]:
        out = {k: float(v) for k, v in self.counters.items()}
        self.counters.clear()
        return out

    def save(self, path: str) -> None:
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.entries, f)
        os.replace(tmp, path)

    def load(self, path: str) -> None:
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                self.entries = json.load(f)[-self.capacity :]
