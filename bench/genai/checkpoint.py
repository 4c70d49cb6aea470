# Runs in the trainer's environment (test/trainer/.venv: transformers, torch CPU). Reads the benchmark's
# random Qwen3 weights (float32 safetensors written by bench/genaiDecode.ts from the same generator
# as our graph and llama.cpp's GGUF) with transformers' Qwen3ForCausalLM and writes them back with
# save_pretrained: the checkpoint onnxruntime-genai's model builder reads, written by transformers.
import sys

import torch
from transformers import AutoConfig, AutoModelForCausalLM

raw, out = sys.argv[1], sys.argv[2]
config = AutoConfig.from_pretrained(raw)
model = AutoModelForCausalLM.from_pretrained(raw, config=config, dtype=torch.float32)
model.save_pretrained(out)
print(f"{type(model).__name__}: {sum(p.numel() for p in model.parameters())} parameters -> {out}")
