"""Held-out evaluation: k samples per prompt, one fix turn for failures, pass@k before and after the fix turn.

With N = k samples per prompt, pass@k is simply "any sample correct" (the unbiased estimator equals it), so
the numbers are comparable with the published pass@k, unlike verl's bootstrap best@k.
"""
from __future__ import annotations

import json
from typing import Any

import torch

from .backend_client import BackendClient
from .chat import render


def load_rows(path: str) -> list[dict[str, Any]]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
    return rows


@torch.no_grad()
def sample(model: Any, tokenizer: Any, conversations: list[list[dict[str, str]]], n: int, max_new_tokens: int,
           temperature: float, top_p: float, batch_size: int = 8) -> list[list[str]]:
    """n answers per conversation, generated in left-padded batches of up to `batch_size` sequences."""
    out: list[list[str]] = []
    per_batch = max(1, batch_size // n)
    for i in range(0, len(conversations), per_batch):
        texts = [render(tokenizer, c) for c in conversations[i:i + per_batch]]
        enc = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(model.device)
        gen = model.generate(**enc, do_sample=True, temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens,
                             num_return_sequences=n, pad_token_id=tokenizer.pad_token_id)
        decoded = tokenizer.batch_decode(gen[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
        out.extend(decoded[j * n:(j + 1) * n] for j in range(len(texts)))
    return out


def evaluate(model: Any, tokenizer: Any, client: BackendClient, rows: list[dict[str, Any]], step: int, k: int,
             max_new_tokens: int, temperature: float, top_p: float, max_feedback_chars: int) -> dict[str, float]:
    was_training = model.training
    model.eval()
    try:
        first: list[tuple[dict[str, Any], str]] = []
        answers = sample(model, tokenizer, [row["prompt"] for row in rows], k, max_new_tokens, temperature, top_p)
        for row, texts in zip(rows, answers):
            first.extend((row, text) for text in texts)
        results = client.reward(step, "eval", [
            {"promptId": r["prompt_id"], "turn": 1, "formalStatement": r["formal_statement"], "previous": [], "response": t}
            for r, t in first])
        acc1 = [float(x["acc"]) for x in results]
        score1 = [float(x["score"]) for x in results]
        acc2 = list(acc1)
        fixes = [(i, r, t, res["feedback"]) for i, ((r, t), res) in enumerate(zip(first, results))
                 if res["acc"] < 1 and res.get("feedback") is not None and len(res["feedback"]) <= max_feedback_chars]
        if fixes:
            convs = [list(r["prompt"]) + [{"role": "assistant", "content": t}, {"role": "user", "content": fb}] for _, r, t, fb in fixes]
            answers2 = sample(model, tokenizer, convs, 1, max_new_tokens, temperature, top_p)
            second = [(i, r, t, a[0]) for (i, r, t, _), a in zip(fixes, answers2)]
            res2 = client.reward(step, "eval", [
                {"promptId": r["prompt_id"], "turn": 2, "formalStatement": r["formal_statement"], "previous": [t], "response": t2}
                for _, r, t, t2 in second])
            for (i, *_), res in zip(second, res2):
                acc2[i] = float(res["acc"])
        n = len(rows)

        def pass_at_k(values: list[float]) -> float:
            return sum(max(values[p * k:(p + 1) * k]) for p in range(n)) / max(n, 1)

        return {
            f"eval/acc_turn_1/mean@{k}": sum(acc1) / max(len(acc1), 1),
            f"eval/acc_turn_1/pass@{k}": pass_at_k(acc1),
            f"eval/acc_turn_2/pass@{k}": pass_at_k(acc2),
            f"eval/score/mean@{k}": sum(score1) / max(len(score1), 1),
            "eval/prompts": float(n),
        }
    finally:
        if was_training:
            model.train()
