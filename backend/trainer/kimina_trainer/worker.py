"""Entry point: `python -m kimina_trainer.worker --config run.json`.

Runs GRPO with TRL on the backend's prompt set, resuming from the newest checkpoint in the output folder.
Exit codes: 0 finished or stopped on request (SIGTERM), 2 bad configuration, 1 anything else.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import signal
import sys
from typing import Any

import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.trainer_utils import get_last_checkpoint
from trl import GRPOConfig, GRPOTrainer

from .backend_client import BackendClient
from .callbacks import CheckpointCallback, EvalCallback, ReportingCallback, StopFlag
from .chat import prompt_tokens
from .config import RunConfig, load_config
from .evaluation import load_rows
from .fix_cache import FixCache
from .lifeline import bind_to_backend
from .reward import BackendReward


class KiminaGRPOTrainer(GRPOTrainer):
    """GRPOTrainer whose generation batches draw cached error-fix prompts (one group at a time)."""

    fix_cache: FixCache

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        if self.model.training and self.accelerator.num_processes == 1:
            inputs = self.fix_cache.substitute(inputs, self.num_generations, self.state.global_step)
        return super()._generate_and_score_completions(inputs)


def half_precision(cfg: RunConfig) -> Any:
    """The autocast dtype: bf16 where the GPU has it, fp16 on older GPUs, none on the CPU."""
    if cfg.use_cpu or not torch.cuda.is_available():
        return None
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def use_vllm(cfg: RunConfig) -> bool:
    available = importlib.util.find_spec("vllm") is not None and torch.cuda.is_available()
    if cfg.use_vllm == "on" and not available:
        raise ValueError("use_vllm is on but vLLM or a CUDA GPU is missing")
    return cfg.use_vllm == "on" or (cfg.use_vllm == "auto" and available)


def build_args(cfg: RunConfig, vllm: bool) -> GRPOConfig:
    on_cpu = cfg.use_cpu or not torch.cuda.is_available()
    return GRPOConfig(
        output_dir=cfg.output_dir,
        # Dr.GRPO as in the recipe: no std scaling, constant-normalised token sum, no KL, asymmetric clipping.
        loss_type="dr_grpo", scale_rewards="none", beta=cfg.beta, epsilon=cfg.epsilon, epsilon_high=cfg.epsilon_high,
        num_generations=cfg.num_generations, generation_batch_size=cfg.generation_batch_size,
        per_device_train_batch_size=cfg.per_device_batch, gradient_accumulation_steps=1, num_iterations=1,
        max_completion_length=cfg.max_completion_length, temperature=cfg.temperature, top_p=cfg.top_p,
        # No top-k cut (verl's top_k -1). No vLLM importance-sampling correction: TRL 1.16 turns it on by default
        # (sequence_mask mode zeroes sequences whose vLLM/trainer probability ratio leaves its bounds), while the
        # recipe's verl 0.5.0 has no such correction; off, the update is the recipe's.
        top_k=0, vllm_importance_sampling_correction=False,
        learning_rate=cfg.learning_rate, lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.01,
        max_steps=cfg.max_steps, save_strategy="steps", save_steps=cfg.save_steps, save_total_limit=2,
        logging_steps=1, report_to="none", seed=cfg.seed, data_seed=cfg.seed, remove_unused_columns=False,
        mask_truncated_completions=False, bf16=half_precision(cfg) == torch.bfloat16,
        fp16=half_precision(cfg) == torch.float16, use_cpu=on_cpu,
        gradient_checkpointing=cfg.gradient_checkpointing and not on_cpu,
        use_vllm=vllm, vllm_mode="colocate", vllm_gpu_memory_utilization=cfg.vllm_gpu_memory_utilization,
        vllm_enable_sleep_mode=vllm, vllm_max_model_length=cfg.max_prompt_length + cfg.max_completion_length if vllm else None,
        dataloader_num_workers=0, disable_tqdm=True,
    )


def build_dataset(cfg: RunConfig, tokenizer: Any, client: BackendClient) -> Dataset:
    rows, dropped = [], 0
    for row in load_rows(cfg.train_file):
        if prompt_tokens(tokenizer, row["prompt"]) > cfg.max_prompt_length:
            dropped += 1  # the recipe's filter_overlong_prompts
            continue
        rows.append({"prompt": row["prompt"], "formal_statement": row["formal_statement"],
                     "prompt_id": str(row["prompt_id"]), "turn": 1})
    if dropped:
        client.event("log", message=f"dropped {dropped} prompts longer than {cfg.max_prompt_length} tokens")
    if not rows:
        raise ValueError("no training prompt fits the prompt budget")
    return Dataset.from_list(rows)


def load_model(cfg: RunConfig) -> tuple[Any, Any]:
    tokenizer = AutoTokenizer.from_pretrained(cfg.model_path)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    # Full fine-tuning keeps fp32 master weights (bf16 autocast does the maths): at lr 2e-6 most bf16 weight updates
    # would round away, as verl's FSDP mixed precision avoids too. With LoRA the frozen base can stay in bf16.
    half = half_precision(cfg)
    dtype = half if half is not None and cfg.lora is not None else torch.float32
    model = AutoModelForCausalLM.from_pretrained(cfg.model_path, dtype=dtype)
    return model, tokenizer


def peft_config(cfg: RunConfig) -> Any:
    if cfg.lora is None:
        return None
    from peft import LoraConfig
    return LoraConfig(r=cfg.lora.r, lora_alpha=cfg.lora.alpha, lora_dropout=cfg.lora.dropout,
                      target_modules=cfg.lora.target_modules, task_type="CAUSAL_LM")


def export_final(trainer: GRPOTrainer, tokenizer: Any, out_dir: str) -> None:
    """Writes full (LoRA-merged) weights in safetensors next to the checkpoints, for the ONNX converter."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    if hasattr(model, "merge_and_unload"):
        model = model.merge_and_unload()
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", required=True)
    ns = parser.parse_args(argv)
    try:
        cfg = load_config(ns.config)
    except (ValueError, TypeError, OSError, json.JSONDecodeError) as e:
        print(f"kimina-trainer: bad run config: {e}", file=sys.stderr)
        return 2

    stop = StopFlag()
    # first: a trainer never outlives the backend that started it; a `stop` line on stdin is Windows' SIGTERM
    lifeline = bind_to_backend(cfg.backend_pid, on_stop=lambda: setattr(stop, "requested", True))
    signal.signal(signal.SIGTERM, lambda *_: setattr(stop, "requested", True))
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)

    client = BackendClient(cfg.backend_url, cfg.run_id, cfg.token, launch_id=cfg.launch_id)
    try:
        model, tokenizer = load_model(cfg)
    except (OSError, ValueError) as e:  # a missing or unreadable model will not fix itself on a restart
        print(f"kimina-trainer: cannot load the model {cfg.model_path!r}: {e}", file=sys.stderr)
        return 2
    try:
        dataset = build_dataset(cfg, tokenizer, client)
        held_out = load_rows(cfg.held_out_file) if cfg.held_out_file else []
        vllm = use_vllm(cfg)
    except (OSError, ValueError, KeyError) as e:
        print(f"kimina-trainer: bad training data or settings: {e}", file=sys.stderr)
        return 2
    args = build_args(cfg, vllm)

    cache = FixCache(cfg.fix_cache_size, cfg.fix_sampling_rate, cfg.seed)
    last = get_last_checkpoint(cfg.output_dir) if os.path.isdir(cfg.output_dir) else None
    if last:
        cache.load(os.path.join(last, "fix_cache.json"))
    elif cfg.fix_seed_file:
        seeded = cache.add_seeds(load_rows(cfg.fix_seed_file), cfg.max_feedback_chars, lambda m: prompt_tokens(tokenizer, m), cfg.max_prompt_length)
        client.event("log", message=f"fix seeds from the prover's history: {seeded['added_in_database']} kept, "
                     f"{seeded['feedback_too_long']} with feedback over {cfg.max_feedback_chars} characters and "
                     f"{seeded['max_prompt_token_len_exceeded']} over the {cfg.max_prompt_length}-token prompt budget dropped")

    trainer = KiminaGRPOTrainer(
        model=model, reward_funcs=[BackendReward(client, cache, cfg, tokenizer)], args=args,
        train_dataset=dataset, processing_class=tokenizer, peft_config=peft_config(cfg),
        callbacks=[ReportingCallback(client, cache, stop), CheckpointCallback(client, cache),
                   EvalCallback(client, cfg, held_out, tokenizer)],
    )
    trainer.fix_cache = cache
    client.event("log", message=f"trainer ready: vllm={vllm} lora={cfg.lora is not None} resume={last or 'none'} lifeline={lifeline}")
    trainer.train(resume_from_checkpoint=last)

    if stop.requested:
        client.event("stopped", step=trainer.state.global_step)
        return 0
    final_dir = os.path.join(cfg.output_dir, "final")
    if cfg.final_export:
        export_final(trainer, tokenizer, final_dir)
    client.event("finished", step=trainer.state.global_step, finalDir=final_dir if cfg.final_export else None)
    return 0




if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
