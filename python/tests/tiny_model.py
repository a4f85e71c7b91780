"""A tiny Llama-like causal LM with random weights and a character-level tokenizer, built offline.

The tokenizer has every printable ASCII character as a token, a chat template, and a few whole
JSON objects as added tokens (``{"seed": 3}`` ...) so that even random weights sometimes write a
JSON object: groups then get different rewards and GRPO has a gradient.
"""

from __future__ import annotations

import string
from typing import Any

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
JSON_TOKENS = ['{"seed": 1}', '{"seed": 2}', '{"seed": 3}', '{"seed": 4}', '{"seed": 5}']


def tiny_tokenizer() -> Any:
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<unk>", "<pad>", "<|im_start|>", "<|im_end|>"]
    chars = sorted(set(string.printable) - set("\x0b\x0c\r"))
    vocab = {tok: i for i, tok in enumerate(specials + chars)}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tk.decoder = decoders.Fuse()
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>", pad_token="<pad>", eos_token="<|im_end|>", bos_token=None)
    tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>"]})
    tok.add_tokens(JSON_TOKENS)
    tok.chat_template = CHAT_TEMPLATE
    return tok


def tiny_model(tokenizer: Any, seed: int = 0) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id, bos_token_id=None,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(config)
