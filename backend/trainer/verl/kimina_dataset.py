"""verl dataset class with the Kimina recipe's error-fix turn (training-recipe.md §4, §6; kimina-format.md §6).

Use with `data.custom_cls.path=kimina_dataset.py`, `data.custom_cls.name=KiminaMultiturnDataset` and
`+data.multiturn=True`, `+data.multiturn_sampling_rate=0.5`, `+data.multiturn_n_samples_in_cache=5000`
(`+data.multiturn_max_feedback_length` defaults to 3000 characters). `data.dataloader_num_workers=0` is
required: the cache lives in this object.

- After each training step verl calls `on_batch_end(batch)`. Every failed answer whose Lean feedback passes
  the recipe's filters (in order: valid, filtered, feedback too long, already turn 2, prompt too long)
  becomes the fix prompt [system, user, assistant(answer), user(feedback)]; the newest 5000 are kept.
- Once the cache holds any, each read returns a cached fix prompt with probability `multiturn_sampling_rate`,
  cache[index mod len(cache)], like the recipe.
- The feedback text is the reward's `tool_feedback`: the Kimina backend's reward service writes it with the
  same code as the prover's fix turn, so training, evaluation and the editor see one message format.
- `validation_generate_next_turn` gives failed validation answers their fix turn. The recipe's verl (its fork
  of verl 0.5.0, patch #42 in `ray_trainer._validate`) calls it; stock verl 0.5.0 validates one turn only.
- Per step it computes `multiturn/turn_k/*` and `format_error/turn_k/<text>` counts (all initialised to 0)
  and logs them to wandb when a wandb run is active, and to the console otherwise (`last_metrics` keeps them).
"""
from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import verl.utils.torch_functional as verl_F
from omegaconf import DictConfig
from transformers import PreTrainedTokenizer, ProcessorMixin
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.utils.model import compute_position_id_with_mask

from verl import DataProto  # pyright: ignore[reportAttributeAccessIssue] (verl is the installed package, not this folder)

logger = logging.getLogger(__name__)

VALID = "valid proof found."
FILTERED = "filtered proof."
COUNTERS = ["valid", "filtered", "feedback_too_long", "exceed_max_turn", "max_prompt_token_len_exceeded", "added_in_database"]
# The recipe's FormatError texts (kimina-format.md §3), every one initialised to 0 per step like the recipe.
FORMAT_ERROR_TEXTS = [
    "No error.",
    "Could not find a valid lean4 code block.",
    "Could not find a valid think block.",
    "There must be exactly one think block.",
    "There must be exactly one lean4 code block.",
    "Generation repeats.",
    "There must be more than one tactics block.",
    "Tactic code contains too many lines.",
    "Tactic block formatting error.",
    "Tactics and Lean4 code do not match.",
    "Lean 4 code does not start with the formal statement.",
]


def turn_of(prompt: list[dict[str, Any]]) -> int:
    """The turn an answer belongs to: the number of user messages in its prompt."""
    return sum(1 for m in prompt if m["role"] == "user")


def plan_fix_prompt(prompt: list[dict[str, Any]], response: str, feedback: str, n_turns: int, max_feedback_chars: int,
                    count_tokens: Callable[[list[dict[str, Any]]], int], max_prompt_tokens: int) -> tuple[list[dict[str, Any]] | None, str]:
    """The recipe's filters in order; returns (fix conversation or None, counter name).

    Mirrors backend/prover/fixTurn.ts `planFixTurn` (test/trainer/verl-load.test.ts runs both on the same cases).
    Lengths are Python characters (code points), as in the recipe.
    """
    if feedback == VALID:
        return None, "valid"
    if feedback == FILTERED:
        return None, "filtered"
    if len(feedback) > max_feedback_chars:
        return None, "feedback_too_long"
    if turn_of(prompt) >= n_turns:
        return None, "exceed_max_turn"
    conversation = [dict(m) for m in prompt] + [{"role": "assistant", "content": response}, {"role": "user", "content": feedback}]
    if count_tokens(conversation) > max_prompt_tokens:
        return None, "max_prompt_token_len_exceeded"
    return conversation, "added_in_database"


