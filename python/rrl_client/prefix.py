"""A group's shared prompt, computed once: GRPO samples ``num_generations`` completions of one prompt and
scores them together, so every row of a group starts with the same prompt tokens. Measured on
SmolLM2-135M with a corpus task's patch prompt (639 tokens, 8 completions, 2 cores): the prompt's
forward pass is about 16 s of a 22 s ``generate`` and most of the update's forward and backward.

- :func:`install_prefix_cache` wraps ``model.generate``: each distinct row of a batch is run once over
  all but its last token into a key/value cache, the cache is spread to the batch's rows, and
  ``generate`` continues from it; rows that differ but start alike (episodes after their first round:
  the task's prompt, then each its own answers and feedback) run the shared start once (greedy outputs
  equal the plain call's, tested).
- :func:`shared_prefix_logps` is the per-token log-probabilities of a batch's completions with each
  distinct prompt run once and its cache shared by its rows, gradients flowing into the shared
  prompt's pass (log-probabilities and gradients equal the full pass's, tested); what
  ``RrlGRPOTrainer`` computes the loss, the KL reference and the old policy with.
"""

from __future__ import annotations

from typing import Any


def _distinct_rows(input_ids: Any, attention_mask: Any) -> tuple[Any, Any]:
    """The distinct rows of ``(input_ids, attention_mask)`` (in first-seen order) and, per row, its distinct row's index."""
    import torch

    key = torch.cat([input_ids, attention_mask.to(input_ids.dtype)], dim=1)
    first: dict[tuple[int, ...], int] = {}
    keep: list[int] = []
    index: list[int] = []
    for i, row in enumerate(key.tolist()):
        j = first.setdefault(tuple(row), len(first))
        if j == len(keep):
            keep.append(i)
        index.append(j)
    return torch.tensor(keep, device=input_ids.device), torch.tensor(index, device=input_ids.device)


def checkpointing(model: Any) -> bool:
    """Whether gradient checkpointing is on for ``model`` (a PEFT wrapper asks its base model)."""
    return bool(getattr(model, "is_gradient_checkpointing", False))


def _cache(model: Any) -> Any:
    from transformers import DynamicCache

    return DynamicCache(config=model.config)


MIN_SHARED_TOKENS = 16
"""Fewest tokens all rows of a batch must share for :func:`install_prefix_cache` to run them once."""


def _common_prefix_cache(model: Any, input_ids: Any, mask: Any) -> Any:
    """A cache of every row but its last token in which the tokens all rows start with (an episode's task prompt,
    its later rounds differing) were run once, the rest of each row after them; None when they share fewer than
    ``MIN_SHARED_TOKENS`` or the model's cache does not keep a whole prefix (sliding-window layers)."""
    import torch

    batch, width = input_ids.shape
    rows = [input_ids[i][mask[i].bool()].tolist() for i in range(batch)]
    most = min(len(r) for r in rows) - 1  # every row keeps its last token for generate
    shared = 0
    while shared < most and all(r[shared] == rows[0][shared] for r in rows):
        shared += 1
    if shared < MIN_SHARED_TOKENS:
        return None
    once = _cache(model)
    with torch.no_grad():
        model(input_ids=torch.tensor([rows[0][:shared]], device=input_ids.device), past_key_values=once, use_cache=True)
    if any(layer.keys.shape[2] != shared for layer in once.layers):
        return None
    # Row i is left-padded by pads[i]: its prefix sits at [pads[i], pads[i] + shared); up to `start` every row holds only it.
    pads = [width - len(r) for r in rows]
    start = min(p + shared for p in pads)
    cache = _cache(model)
    for index, layer in enumerate(once.layers):
        keys = layer.keys.new_zeros((batch, layer.keys.shape[1], start, layer.keys.shape[3]))
        values = layer.values.new_zeros((batch, layer.values.shape[1], start, layer.values.shape[3]))
        for i, p in enumerate(pads):
            keys[i, :, p:start] = layer.keys[0, :, : start - p]
            values[i, :, p:start] = layer.values[0, :, : start - p]
        cache.update(keys, values, index)
    if start < width - 1:
        positions = (mask.long().cumsum(-1) - 1).clamp(min=0)  # generate's own positions: real tokens before each one
        with torch.no_grad():
            model(
                input_ids=input_ids[:, start : width - 1],
                attention_mask=mask[:, : width - 1],
                position_ids=positions[:, start : width - 1],
                past_key_values=cache,
                use_cache=True,
            )
    return cache


