"""The GPU check: the trainer's real GRPO step (Dr.GRPO, LoRA and full, bf16 on CUDA) on random Qwen3-0.6B- and
1.7B-shaped weights, timed step by step.

`python -m kimina_trainer.gpu_check --configs gpu-check/configs.json [--shapes 0.6b,1.7b] [--out report.json]`

The run configurations come from the backend's own presets (`npm run gpu-check:prepare` writes configs.json from
backend/training/presets.ts through trainerConfig, shortened to a few steps), so this is the worker a training run
starts, unchanged: `kimina_trainer.worker.main`. There is no Node on a GPU machine, so the backend is replaced by a
REWARD DOUBLE in this process: an HTTP server with the backend's trainer routes (`POST /v1/training/runs/:id/reward`,
`/metrics`, `/events`) answering in the backend's reward contract (backend/protocol/training.ts RewardResult). It
cannot run Lean: it scores an answer by a hash of its text (half of them 1), so the step's gradients are those of a
real mixed batch; it measures the step, not learning. Prints versions, tokens/s, step time and peak memory.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import platform
import resource
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import torch

from . import tiny, worker

# Qwen3's vocabulary size (config.json of Qwen/Qwen3-0.6B and -1.7B): the embedding and LM head are real-sized.
QWEN3_VOCAB = 151_936
SHAPES = {
    **tiny.SHAPES,
    # Qwen/Qwen3-1.7B config.json: 2048 hidden, 6144 intermediate, 28 layers, 16 heads, 8 KV heads, head_dim 128
    "1.7b": dict(hidden_size=2048, intermediate_size=6144, num_hidden_layers=28, num_attention_heads=16,
                 num_key_value_heads=8, head_dim=128),
}
PACKAGES = ("torch", "transformers", "trl", "peft", "accelerate", "datasets")


class RewardDouble:
    """The backend's trainer routes as a double: reward in the contract's shape, metrics and events recorded."""

    def __init__(self) -> None:
        self.metrics: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.scored = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if self.path.endswith("/reward"):
                    answer: Any = {"results": [owner.score(item) for item in body.get("items", [])]}
                elif self.path.endswith("/metrics"):
                    owner.metrics.append(body)
                    answer = {"ok": True}
                elif self.path.endswith("/events"):
                    owner.events.append(body)
                    answer = {"ok": True}
                else:
                    self.send_error(404)
                    return
                data = json.dumps(answer).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def score(self, item: dict[str, Any]) -> dict[str, Any]:
        self.scored += 1
        ok = hashlib.sha256(item.get("response", "").encode("utf-8")).digest()[0] % 2 == 0
        # RewardResult (backend/protocol/training.ts): score = format x verdict; here both come from the hash
        return {"score": 1.0 if ok else 0.0, "acc": 1.0 if ok else 0.0, "formatError": None if ok else "NO_VALID_LEAN4_CODE_BLOCK",
                "formatErrorText": "No error." if ok else "Could not find a valid lean4 code block.",
                "think": None, "verdict": "valid" if ok else None, "feedback": None, "code": None}

    def close(self) -> None:
        self.server.shutdown()


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "missing"
    if torch.cuda.is_available():
        out["gpu"] = torch.cuda.get_device_name(0)
        out["cuda"] = str(torch.version.cuda)
        out["bf16"] = str(torch.cuda.is_bf16_supported())
    return out


def write_model(out_dir: str, shape: str) -> None:
    """Random Qwen3 weights of `shape`; the character tokenizer padded to Qwen3's vocabulary for the real shapes."""
    tokenizer = tiny.build_tokenizer()
    if shape != "tiny":
        tokenizer.add_tokens([f"<pad_{i}>" for i in range(QWEN3_VOCAB - len(tokenizer))])
    model = tiny.build_model(tokenizer, "tiny", seed=0) if shape == "tiny" else None
    if model is None:
        from transformers import Qwen3Config, Qwen3ForCausalLM

        torch.manual_seed(0)
        config = Qwen3Config(vocab_size=len(tokenizer), max_position_embeddings=40_960, tie_word_embeddings=True,
                             eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                             bos_token_id=None, rope_theta=1_000_000, **SHAPES[shape])
        model = Qwen3ForCausalLM(config)
        model.generation_config.eos_token_id = tokenizer.eos_token_id
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)


