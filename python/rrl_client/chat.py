"""Chat templates for models without one: a base model (Gemma 3 270M as shipped in GGUF, say) may
come with no chat template, and the SFT and GRPO trainers both format chat messages with it."""

from __future__ import annotations

from typing import Any

PLAIN_TEMPLATE = (
    "{% for m in messages %}"
    "{% if m['role'] == 'assistant' %}### assistant\n{{ m['content'] }}{{ eos_token }}\n"
    "{% else %}### {{ m['role'] }}\n{{ m['content'] }}\n\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}### assistant\n{% endif %}"
)
"""A plain role-headed template: the prompt with ``add_generation_prompt`` is a prefix of the prompt
and its answer (what completion-only loss needs), and an answer ends with the end-of-sequence token
so that the model learns to stop."""


def ensure_chat_template(tokenizer: Any) -> bool:
    """Give ``tokenizer`` the plain template when it has none; True when it did."""
    if getattr(tokenizer, "chat_template", None):
        return False
    tokenizer.chat_template = PLAIN_TEMPLATE
    return True
