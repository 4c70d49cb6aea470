"""Loads an exported verl job with verl itself (run by test/trainer/verl-load.test.ts in the verl venv).

`python verl_load_check.py JOB_DIR` prints one JSON object:
- the PPO config composed by hydra from verl's own verl/trainer/config/ppo_trainer.yaml with the job's overrides;
- our dataset class loaded through verl's `create_rl_dataset` (the path main_ppo takes for data.custom_cls),
  on the exported parquet, with the tiny character tokenizer (kimina_trainer.tiny, nothing downloaded);
- the reward function loaded through verl's `get_custom_reward_fn`, and verl's reward manager for the config;
- turn-1 reads before any failure; `on_batch_end` on a batch with failed answers (the reward's extra keys as
  verl merges them); then 400 reads and how many were turn-2 fix prompts; the per-step metrics;
- `validation_generate_next_turn` on a validation batch, as the recipe's verl calls it.
Positional argument 2 (optional): a JSON file of fix-plan cases to run through `plan_fix_prompt`.
Positional argument 3 (optional): a JSON file of answers ([{row, formal_statement, response}]) that verl's reward
manager for the config (0.5.0: BatchRewardManager) scores as its trainer calls it, `manager(batch,
return_dict=True)`, through the reward service at KIMINA_REWARD_URL.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
from hydra import compose, initialize_config_dir

import verl
from verl import DataProto
from verl.trainer.main_ppo import create_rl_dataset
from verl.trainer.ppo.reward import get_custom_reward_fn, load_reward_manager
from verl.utils.dataset.rl_dataset import collate_fn

from kimina_trainer.tiny import build_tokenizer
from verl_batch import batch_of


def hydra_value(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    return str(v)


def main(job: str, cases_file: str | None, answers_file: str | None = None) -> None:
    overrides = json.load(open(os.path.join(job, "overrides.json"), encoding="utf-8"))
    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        cfg = compose(config_name="ppo_trainer", overrides=[f"{k}={hydra_value(v)}" for k, v in overrides.items()])
    os.chdir(job)
    tok = build_tokenizer()
    train = create_rl_dataset(cfg.data.train_files, cfg.data, tok, None)
    val = create_rl_dataset(cfg.data.val_files, cfg.data, tok, None, is_train=False)
    reward_fn = get_custom_reward_fn(cfg)
    manager = load_reward_manager(cfg, tok, num_examine=0, **cfg.reward_model.get("reward_kwargs", {}))

    def turn(item):
        return sum(1 for m in item["raw_prompt"] if m["role"] == "user")

    before = [turn(train[i % len(train)]) for i in range(50)]

    # One training step's batch as verl hands it to on_batch_end: collated items plus the reward's extra keys.
    items = [train[i % len(train)] for i in range(8)]
    batch = DataProto.from_single_dict(collate_fn(items))
    n = len(items)
    feedback = ["# Error 1:\nError message: \nunknown identifier 'bogus'\n\n"] * (n - 3) + ["valid proof found.", "filtered proof.", "x" * 3001]
    batch.non_tensor_batch["tool_feedback"] = np.array(feedback, dtype=object)
    batch.non_tensor_batch["response"] = np.array([f"<think>try {i}</think> answer {i}" for i in range(n)], dtype=object)
    batch.non_tensor_batch["format_error"] = np.array(["No error."] * (n - 1) + ["Generation repeats."], dtype=object)
    train.on_batch_end(batch=batch)
    cache = len(train.multi_turn_data)
    after = [train[i % len(train)] for i in range(400)]
    turns = [turn(x) for x in after]
    turn2 = next(x for x in after if turn(x) == 2)
    turn1 = next(x for x in after if turn(x) == 1)

    # Validation: a batch of val rows, one failed answer per row except the first (valid).
    vitems = [val[i] for i in range(min(4, len(val)))]
    vbatch = DataProto.from_single_dict(collate_fn(vitems))
    vfeedback = ["valid proof found."] + ["# Error 1:\nError message: \nlinarith failed\n\n"] * (len(vitems) - 1)
    second, positions = val.validation_generate_next_turn(vbatch, [f"answer {i}" for i in range(len(vitems))], {"tool_feedback": vfeedback})

    out = {
        "verl_version": verl.__version__,
        "dataset_class": type(train).__name__,
        # verl wraps the function as partial(_call_with_kwargs, fn, reward_kwargs)
        "reward_fn": reward_fn.args[0].__name__, "reward_kwargs": dict(reward_fn.args[1]),
        "reward_manager": type(manager).__name__,
        "config": {
            "multiturn": cfg.data.multiturn, "sampling_rate": cfg.data.multiturn_sampling_rate,
            "cache": cfg.data.multiturn_n_samples_in_cache, "feedback_cap": cfg.data.multiturn_max_feedback_length,
            "custom_cls": cfg.data.custom_cls.name, "model": cfg.actor_rollout_ref.model.path,
            "loss_agg_mode": cfg.actor_rollout_ref.actor.loss_agg_mode, "train_batch_size": cfg.data.train_batch_size,
            "ppo_mini_batch_size": cfg.actor_rollout_ref.actor.ppo_mini_batch_size, "val_n": cfg.actor_rollout_ref.rollout.val_kwargs.n,
            "total_epochs": cfg.trainer.total_epochs, "total_training_steps": cfg.trainer.total_training_steps,
            "workers": cfg.data.dataloader_num_workers,
        },
        "train_rows": len(train), "val_rows": len(val),
        "val_data_source": val.dataframe[0]["data_source"],
        "turns_before_any_failure": sorted(set(before)),
        "cache_after_step": cache,
        "metrics": {k: v for k, v in train.last_metrics.items() if v},
        "reads_after": len(turns), "turn2_reads": turns.count(2),
        "turn1_sample": [m["role"] for m in turn1["raw_prompt"]],
        "turn2_sample": {"roles": [m["role"] for m in turn2["raw_prompt"]], "last": turn2["raw_prompt"][-1]["content"],
                          "assistant": turn2["raw_prompt"][2]["content"], "data_source": turn2["data_source"],
                          "extra_prompt_roles": [m["role"] for m in turn2["extra_info"]["prompt"]],
                          "input_ids_len": int(turn2["input_ids"].shape[0])},
        "validation": {"positions": positions, "second_rows": 0 if second is None else len(second),
                       "second_roles": None if second is None else [m["role"] for m in second.non_tensor_batch["raw_prompt"][0]]},
    }
    if answers_file:
        rows = json.load(open(answers_file, encoding="utf-8"))
        scored = manager(batch_of(tok, train, rows, prompt_len=256, response_len=1024), return_dict=True)
        extra = scored["reward_extra_info"]
        out["reward"] = {"scores": [float(x) for x in scored["reward_tensor"].sum(dim=1)],
                         "tool_feedback": [str(x) for x in extra["tool_feedback"]],
                         "format_error": [str(x) for x in extra["format_error"]]}
    if cases_file:
        sys.path.insert(0, os.getcwd())
        from kimina_dataset import plan_fix_prompt  # the job's copy

        cases = json.load(open(cases_file, encoding="utf-8"))
        out["plans"] = []
        for c in cases:
            conv, outcome = plan_fix_prompt(c["conversation"], c["response"], c["feedback"], c["nTurns"], c["maxFeedbackChars"],
                                            lambda msgs: sum(len(m["content"]) for m in msgs), c["maxPromptTokens"])
            out["plans"].append({"outcome": outcome, "conversation": conv})
    print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None, sys.argv[3] if len(sys.argv) > 3 else None)
