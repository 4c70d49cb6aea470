"""Runs an exported job's reward through verl's own reward loop (run by test/trainer/verl-load.test.ts in the
verl 0.9.1 venv).

`python verl_reward_loop_check.py JOB_DIR TOKENIZER_DIR ANSWERS.json` prints one JSON object:
- the PPO config composed by hydra from verl's own verl/trainer/config/ppo_trainer.yaml with the job's overrides
  (the model path pointed at TOKENIZER_DIR, the tiny character tokenizer saved there: nothing downloaded), and
  Hydra's refusal of `reward_model.launch_reward_fn_async`, which jobs written for verl 0.5 carry;
- our dataset class loaded through verl's `create_rl_dataset` (verl.trainer.ppo.utils), as its trainers do;
- the reward manager class verl resolves for the config, and the reward function its loader wraps;
- each answer of ANSWERS.json ([{row, formal_statement, response}]: `row` is the train set's row it answers) scored as verl's RewardLoopManager
  .compute_rm_score does it, without Ray: the batch padded and cut into `reward.num_workers` chunks, each chunk
  given to a RewardLoopWorker (verl/experimental/reward_loop/reward_loop.py), whose compute_score_batch runs
  the reward manager's run_single once per answer, all at once; then `assemble_rm_scores` places each score on
  its answer's last token, and the extra fields become the batch's non-tensor columns;
- our dataset's `on_batch_end` on that batch (the reward's fields as verl 0.9's ray_trainer hands them over).
"""
from __future__ import annotations

import asyncio
import json
import os
import sys
import time

import numpy as np
import torch
from hydra import compose, initialize_config_dir

import verl
from verl import DataProto
from verl.experimental.reward_loop.reward_loop import RewardLoopWorker
from verl.protocol import pad_dataproto_to_divisor
from verl.trainer.ppo.reward import resolve_reward_manager_cls
from verl.trainer.ppo.utils import create_rl_dataset
from verl.utils import hf_tokenizer

from verl_batch import batch_of


def hydra_value(v):
    if isinstance(v, bool):
        return "True" if v else "False"
    return str(v)


async def score(cfg, data: DataProto):
    """RewardLoopManager.compute_rm_score without Ray: chunks over reward.num_workers workers, all at once."""
    workers = [RewardLoopWorker(cfg, None) for _ in range(cfg.reward.num_workers)]
    padded, pad_size = pad_dataproto_to_divisor(data, len(workers))
    chunks = padded.chunk(len(workers))
    outputs = await asyncio.gather(*(w.compute_score_batch(c) for w, c in zip(workers, chunks, strict=True)))
    flat = [item for sub in outputs for item in sub]
    return flat[: len(data)] if pad_size > 0 else flat, workers


def main(job: str, tokenizer_dir: str, answers_file: str) -> None:
    overrides = json.load(open(os.path.join(job, "overrides.json"), encoding="utf-8"))
    overrides["actor_rollout_ref.model.path"] = tokenizer_dir
    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        cfg = compose(config_name="ppo_trainer", overrides=[f"{k}={hydra_value(v)}" for k, v in overrides.items()])
    # The override the 0.5-era job carried: Hydra refuses it on this release (the failure issue 30 reported).
    try:
        with initialize_config_dir(config_dir=config_dir, version_base=None):
            compose(config_name="ppo_trainer", overrides=["reward_model.launch_reward_fn_async=True"])
        legacy_refused = ""
    except Exception as e:  # hydra's ConfigCompositionException
        legacy_refused = f"{type(e).__name__}: {e}"
    os.chdir(job)
    tok = hf_tokenizer(tokenizer_dir)
    train = create_rl_dataset(cfg.data.train_files, cfg.data, tok, None)

    rows = json.load(open(answers_file, encoding="utf-8"))
    data = batch_of(tok, train, rows, prompt_len=256, response_len=1024)
    t0 = time.monotonic()
    outputs, workers = asyncio.run(score(cfg, data))
    seconds = time.monotonic() - t0
    manager_cls = resolve_reward_manager_cls(cfg)
    scores = [o["reward_score"] for o in outputs]
    rm_scores = manager_cls.assemble_rm_scores(data, scores)
    infos = [o.get("reward_extra_info", {}) for o in outputs]
    keys = list(infos[0].keys())
    data.non_tensor_batch.update({k: np.array([i[k] for i in infos], dtype=object) for k in keys})

    # The dataset sees the step's answers as verl 0.9's ray_trainer hands them over (on_batch_end).
    train.on_batch_end(batch=data)
    manager = workers[0].reward_manager
    fn = manager.compute_score
    print(json.dumps({
        "verl_version": verl.__version__,
        "use_v1": cfg.trainer.use_v1,
        "legacy_key_refused": legacy_refused[:300],
        "dataset_class": type(train).__name__,
        "train_rows": len(train),
        "reward_manager": type(manager).__name__,
        "reward_fn": getattr(fn, "args", [fn])[0].__name__,
        "reward_fn_async": manager.is_async_reward_score,
        "num_workers": cfg.reward.num_workers,
        "scores": scores,
        "rm_scores_sum": [float(x) for x in rm_scores.sum(dim=1)],
        "rm_scores_at_last_token": all(
            float(rm_scores[i, int(data.batch["attention_mask"][i, 256:].sum()) - 1]) == scores[i]
            for i in range(len(rows))),
        "extra_keys": sorted(keys),
        "tool_feedback": [str(i["tool_feedback"]) for i in infos],
        "format_error": [str(i["format_error"]) for i in infos],
        "cache_after_step": len(train.multi_turn_data),
        "seconds": seconds,
    }, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
