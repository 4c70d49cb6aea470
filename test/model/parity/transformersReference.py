"""Reference outputs from Hugging Face transformers for the engine's parity suite (test/model/parity).

Usage: python transformersReference.py <job.json>
job.json: {"checkpoints": [{"dir", "seed", "config": {...Qwen3Config kwargs...}, "config_style": "v4"|"v5",
            "prompts": [[ids]], "greedy_steps": n}],
           "templates": {"tokenizer_dir": str, "conversations": [{"messages": [...], "add_generation_prompt": bool}]}}
For each checkpoint: builds a seeded random Qwen3ForCausalLM (fp32), saves it with save_pretrained into
dir (config.json rewritten the way transformers 4.x wrote it when config_style is "v4"), and writes
dir/reference/logits_<i>.f32 (every position's logits, full recomputation, float32 little endian) and
greedy continuations by full recomputation. Prints one JSON object on the last line of stdout.
"""
import json
import os
import sys

import torch
import transformers
from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM


def make_config(kwargs):
    kwargs = dict(kwargs)
    theta = kwargs.pop("rope_theta")
    try:
        return Qwen3Config(rope_parameters={"rope_type": "default", "rope_theta": theta}, **kwargs)
    except TypeError:  # transformers 4.x
        return Qwen3Config(rope_theta=theta, **kwargs)


def rewrite_as_v4(path, theta, layers):
    with open(path) as f:
        cfg = json.load(f)
    cfg.pop("rope_parameters", None)
    cfg.pop("layer_types", None)
    cfg.pop("dtype", None)
    cfg.update({"rope_theta": theta, "rope_scaling": None, "use_sliding_window": False, "sliding_window": None,
                "max_window_layers": layers, "torch_dtype": "float32", "transformers_version": "4.51.0"})
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2)


@torch.no_grad()
def checkpoint(spec):
    torch.manual_seed(spec["seed"])
    config = make_config(spec["config"])
    model = Qwen3ForCausalLM(config).to(torch.float32).eval()
    # Larger weights than the default init, so logits are well separated (greedy is not a coin toss).
    for p in model.parameters():
        if p.dim() == 2:
            p.mul_(spec.get("weight_scale", 4.0))
    model.save_pretrained(spec["dir"], safe_serialization=True)
    config_path = os.path.join(spec["dir"], "config.json")
    if spec["config_style"] == "v4":
        rewrite_as_v4(config_path, spec["config"]["rope_theta"], spec["config"]["num_hidden_layers"])
    out_dir = os.path.join(spec["dir"], "reference")
    os.makedirs(out_dir, exist_ok=True)
    greedy = []
    for i, prompt in enumerate(spec["prompts"]):
        ids = torch.tensor([prompt], dtype=torch.long)
        logits = model(input_ids=ids).logits[0].to(torch.float32).contiguous()
        logits.numpy().astype("<f4").tofile(os.path.join(out_dir, f"logits_{i}.f32"))
        seq = list(prompt)
        for _ in range(spec["greedy_steps"]):
            step = model(input_ids=torch.tensor([seq], dtype=torch.long)).logits[0, -1]
            seq.append(int(torch.argmax(step)))
        greedy.append(seq[len(prompt):])
    with open(config_path) as f:
        written = json.load(f)
    return {"dir": spec["dir"], "greedy": greedy, "config": written}


def templates(spec):
    tok = AutoTokenizer.from_pretrained(spec["tokenizer_dir"])
    return [tok.apply_chat_template(c["messages"], tokenize=False, add_generation_prompt=c["add_generation_prompt"])
            for c in spec["conversations"]]


def main():
    with open(sys.argv[1]) as f:
        job = json.load(f)
    torch.set_num_threads(1)
    result = {
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__},
        "checkpoints": [checkpoint(c) for c in job.get("checkpoints", [])],
    }
    if job.get("templates"):
        result["templates"] = templates(job["templates"])
    print(json.dumps(result))


if __name__ == "__main__":
    main()
