"""Prompt rendering helpers shared by training and evaluation."""
from __future__ import annotations

from typing import Any


def render(tokenizer: Any, messages: list[dict[str, str]]) -> str:
    """The chat-template text of a conversation with the generation prompt (thinking mode left at the default)."""
    return tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)


def prompt_tokens(tokenizer: Any, messages: list[dict[str, str]]) -> int:
    return len(tokenizer(render(tokenizer, messages), add_special_tokens=False)["input_ids"])


def previous_answers(messages: list[dict[str, str]]) -> list[str]:
    """Earlier assistant turns of a prompt (the turn-1 answer inside a fix prompt)."""
    return [m["content"] for m in messages if m["role"] == "assistant"]


def completion_text(completion: Any) -> str:
    """TRL gives conversational completions as [{"role": "assistant", "content": ...}]."""
    if isinstance(completion, str):
        return completion
    parts = []
    for m in completion:
        reasoning = m.get("reasoning_content")
        if reasoning:  # a response schema split the thinking off: rebuild it for the format checks
            parts.append(f"<think>{reasoning}</think>")
        parts.append(m.get("content") or "")
    return "".join(parts)
