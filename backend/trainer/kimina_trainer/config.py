"""The run configuration the backend writes for one trainer process (JSON), with defaults and validation."""
from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any


@dataclass
class LoraSettings:
    r: int
    alpha: int
    dropout: float
    target_modules: list[str]


@dataclass
class RunConfig:
    """Every field is required: the backend (backend/training/trainerProcess.ts `trainerConfig`, from the preset)
    is the one source of the values, so the trainer has no defaults of its own that could drift from it."""
    run_id: str
    backend_url: str
    model_path: str
    output_dir: str
    train_file: str
    held_out_file: str | None
    fix_seed_file: str | None  # error-fix prompts harvested from the prover's history
    token: str | None
    # Which launch of the run this process is; the backend refuses posts from any other (a stale trainer)
    launch_id: str | None
    # The backend's pid: the trainer dies with it (lifeline.py)
    backend_pid: int | None
    learning_rate: float
    num_generations: int
    prompts_per_step: int
    per_device_batch: int
    max_completion_length: int
    max_prompt_length: int
    temperature: float
    top_p: float
    epsilon: float
    epsilon_high: float
    beta: float
    max_steps: int
    save_steps: int
    eval_steps: int
    eval_samples: int
    eval_top_p: float
    seed: int
    lora: LoraSettings | None
    use_vllm: str  # "auto" | "on" | "off"
    vllm_gpu_memory_utilization: float
    fix_sampling_rate: float
    fix_cache_size: int
    max_feedback_chars: int
    gradient_checkpointing: bool
    use_cpu: bool
    final_export: bool

    @property
    def generation_batch_size(self) -> int:
        return self.prompts_per_step * self.num_generations


def load_config(path: str) -> RunConfig:
    with open(path, encoding="utf-8") as f:
        raw: dict[str, Any] = json.load(f)
    known = {f.name for f in fields(RunConfig)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"unknown run config keys: {', '.join(unknown)}")
    missing = sorted(known - set(raw))
    if missing:
        raise ValueError(f"missing run config keys (the backend sends every one): {', '.join(missing)}")
    lora = raw.pop("lora")
    cfg = RunConfig(**raw, lora=LoraSettings(**lora) if isinstance(lora, dict) else None)
    validate(cfg)
    return cfg


def validate(cfg: RunConfig) -> None:
    if cfg.num_generations < 2:
        raise ValueError("num_generations must be at least 2 (GRPO compares answers within a group)")
    if cfg.generation_batch_size % cfg.per_device_batch != 0:
        raise ValueError(
            f"prompts_per_step x num_generations ({cfg.generation_batch_size}) must be a multiple of per_device_batch ({cfg.per_device_batch})")
    if cfg.per_device_batch % cfg.num_generations != 0 and cfg.num_generations % cfg.per_device_batch != 0:
        raise ValueError("per_device_batch and num_generations must divide one another")
    if cfg.use_vllm not in ("auto", "on", "off"):
        raise ValueError("use_vllm must be auto, on or off")
    if not 0 <= cfg.fix_sampling_rate <= 1:
        raise ValueError("fix_sampling_rate must be in [0, 1]")
