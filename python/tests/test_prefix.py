"""rrl_client.prefix: a group's shared prompt computed once gives the same tokens in generation and the same
log-probabilities and gradients in the update as the full pass, on tiny random models of both architectures
in use (Llama-like as SmolLM2, Gemma 3 with sliding-window layers; left-padded rows of two prompts of
different lengths, as GRPO's batches are)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("trl", reason="SKIPPED: TRL is missing: run python/setup-venv.sh")


def batch(tok: Any, completions: bool) -> tuple[Any, Any, int]:
    """Rows of two prompts (3 each, group after group, left-padded) and, with ``completions``, a completion each."""
    import torch

    prompts = ["Tune the job for the cars table.", "Penguins: species from beak and flipper lengths, please."]
    rows = [p for p in prompts for _ in range(3)]
    ids = [tok(r, add_special_tokens=False)["input_ids"] for r in rows]
    width = max(len(i) for i in ids)
    pad = tok.pad_token_id
    input_ids = [[pad] * (width - len(i)) + i for i in ids]
    mask = [[0] * (width - len(i)) + [1] * len(i) for i in ids]
    k = 0
    if completions:
        answers = ['{"seed": 1}x', '{"seed": 2}yz', "{}ab", '{"a": 1}', "ok!", "no?"]
        tails = [tok(a, add_special_tokens=False)["input_ids"] for a in answers]
        k = max(len(t) for t in tails)
        for row, m, t in zip(input_ids, mask, tails):
            row += t + [pad] * (k - len(t))
            m += [1] * len(t) + [0] * (k - len(t))
    return torch.tensor(input_ids), torch.tensor(mask), k


def tiny(kind: str, tok: Any, seed: int) -> Any:
    """A tiny random causal LM of either architecture in use."""
    from tiny_model import tiny_gemma3, tiny_model

    return tiny_model(tok, seed=seed) if kind == "llama" else tiny_gemma3(tok, seed=seed)


@pytest.mark.parametrize("kind", ["llama", "gemma3"])
def test_generation_from_the_shared_prompt_is_the_plain_generation(kind: str) -> None:
    import torch

    from rrl_client.prefix import install_prefix_cache
    from tiny_model import tiny_tokenizer

    tok = tiny_tokenizer()
    model = tiny(kind, tok, 3)
    input_ids, mask, _ = batch(tok, completions=False)
    kw = {"max_new_tokens": 12, "do_sample": False, "pad_token_id": tok.pad_token_id, "eos_token_id": tok.eos_token_id}
    with torch.no_grad():
        plain = model.generate(input_ids=input_ids, attention_mask=mask, **kw)
    install_prefix_cache(model)
    with torch.no_grad():
        shared = model.generate(input_ids=input_ids, attention_mask=mask, **kw)
    assert torch.equal(plain, shared)


@pytest.mark.parametrize("kind", ["llama", "gemma3"])
def test_shared_prefix_logps_and_gradients_are_the_full_pass(kind: str) -> None:
    import torch
    from trl.trainer.utils import selective_log_softmax

    from rrl_client.prefix import shared_prefix_logps
    from tiny_model import tiny_tokenizer

    tok = tiny_tokenizer()
    model = tiny(kind, tok, 4)
    input_ids, mask, k = batch(tok, completions=True)
    temperature = 0.7

    def full() -> Any:
        logits = model(input_ids=input_ids, attention_mask=mask, use_cache=False).logits[:, :-1, :][:, -k:, :] / temperature
        return selective_log_softmax(logits, input_ids[:, -k:])

    def grads(logps: Any) -> dict[str, Any]:
        model.zero_grad()
        (logps * mask[:, -k:]).sum().backward()
        return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}

    want = full()
    got, _ = shared_prefix_logps(model, input_ids, mask, k, temperature)
    assert got.shape == want.shape
    real = mask[:, -k:].bool()
    assert torch.allclose(got[real], want[real], atol=1e-5, rtol=1e-5)
    g_want, g_got = grads(full()), grads(shared_prefix_logps(model, input_ids, mask, k, temperature)[0])
    assert g_want.keys() == g_got.keys() and g_want
    for name in g_want:
        assert torch.allclose(g_got[name], g_want[name], atol=1e-5, rtol=1e-4), name


def test_shared_prefix_logps_refuses_a_model_whose_checkpointed_layers_drop_the_cache() -> None:
    from rrl_client.prefix import shared_prefix_logps
    from tiny_model import tiny_tokenizer

    tok = tiny_tokenizer()
    model = tiny("llama", tok, 4)
    input_ids, mask, k = batch(tok, completions=True)
    model.gradient_checkpointing_enable()
    model.train()
    with pytest.raises(ValueError, match="gradient checkpointing"):
        shared_prefix_logps(model, input_ids, mask, k, 1.0)
    model.eval()  # in eval the layers keep the cache: allowed
    shared_prefix_logps(model, input_ids, mask, k, 1.0)


@pytest.mark.parametrize("kind", ["llama", "gemma3"])
def test_rows_that_start_alike_share_their_start_and_generate_as_plain_rows(kind: str) -> None:
    import torch

    from rrl_client.prefix import MIN_SHARED_TOKENS, _common_prefix_cache, install_prefix_cache
    from tiny_model import tiny_tokenizer

    tok = tiny_tokenizer()
    model = tiny(kind, tok, 5)
    task = "System: write JSON. Task: the cars table, predict mpg from weight."
    rows = [f"{task} Job 1 succeeded.", f"{task} x", f"{task} Job 1 failed badly: try again.", task]  # an episode's rounds, apart
    ids = [tok(r, add_special_tokens=False)["input_ids"] for r in rows]
    width = max(len(i) for i in ids)
    input_ids = torch.tensor([[tok.pad_token_id] * (width - len(i)) + i for i in ids])
    mask = torch.tensor([[0] * (width - len(i)) + [1] * len(i) for i in ids])
    kw = {"max_new_tokens": 12, "do_sample": False, "pad_token_id": tok.pad_token_id, "eos_token_id": tok.eos_token_id}
    with torch.no_grad():
        plain = model.generate(input_ids=input_ids, attention_mask=mask, **kw)
    shared = _common_prefix_cache(model, input_ids, mask)
    # Gemma 3's sliding-window layers keep only their window: the shared start cannot be copied, the rows run in full.
    assert (shared is not None) == (kind == "llama") and len(tok(task)["input_ids"]) >= MIN_SHARED_TOKENS
    install_prefix_cache(model)
    with torch.no_grad():
        assert torch.equal(model.generate(input_ids=input_ids, attention_mask=mask, **kw), plain)