def write_prompts(path: str, n: int) -> None:
    statement = "theorem mathd_algebra_10 (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by"
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            prompt = [{"role": "system", "content": "You are an expert in mathematics and Lean 4."},
                      {"role": "user", "content": f"Think about and solve the following problem step by step in Lean 4.\n"
                                                  f"# Formal statement:\n```lean4\nimport Mathlib\n\n{statement}\n```\n({i})"}]
            f.write(json.dumps({"prompt": prompt, "formal_statement": statement, "prompt_id": f"p{i}"}, ensure_ascii=False) + "\n")


def check(shape: str, mode: str, base: dict[str, Any], device: str, work: str) -> dict[str, Any]:
    model_dir = os.path.join(work, f"model-{shape}")
    if not os.path.isdir(model_dir):
        write_model(model_dir, shape)
    double = RewardDouble()
    try:
        cfg = dict(base)
        cfg.update(run_id=f"gpu-check-{shape}-{mode}", backend_url=double.url, model_path=model_dir,
                   output_dir=os.path.join(work, f"out-{shape}-{mode}"), train_file=os.path.join(work, "train.jsonl"),
                   held_out_file=None, token=None, launch_id=None, backend_pid=None, use_cpu=device == "cpu",
                   use_vllm="off", final_export=False)
        write_prompts(cfg["train_file"], max(8, cfg["prompts_per_step"] * cfg["max_steps"]))
        path = os.path.join(work, f"run-{shape}-{mode}.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(cfg, f)
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        code = worker.main(["--config", path])
        wall = time.perf_counter() - t0
        if code != 0:
            raise RuntimeError(f"the trainer exited {code}")
        steps = [m["metrics"] for m in double.metrics if m.get("kind") == "train"]
        if not steps:
            raise RuntimeError("the trainer reported no step")
        tail = steps[1:] or steps  # the first step carries compilation and allocator warm-up
        mean = lambda key: sum(s.get(key, 0.0) for s in tail) / len(tail)
        peak = (torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available()
                else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20)
        return {"shape": shape, "mode": mode, "device": device, "steps": len(steps), "wall_s": round(wall, 1),
                "step_s": round(mean("perf/time_per_step"), 2), "tokens_per_s": round(mean("perf/tokens_per_s"), 1),
                "loss": mean("loss"), "reward": mean("reward"), "grad_norm": mean("grad_norm"),
                "completion_tokens": mean("completions/mean_length"), "peak_memory_gib": round(peak, 2),
                "rewards_scored": double.scored, "finished": any(e.get("kind") == "finished" for e in double.events)}
    finally:
        double.close()


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--configs", required=True, help="configs.json written by npm run gpu-check:prepare")
    p.add_argument("--shapes", default="0.6b,1.7b")
    p.add_argument("--modes", default="lora,full")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--out", default=None, help="also write the report as JSON here")
    ns = p.parse_args(argv)
    if ns.device == "cuda" and not torch.cuda.is_available():
        print("gpu-check: --device cuda but torch sees no CUDA GPU", file=sys.stderr)
        return 2
    with open(ns.configs, encoding="utf-8") as f:
        configs: dict[str, dict[str, Any]] = json.load(f)["modes"]
    info = versions()
    print("gpu-check versions: " + ", ".join(f"{k} {v}" for k, v in info.items()), flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="kimina-gpu-check-") as work:
        for shape in ns.shapes.split(","):
            for mode in ns.modes.split(","):
                if mode not in configs:
                    raise SystemExit(f"gpu-check: no configuration for mode {mode!r} in {ns.configs}")
                print(f"gpu-check: {shape} {mode} on {ns.device}…", flush=True)
                try:
                    rows.append(check(shape, mode, configs[mode], ns.device, work))
                except Exception as e:  # one failing combination must not hide the others' figures
                    rows.append({"shape": shape, "mode": mode, "device": ns.device, "error": f"{type(e).__name__}: {e}"})
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                print(json.dumps(rows[-1]), flush=True)
    print("\n| shape | mode | steps | step s | tokens/s | peak GiB | loss | reward |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['shape']} | {r['mode']} | failed: {r['error'][:120]} | | | | | |")
        else:
            print(f"| {r['shape']} | {r['mode']} | {r['steps']} | {r['step_s']} | {r['tokens_per_s']} | {r['peak_memory_gib']} | "
                  f"{r['loss']:.4g} | {r['reward']:.2f} |")
    if ns.out:
        with open(ns.out, "w", encoding="utf-8") as f:
            json.dump({"versions": info, "rows": rows}, f, indent=2)
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
