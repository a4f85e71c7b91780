"""GRPO smoke test: TRL's GRPOTrainer with a LoRA adapter on a tiny random model, rewards from the server."""

from __future__ import annotations

import pytest
import torch

from fake_server import FakeRrl
from rrl_client.client import RrlClient
from rrl_client.grpo import build_trainer, parse_args
from tiny_model import tiny_model, tiny_tokenizer


def test_two_grpo_steps_update_the_lora_adapter(fake: FakeRrl, tmp_path: pytest.TempPathFactory) -> None:
    tok = tiny_tokenizer()
    model = tiny_model(tok)
    args = parse_args(
        [
            "--model",
            "unused",
            "--steps",
            "2",
            "--num-generations",
            "4",
            "--prompts-per-step",
            "2",
            "--max-completion-length",
            "16",
            "--learning-rate",
            "0.05",
            "--lora-r",
            "4",
            "--lora-alpha",
            "8",
            "--output-dir",
            str(tmp_path),
            "--cpu",
            "--seed",
            "1",
        ]
    )
    client = RrlClient(fake.url)
    trainer, reward = build_trainer(args, client, model, tok, ["cartpole-balance", "iris-classify"])
    lora = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if "lora_" in n}
    assert lora and all(p.requires_grad for n, p in trainer.model.named_parameters() if "lora_" in n)
    frozen = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if "lora_" not in n}

    trainer.train()

    after = dict(trainer.model.named_parameters())
    changed = [n for n, p in lora.items() if not torch.equal(p, after[n].detach())]
    assert changed, "no LoRA weight changed after two GRPO steps"
    assert all(torch.equal(p, after[n].detach()) for n, p in frozen.items()), "a frozen base weight changed"
    # every completion was scored by the server, each group inside one call per task
    assert sum(len(c["completions"]) for c in fake.reward_calls) == 2 * 2 * 4
    assert all(len(c["completions"]) % 4 == 0 for c in fake.reward_calls)
    assert len(fake.reward_calls) <= 2 * 2
    assert sum(reward.totals.values()) == 16
    logged = [h for h in trainer.state.log_history if "reward" in h]
    assert len(logged) == 2


def test_a_gguf_model_loads_and_trains(fake: FakeRrl, tmp_path: pytest.TempPathFactory) -> None:
    from rrl_client.grpo import load_model
    from tiny_model import write_tiny_gguf

    gguf_path = f"{tmp_path}/tiny.gguf"
    write_tiny_gguf(gguf_path)
    model, tok = load_model(gguf_path, dtype=torch.float32)
    # transformers dequantised the file: a plain float model, no quantizer left to block training
    assert type(model).__name__ == "LlamaForCausalLM" and model.dtype == torch.float32
    assert not model.is_quantized and model.hf_quantizer is None
    # the tokenizer came out of the file, with its chat template and end-of-sequence token
    assert tok.eos_token == "<|im_end|>" and tok.eos_token_id == 260 and tok.convert_tokens_to_ids('{"') == 256
    text = tok.apply_chat_template([{"role": "user", "content": 'hi {"seed": 3}'}], add_generation_prompt=True, tokenize=False)
    assert text == '<|im_start|>user\nhi {"seed": 3}<|im_end|>\n<|im_start|>assistant\n'
    args = parse_args(
        [
            "--model",
            gguf_path,
            "--steps",
            "1",
            "--num-generations",
            "2",
            "--prompts-per-step",
            "1",
            "--max-completion-length",
            "8",
            "--output-dir",
            str(tmp_path),
            "--cpu",
        ]
    )
    trainer, reward = build_trainer(args, RrlClient(fake.url), model, tok, ["iris-classify"])
    trainer.train()
    assert trainer.state.global_step == 1 and sum(reward.totals.values()) == 2
    assert fake.reward_calls and fake.reward_calls[0]["task"] == "iris-classify"


def test_the_frozen_control_run_samples_the_same_prompts_and_never_updates(fake: FakeRrl, tmp_path: pytest.TempPathFactory) -> None:
    from rrl_client.grpo_steps import run_frozen

    tok = tiny_tokenizer()
    model = tiny_model(tok)
    args = parse_args(
        [
            "--model",
            "unused",
            "--steps",
            "2",
            "--num-generations",
            "3",
            "--prompts-per-step",
            "2",
            "--max-completion-length",
            "12",
            "--output-dir",
            str(tmp_path),
            "--cpu",
            "--seed",
            "2",
            "--frozen",
        ]
    )
    trainer, reward = build_trainer(args, RrlClient(fake.url), model, tok, ["cartpole-balance", "iris-classify"])
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    lines: list[tuple[int, dict[str, float]]] = []
    run_frozen(args, trainer.model, tok, trainer.train_dataset, trainer.reward_funcs, lambda step, step_s, gen_s, logs: lines.append((step, logs)))
    assert [s for s, _ in lines] == [1, 2]
    # each step: one group per task, the same group size as GRPO (a step's calls go out in parallel, in any order)
    calls = [c["task"] for c in fake.reward_calls]
    assert sorted(calls[:2]) == sorted(calls[2:]) == ["cartpole-balance", "iris-classify"]
    assert all(len(c["completions"]) == 3 for c in fake.reward_calls)
    # the logged total is the weighted sum of the harness reward and the format reward
    assert all("rewards/format/mean" in logs and 0 < logs["completions/mean_length"] <= 12 for _, logs in lines)
    assert all(torch.equal(p, dict(trainer.model.named_parameters())[n]) for n, p in before.items())
    assert sum(reward.totals.values()) == 12
