"""The run configuration the backend writes for one trainer process (JSON), with defaults and validation."""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class LoraSettings:
    r: int = 16
    alpha: int = 32
    dropout: float = 0.0
    target_modules: list[str] = field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])


@dataclass
class RunConfig:
    run_id: str
    backend_url: str
    model_path: str
    output_dir: str
    train_file: str
    held_out_file: str | None = None
    fix_seed_file: str | None = None  # error-fix prompts harvested from the prover's history
    token: str | None = None
    # Which launch of the run this process is; the backend refuses posts from any other (a stale trainer)
    launch_id: str | None = None
    # The backend's pid: the trainer dies with it (lifeline.py)
    backend_pid: int | None = None
    # Recipe values (training-recipe.md §2), scaled down by the backend's preset for small machines.
    learning_rate: float = 2e-6
    num_generations: int = 8
    prompts_per_step: int = 256
    per_device_batch: int = 32
    max_completion_length: int = 24576
    max_prompt_length: int = 8192
    temperature: float = 1.0
    top_p: float = 1.0
    epsilon: float = 0.2
    epsilon_high: float = 0.3
    beta: float = 0.0
    max_steps: int = 100
    save_steps: int = 5
    eval_steps: int = 5
    eval_samples: int = 8
    eval_top_p: float = 0.95
    seed: int = 42
    lora: LoraSettings | None = None
    use_vllm: str = "auto"  # "auto" | "on" | "off"
    vllm_gpu_memory_utilization: float = 0.3
    fix_sampling_rate: float = 0.5
    fix_cache_size: int = 5000
    max_feedback_chars: int = 3000
    gradient_checkpointing: bool = True
    use_cpu: bool = False
    final_export: bool = True

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
    lora = raw.pop("lora", None)
    cfg = RunConfig(**raw)
    cfg.lora = LoraSettings(**lora) if isinstance(lora, dict) else None
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
