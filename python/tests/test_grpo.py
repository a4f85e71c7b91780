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
    args = parse_args([
        "--model", "unused", "--steps", "2", "--num-generations", "4", "--prompts-per-step", "2",
        "--max-completion-length", "16", "--learning-rate", "0.05", "--lora-r", "4", "--lora-alpha", "8",
        "--output-dir", str(tmp_path), "--cpu", "--seed", "1",
    ])
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
