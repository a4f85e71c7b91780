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


def tiny_tool_tokenizer(extra_tokens: list[str]) -> Any:
    """The tiny tokenizer with TRL's copy of Qwen3's chat template, which renders tools and tool calls
    (``<tool_call>{"name": ..., "arguments": ...}</tool_call>``) and which TRL knows how to parse tool
    calls back out of; ``extra_tokens`` (e.g. a whole tool call) are added as single tokens."""
    from trl.chat_template_utils import qwen3_chat_template

    tok = tiny_tokenizer()
    tok.add_tokens(["<tool_call>", "</tool_call>", *extra_tokens])
    tok.chat_template = qwen3_chat_template
    return tok


def tiny_model(tokenizer: Any, seed: int = 0, max_positions: int = 512) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(config)


def tiny_gemma3(tokenizer: Any, seed: int = 0) -> Any:
    """A tiny Gemma 3 causal LM with random weights: sliding-window layers (a window of 8 tokens, shorter than
    the tests' prompts) beside global ones, as Gemma 3 270M has."""
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    torch.manual_seed(seed)
    config = Gemma3TextConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=4,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        sliding_window=8,
        max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    return Gemma3ForCausalLM(config)


def _byte_chars() -> list[str]:
    """GPT-2's byte-level alphabet: one printable character for each of the 256 bytes."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def write_tiny_gguf(path: str, seed: int = 0) -> None:
    """A tiny Llama GGUF file (float32 tensors, random weights) with a byte-level BPE tokenizer and
    the chat template inside, the way SmolLM2's GGUF carries them, written with the gguf package."""
    import gguf
    import numpy as np

    hidden, layers, ff, heads, kv = 32, 2, 64, 4, 2
    merged = ['{"', "se", "ed"]
    tokens = _byte_chars() + merged + ["<|im_start|>", "<|im_end|>"]
    vocab = len(tokens)
    w = gguf.GGUFWriter(path, "llama")
    w.add_context_length(512)
    w.add_embedding_length(hidden)
    w.add_block_count(layers)
    w.add_feed_forward_length(ff)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_rope_dimension_count(hidden // heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(vocab)
    w.add_tokenizer_model("gpt2")
    w.add_token_list(tokens)
    w.add_token_merges(['{ "', "s e", "e d"])
    w.add_token_types([1] * (256 + len(merged)) + [3, 3])
    w.add_token_scores([0.0] * vocab)
    w.add_bos_token_id(vocab - 2)
    w.add_eos_token_id(vocab - 1)
    w.add_pad_token_id(vocab - 1)
    w.add_chat_template(CHAT_TEMPLATE)
    rng = np.random.default_rng(seed)

    def rand(name: str, *shape: int) -> None:
        w.add_tensor(name, (rng.standard_normal(shape) * 0.02).astype(np.float32))

    rand("token_embd.weight", vocab, hidden)
    w.add_tensor("output_norm.weight", np.ones(hidden, np.float32))
    head = hidden // heads
    for i in range(layers):
        rand(f"blk.{i}.attn_q.weight", hidden, hidden)
        rand(f"blk.{i}.attn_k.weight", kv * head, hidden)
        rand(f"blk.{i}.attn_v.weight", kv * head, hidden)
        rand(f"blk.{i}.attn_output.weight", hidden, hidden)
        rand(f"blk.{i}.ffn_gate.weight", ff, hidden)
        rand(f"blk.{i}.ffn_up.weight", ff, hidden)
        rand(f"blk.{i}.ffn_down.weight", hidden, ff)
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(hidden, np.float32))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(hidden, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
