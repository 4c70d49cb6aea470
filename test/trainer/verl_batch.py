"""A rollout batch as verl's trainers hold it, for the verl-load checks (verl_load_check.py on verl 0.5.0,
verl_reward_loop_check.py on 0.9.1): each answer with its dataset row's chat and extra_info."""
from __future__ import annotations

import numpy as np
import torch

from verl import DataProto


def batch_of(tok, dataset, rows, prompt_len: int, response_len: int) -> DataProto:
    """A rollout batch as verl's trainer holds it: the dataset's row for each answer (its chat and extra_info),
    left-padded prompts, right-padded responses."""
    items = [dataset.dataframe[r["row"]] for r in rows]
    prompts, responses, masks = [], [], []
    for r in rows:
        text = tok.apply_chat_template([{"role": "user", "content": r["formal_statement"]}], add_generation_prompt=True,
                                       tokenize=False)
        p = tok.encode(text, add_special_tokens=False)[-prompt_len:]
        a = tok.encode(r["response"], add_special_tokens=False)[:response_len]
        pad = tok.pad_token_id
        prompts.append([pad] * (prompt_len - len(p)) + p)
        responses.append(a + [pad] * (response_len - len(a)))
        masks.append([0] * (prompt_len - len(p)) + [1] * len(p) + [1] * len(a) + [0] * (response_len - len(a)))
    tensors = {
        "prompts": torch.tensor(prompts),
        "responses": torch.tensor(responses),
        "attention_mask": torch.tensor(masks),
        "input_ids": torch.cat([torch.tensor(prompts), torch.tensor(responses)], dim=1),
    }
    non_tensors = {
        "data_source": np.array(["kimina/personal"] * len(rows), dtype=object),
        "reward_model": np.array([{"ground_truth": "Should be solved in Lean 4.", "style": "rule"} for _ in rows],
                                 dtype=object),
        "extra_info": np.array([dict(it["extra_info"]) for it in items], dtype=object),
        "raw_prompt": np.array([[dict(m) for m in it["prompt"]] for it in items], dtype=object),
    }
    return DataProto.from_dict(tensors=tensors, non_tensors=non_tensors)