def install_prefix_cache(model: Any) -> None:
    """Wrap ``model.generate`` (an instance attribute, as ``grpo.install_guided`` does) so that a batch whose rows
    repeat a prompt runs each distinct prompt once, and a batch of distinct rows that start alike (episodes after
    their first round) runs what they share once. Calls with a cache of their own or without a left-padded
    ``attention_mask`` pass through unchanged."""
    import torch

    plain_generate = model.generate

    def generate(*a: Any, **kw: Any) -> Any:
        input_ids, mask = kw.get("input_ids"), kw.get("attention_mask")
        if a or input_ids is None or mask is None or kw.get("past_key_values") is not None or input_ids.shape[1] < 2:
            return plain_generate(*a, **kw)
        keep, index = _distinct_rows(input_ids, mask)
        if len(keep) == input_ids.shape[0]:
            common = _common_prefix_cache(model, input_ids, mask) if len(keep) > 1 else None
            return plain_generate(*a, **kw) if common is None else plain_generate(**kw, past_key_values=common)
        ids, m = input_ids[keep, :-1], mask[keep, :-1]
        # generate's own positions for a left-padded batch: the count of real tokens before each one
        positions = (m.long().cumsum(-1) - 1).clamp(min=0)
        cache = _cache(model)
        with torch.no_grad():
            model(input_ids=ids, attention_mask=m, position_ids=positions, past_key_values=cache, use_cache=True)
        cache.reorder_cache(index)
        return plain_generate(**kw, past_key_values=cache)

    model.generate = generate


def shared_prefix_logps(model: Any, input_ids: Any, attention_mask: Any, logits_to_keep: int, temperature: float) -> tuple[Any, Any]:
    """Log-probabilities of the last ``logits_to_keep`` tokens of each row (the completion) under ``model``,
    with logits divided by ``temperature`` as TRL does, and those logits; each distinct prompt (the tokens
    before them, with its mask) is run once and its key/value cache shared by its rows. Positions are
    the plain forward pass's (0, 1, ... over the padded row), so the numbers are the full pass's. Raises
    ValueError for a model in training with gradient checkpointing on: its layers drop the cache, and the
    completion would be scored without its prompt."""
    import torch
    from trl.trainer.utils import selective_log_softmax

    if model.training and checkpointing(model):
        raise ValueError("shared_prefix_logps needs the key/value cache, which gradient checkpointing drops in training: turn one of them off")
    prompt_len = input_ids.shape[1] - logits_to_keep
    prompt_ids, prompt_mask = input_ids[:, :prompt_len], attention_mask[:, :prompt_len]
    keep, index = _distinct_rows(prompt_ids, prompt_mask)
    cache = _cache(model)
    first = model(input_ids=prompt_ids[keep], attention_mask=prompt_mask[keep], past_key_values=cache, use_cache=True, logits_to_keep=1)
    cache.reorder_cache(index)
    completion = input_ids[:, prompt_len:]
    rest = model(input_ids=completion, attention_mask=attention_mask, past_key_values=cache, use_cache=True)
    # The prompt's last position predicts the first completion token; each completion position the next.
    logits = torch.cat([first.logits[index, -1:, :], rest.logits[:, :-1, :]], dim=1) / temperature
    return selective_log_softmax(logits, completion), logits


__all__ = ["checkpointing", "install_prefix_cache", "shared_prefix_logps"]