def empty_metrics(n_turns: int) -> dict[str, int]:
    metrics: dict[str, int] = {}
    for turn in range(1, n_turns + 1):
        for name in COUNTERS:
            metrics[f"multiturn/turn_{turn}/{name}"] = 0
        for text in FORMAT_ERROR_TEXTS:
            metrics[f"format_error/turn_{turn}/{text}"] = 0
    return metrics


class KiminaMultiturnDataset(RLHFDataset):
    def __init__(self, data_files: str | list[str], tokenizer: PreTrainedTokenizer, config: DictConfig,
                 processor: ProcessorMixin | None = None, **more: Any):
        # `more`: what newer verl passes on to RLHFDataset (0.9: max_samples), given only when verl gives it.
        super().__init__(data_files=data_files, tokenizer=tokenizer, config=config, processor=processor, **more)
        self.multi_turn_enabled = bool(config.get("multiturn", False))
        self.sampling_rate = float(config.get("multiturn_sampling_rate", 0.5))
        self.cache_size = int(config.get("multiturn_n_samples_in_cache", 5000))
        self.max_feedback_chars = int(config.get("multiturn_max_feedback_length", 3000))
        self.n_turns = 2 if self.multi_turn_enabled else 1
        self.rng = random.Random(config.get("multiturn_seed", None))
        self.multi_turn_data: list[dict[str, Any]] = []
        self.last_metrics: dict[str, int] = {}
        logger.info("multi-turn %s, sampling rate %s, cache %s, feedback cap %s chars",
                    "on" if self.multi_turn_enabled else "off", self.sampling_rate, self.cache_size, self.max_feedback_chars)

    # -- reading ---------------------------------------------------------------------------------------------
    def __getitem__(self, item: int) -> dict:
        if self.multi_turn_enabled and self.multi_turn_data and self.rng.random() < self.sampling_rate:
            source = self.multi_turn_data[item % len(self.multi_turn_data)]
        else:
            source = self.dataframe[item]
        row = {
            "prompt": [dict(m) for m in source["prompt"]],
            "extra_info": {
                "formal_statement": source["extra_info"]["formal_statement"],
                "index": source["extra_info"]["index"],
                # The reward needs the earlier turns of a fix prompt (both turns must pass the format checks).
                "prompt": [dict(m) for m in source["prompt"]],
            },
            "data_source": source["data_source"],
            "reward_model": {"style": source["reward_model"]["style"], "ground_truth": source["reward_model"]["ground_truth"]},
        }
        return self._encode(row)

    def _encode(self, row: dict) -> dict:
        """Text-only version of RLHFDataset.__getitem__ for a row given as a dict."""
        messages = row["prompt"]
        raw_prompt = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        inputs = self.tokenizer(raw_prompt, return_tensors="pt", add_special_tokens=False)
        input_ids, attention_mask = verl_F.postprocess_data(
            input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"], max_length=self.max_prompt_length,
            pad_token_id=self.tokenizer.pad_token_id, left_pad=True, truncation=self.truncation)
        row["input_ids"] = input_ids[0]
        row["attention_mask"] = attention_mask[0]
        row["position_ids"] = compute_position_id_with_mask(attention_mask)[0]
        raw_prompt_ids = self.tokenizer.encode(raw_prompt, add_special_tokens=False)
        if len(raw_prompt_ids) > self.max_prompt_length:
            if self.truncation == "error":
                raise RuntimeError(f"Prompt length {len(raw_prompt_ids)} is longer than {self.max_prompt_length}.")
            if self.truncation == "left":
                raw_prompt_ids = raw_prompt_ids[-self.max_prompt_length:]
            elif self.truncation == "right":
                raw_prompt_ids = raw_prompt_ids[: self.max_prompt_length]
            elif self.truncation == "middle":
                half = self.max_prompt_length // 2
                raw_prompt_ids = raw_prompt_ids[:half] + raw_prompt_ids[-(self.max_prompt_length - half):]
        row["raw_prompt_ids"] = raw_prompt_ids
        if self.return_raw_chat:
            row["raw_prompt"] = messages
        if self.return_full_prompt:
            row["full_prompts"] = raw_prompt
        row["index"] = row["extra_info"]["index"]
        row["tools_kwargs"] = {}
        row["interaction_kwargs"] = {}
        return row

    # -- fix prompts -----------------------------------------------------------------------------------------
    def count_tokens(self, conversation: list[dict[str, Any]]) -> int:
        return len(self.tokenizer.apply_chat_template(conversation, add_generation_prompt=True, tokenize=True))

    def fix_row(self, prompt: list[dict[str, Any]], response: str, feedback: str, extra_info: dict, metrics: dict[str, int]) -> dict | None:
        turn = turn_of(prompt)
        conversation, outcome = plan_fix_prompt(prompt, response, feedback, self.n_turns, self.max_feedback_chars,
                                                self.count_tokens, self.max_prompt_length)
        metrics[f"multiturn/turn_{turn}/{outcome}"] = metrics.get(f"multiturn/turn_{turn}/{outcome}", 0) + 1
        if conversation is None:
            return None
        return {
            "prompt": conversation,
            "extra_info": {"formal_statement": extra_info["formal_statement"], "index": extra_info["index"]},
            "data_source": "multiturn",
            "reward_model": {"style": "rule", "ground_truth": extra_info["formal_statement"]},
        }

    def on_batch_end(self, batch: DataProto) -> None:
        """After a training step: count format results per turn and cache the fix prompts of failed answers."""
        nt = batch.non_tensor_batch
        metrics = empty_metrics(self.n_turns)
        for prompt, error in zip(nt["raw_prompt"], nt["format_error"]):
            key = f"format_error/turn_{turn_of(list(prompt))}/{error}"
            metrics[key] = metrics.get(key, 0) + 1
        added = []
        for prompt, response, feedback, extra in zip(nt["raw_prompt"], nt["response"], nt["tool_feedback"], nt["extra_info"]):
            row = self.fix_row(list(prompt), response, feedback, extra, metrics)
            if row is not None:
                added.append(row)
                # The recipe counts the addition on top of the outcome; plan_fix_prompt already named it.
        self.multi_turn_data = (self.multi_turn_data + added)[-self.cache_size:]
        self.last_metrics = metrics
        self._log(metrics)

    def _log(self, metrics: dict[str, int]) -> None:
        try:
            import wandb
            if wandb.run is not None:
                wandb.log(metrics)
                return
        except ImportError:
            pass
        print("kimina multiturn metrics " + json.dumps({k: v for k, v in metrics.items() if v}, ensure_ascii=False), flush=True)

    def validation_generate_next_turn(self, batch: DataProto, responses: list[str], reward_extra_info: dict) -> tuple[DataProto | None, list[int]]:
        """Fix-turn prompts for the failed validation answers, and their positions in the batch."""
        nt = batch.non_tensor_batch
        rows, positions = [], []
        scratch = empty_metrics(self.n_turns)
        for i in range(len(nt["raw_prompt"])):
            row = self.fix_row(list(nt["raw_prompt"][i]), responses[i], reward_extra_info["tool_feedback"][i], nt["extra_info"][i], scratch)
            if row is None:
                continue
            row["extra_info"]["prompt"] = row["prompt"]
            rows.append(self._encode(row))
            positions.append(i)
        if not rows:
            return None, positions
        columns: dict[str, Any] = {}
        for key in rows[0]:
            values = [r[key] for r in rows]
            columns[key] = torch.stack(values, dim=0) if isinstance(values[0], torch.Tensor) else np.array(values, dtype=object)
        return DataProto.from_single_dict(columns), positions
