"""Builds a tiny, randomly initialised Qwen3 model and a character-level tokenizer with a Qwen-style chat template.

For tests and the CPU benchmark: nothing is downloaded. `python -m kimina_trainer.tiny OUT_DIR [--shape tiny|0.6b]`.
The 0.6b shape matches Qwen3-0.6B's layer sizes (random weights) for GPU benchmarks.
"""
from __future__ import annotations

import argparse
import string
import sys

import torch
from tokenizers import Tokenizer, decoders, models
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
EXTRA_CHARS = "ℝℕℤℚ₀₁₂₃≤≥≠→←↔∀∃¬∧∨⊢αβγδεθλμπσ·∑∏√∣⌊⌋"


def build_tokenizer() -> PreTrainedTokenizerFast:
    chars = sorted(set(string.printable) | set(EXTRA_CHARS))
    vocab = {tok: i for i, tok in enumerate(SPECIALS + ["<unk>"] + chars)}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    core.decoder = decoders.Fuse()
    core.add_special_tokens(SPECIALS)
    tok = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="<unk>", eos_token="<|im_end|>",
                                  pad_token="<|endoftext|>", bos_token=None)
    tok.chat_template = CHAT_TEMPLATE
    tok.padding_side = "left"
    return tok


SHAPES = {
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=16),
    "0.6b": dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
                 num_key_value_heads=8, head_dim=128),
}


def build_model(tokenizer: PreTrainedTokenizerFast, shape: str = "tiny", seed: int = 0) -> Qwen3ForCausalLM:
    torch.manual_seed(seed)
    config = Qwen3Config(vocab_size=len(tokenizer), max_position_embeddings=4096, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         bos_token_id=None, **SHAPES[shape])
    model = Qwen3ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("out_dir")
    p.add_argument("--shape", choices=sorted(SHAPES), default="tiny")
    p.add_argument("--seed", type=int, default=0)
    ns = p.parse_args(argv)
    tok = build_tokenizer()
    model = build_model(tok, ns.shape, ns.seed)
    model.save_pretrained(ns.out_dir, safe_serialization=True)
    tok.save_pretrained(ns.out_dir)
    print(f"{ns.out_dir}: {sum(p.numel() for p in model.parameters())} parameters, vocab {len(tok)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
