"""Trainer callbacks: per-step metrics to the backend, graceful stop on SIGTERM, held-out evaluation, fix-cache checkpoints."""
from __future__ import annotations

import math
import os
import time
from typing import Any

import torch
from transformers import TrainerCallback

from .backend_client import BackendClient
from .config import RunConfig
from .evaluation import evaluate
from .fix_cache import FixCache

# TRL log keys forwarded as they are (training-recipe.md §10.3); everything numeric is kept, these are just documented.
TRL_KEYS = ("reward", "reward_std", "frac_reward_zero_std", "completions/mean_length", "completions/max_length",
            "completions/clipped_ratio", "policy_loss", "entropy", "kl", "grad_norm", "loss", "learning_rate",
            "clip_ratio/region_mean", "num_tokens")


class StopFlag:
    """Set by the SIGTERM handler; the step in flight finishes, a checkpoint is written, then training stops."""

    def __init__(self) -> None:
        self.requested = False


class ReportingCallback(TrainerCallback):
    def __init__(self, client: BackendClient, cache: FixCache, stop: StopFlag):
        self.client = client
        self.cache = cache
        self.stop = stop
        self.step_started = time.perf_counter()
        self.tokens_before = 0.0

    def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self.tokens_before = float(state.num_input_tokens_seen or 0)
        self.client.event("started", step=state.global_step, maxSteps=state.max_steps)

    def on_step_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self.step_started = time.perf_counter()
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()

    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        if self.stop.requested:
            control.should_save = True
            control.should_training_stop = True

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
        if not logs or any(k.startswith("eval_") for k in logs) or "train_runtime" in logs:
            return
        elapsed = time.perf_counter() - self.step_started
        metrics = {k: float(v) for k, v in logs.items() if isinstance(v, (int, float)) and not math.isnan(v)}
        tokens = metrics.get("num_tokens")
        if tokens is not None:
            metrics["perf/tokens_per_s"] = (tokens - self.tokens_before) / max(elapsed, 1e-9)
            self.tokens_before = tokens
        metrics["perf/time_per_step"] = elapsed
        if torch.cuda.is_available():
            metrics["perf/max_memory_allocated_gb"] = torch.cuda.max_memory_allocated() / 2**30
            metrics["perf/max_memory_reserved_gb"] = torch.cuda.max_memory_reserved() / 2**30
        metrics.update(self.cache.take_counters())
        metrics["multiturn/cache_size"] = float(len(self.cache))
        self.client.metrics(state.global_step, metrics)


class CheckpointCallback(TrainerCallback):
    """Saves the fix cache beside each checkpoint (the recipe loses it on resume) and tells the backend."""

    def __init__(self, client: BackendClient, cache: FixCache):
        self.client = client
        self.cache = cache

    def on_save(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        path = os.path.join(args.output_dir, f"checkpoint-{state.global_step}")
        if os.path.isdir(path):
            self.cache.save(os.path.join(path, "fix_cache.json"))
        self.client.event("checkpoint", step=state.global_step, path=path)


class EvalCallback(TrainerCallback):
    """Held-out pass@k before training (the base model) and every eval_steps steps."""

    def __init__(self, client: BackendClient, cfg: RunConfig, rows: list[dict[str, Any]], tokenizer: Any):
        self.client = client
        self.cfg = cfg
        self.rows = rows
        self.tokenizer = tokenizer
        self.last_step = -1

    def run(self, model: Any, step: int) -> None:
        if not self.rows or step == self.last_step:
            return
        self.last_step = step
        metrics = evaluate(model, self.tokenizer, self.client, self.rows, step, self.cfg.eval_samples,
                           self.cfg.max_completion_length, self.cfg.temperature, self.cfg.eval_top_p,
                           self.cfg.max_feedback_chars)
        self.client.metrics(step, metrics, kind="eval")

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
        if state.global_step == 0 and model is not None:
            self.run(model, 0)

    def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
        last = state.global_step >= state.max_steps
        if model is not None and self.cfg.eval_steps > 0 and (state.global_step % self.cfg.eval_steps == 0 or last):
            self.run(model, state.global_step)
