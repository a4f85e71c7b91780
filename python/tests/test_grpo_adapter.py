"""GRPO from an SFT adapter, and flat groups (all rewards equal) left out of the loss."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from fake_server import FakeRrl
from rrl_client.client import RrlClient
from rrl_client.grpo import build_trainer, parse_args
from rrl_client.grpo_trainer import flat_groups
from tiny_model import tiny_model, tiny_tokenizer


def sft_adapter(tmp_path: Path, tok: Any) -> Path:
    """A LoRA adapter with non-zero weights, saved the way rrl_client.sft saves one."""
    from peft import LoraConfig, get_peft_model

    model = get_peft_model(tiny_model(tok), LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", task_type="CAUSAL_LM"))
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.05)
    model.save_pretrained(str(tmp_path / "adapter"))
    return tmp_path / "adapter"


def test_grpo_trains_on_from_the_sft_adapter(fake: FakeRrl, tmp_path: Path) -> None:
    tok = tiny_tokenizer()
    adapter = sft_adapter(tmp_path, tok)
    args = parse_args(
        [
            "--model",
            "unused",
            "--adapter",
            str(adapter),
            "--steps",
            "1",
            "--num-generations",
            "4",
            "--prompts-per-step",
            "2",
            "--max-completion-length",
            "12",
            "--learning-rate",
            "0.05",
            "--output-dir",
            str(tmp_path / "grpo"),
            "--cpu",
            "--seed",
            "1",
            "--keep-flat-groups",
        ]
    )
    trainer, _ = build_trainer(args, RrlClient(fake.url), tiny_model(tok), tok, ["cartpole-balance", "iris-classify"])
    params = dict(trainer.model.named_parameters())
    loaded = {n: p.detach().clone() for n, p in params.items() if "lora_B" in n and ".default." in n}
    assert loaded and all(p.abs().sum() > 0 for p in loaded.values()), "the SFT adapter's weights were loaded, not a new zero adapter"
    assert all(params[n].requires_grad for n in loaded), "the loaded adapter trains"
    # TRL 1.13 keeps a frozen copy of a pretrained adapter as the KL reference (adapter "ref"), not the bare base model
    assert "ref" in trainer.model.peft_config
    ref = {n.replace(".ref.", ".default."): p.detach().clone() for n, p in params.items() if ".ref." in n}
    assert all(torch.equal(ref[n], p) for n, p in loaded.items())
    trainer.train()
    after = dict(trainer.model.named_parameters())
    assert any(not torch.equal(p, after[n].detach()) for n, p in loaded.items()), "GRPO moved the adapter"
    assert all(torch.equal(p, after[n.replace(".default.", ".ref.")].detach()) for n, p in ref.items()), "the reference stayed put"
    # before its first update the policy is the reference, token for token: the loss's log-probabilities and the
    # reference's are the same numbers, so the first step's KL is 0 (a shared prompt scored wrong shows here first)
    assert trainer.state.log_history[0]["kl"] == pytest.approx(0.0, abs=1e-5)


@pytest.mark.parametrize("shared", [True, False])
def test_the_first_step_s_kl_is_zero_both_ways(fake: FakeRrl, tmp_path: Path, shared: bool) -> None:
    tok = tiny_tokenizer()
    adapter = sft_adapter(tmp_path, tok)
    argv = ["--model", "unused", "--adapter", str(adapter), "--steps", "1", "--num-generations", "4", "--prompts-per-step", "2"]
    argv += ["--max-completion-length", "12", "--output-dir", str(tmp_path / "grpo"), "--cpu", "--seed", "1", "--keep-flat-groups", "--beta", "0.1"]
    args = parse_args([*argv, "--shared-prefix" if shared else "--no-shared-prefix"])
    trainer, _ = build_trainer(args, RrlClient(fake.url), tiny_model(tok), tok, ["cartpole-balance", "iris-classify"])
    assert trainer.args.gradient_checkpointing is not shared  # the shared prompt's cache needs it off
    trainer.train()
    assert trainer.state.log_history[0]["kl"] == pytest.approx(0.0, abs=1e-5)


def test_flat_groups_are_the_groups_of_equal_rewards() -> None:
    adv = torch.tensor([0.0, 0.0, 0.0, 0.0, 1.2, -1.2, 0.0, 0.0])
    assert flat_groups(adv, 4).tolist() == [True] * 4 + [False] * 4


def test_a_step_of_flat_groups_moves_nothing(fake: FakeRrl, tmp_path: Path) -> None:
    tok = tiny_tokenizer()
    # every completion gets the same reward: each group is flat
    fake.score = lambda task, text: {"reward": 0.0, "result": {"status": "invalid", "score": None, "reason": "x", "job": None}}  # type: ignore[method-assign]
    common = [
        "--model",
        "unused",
        "--steps",
        "1",
        "--num-generations",
        "2",
        "--prompts-per-step",
        "1",
        "--max-completion-length",
        "8",
        "--learning-rate",
        "0.05",
        "--output-dir",
        str(tmp_path),
        "--cpu",
        "--seed",
        "1",
        "--beta",
        "0.5",
        "--format-weight",
        "0",
    ]
    moved = {}
    for keep in (False, True):
        trainer, _ = build_trainer(parse_args(common + (["--keep-flat-groups"] if keep else [])), RrlClient(fake.url), tiny_model(tok), tok, ["iris-classify"])
        # a non-zero adapter, so that the KL term to the adapter-free reference has a gradient
        with torch.no_grad():
            for n, p in trainer.model.named_parameters():
                if "lora_B" in n:
                    p.normal_(0, 0.05)
        before = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if "lora_" in n}
        trainer.train()
        after = dict(trainer.model.named_parameters())
        moved[keep] = any(not torch.equal(p, after[n].detach()) for n, p in before.items())
    assert moved == {False: False, True: True}, "a flat group moves the model through the KL term unless it is skipped"


def unscorable_every_third(fake: FakeRrl) -> None:
    """The fake harness answers null (unscorable) for its 1st, 4th, 7th ... completion and 0.1 x its
    call number for the others (accepted, changed specs)."""
    calls = iter(range(10_000))

    def score(task: str, text: str) -> dict[str, Any]:
        i = next(calls)
        if i % 3 == 0:
            return {"reward": None, "result": {"status": "failed", "score": None, "reason": "unscorable: score-timeout", "job": f"job-{i}", "unchanged": False}}
        return {
            "reward": 0.1 * i,
            "result": {"status": "ok", "score": {"normalized": 0.1 * i, "stderr": 0.01}, "reason": None, "job": f"job-{i}", "unchanged": False},
        }

    fake.score = score  # type: ignore[method-assign]


def test_an_unscorable_completion_is_left_out_of_the_loss(fake: FakeRrl, tmp_path: Path) -> None:
    from trl.trainer.utils import nanstd

    tok = tiny_tokenizer()
    unscorable_every_third(fake)
    # the default compact form: the format reward is on (weight 0.5), as in the run of the issue
    args = parse_args(
        [
            "--model",
            "unused",
            "--steps",
            "1",
            "--num-generations",
            "4",
            "--prompts-per-step",
            "2",
            "--max-completion-length",
            "8",
            "--output-dir",
            str(tmp_path),
            "--cpu",
            "--seed",
            "1",
        ]
    )
    trainer, reward = build_trainer(args, RrlClient(fake.url), tiny_model(tok), tok, ["iris-classify"])
    seen: list[dict[str, Any]] = []
    plain = trainer._generate_and_score_completions
    trainer._generate_and_score_completions = lambda inputs: seen.append(plain(inputs)) or seen[-1]
    trainer.train()
    out = seen[0]
    harness = reward.last_rewards
    null = torch.tensor([r is None for r in harness])
    assert null.tolist() == [True, False, False, True, False, False, True, False]
    # no advantage, no token in the loss (so no KL term), no share of the normaliser
    assert out["advantages"][null].eq(0).all()
    assert out["completion_mask"][null].eq(0).all() and out["completion_mask"][~null].sum(dim=1).gt(0).all()
    assert int(out["num_items_in_batch"]) == int(out["completion_mask"].sum())
    # the scored completions' advantages are computed over the scored ones of their group only
    totals = torch.tensor([float("nan") if r is None else r for r in harness]).view(2, 4)
    want = (totals - torch.nanmean(totals, dim=1, keepdim=True)) / (nanstd(totals, dim=1).unsqueeze(1) + 1e-4)
    assert torch.allclose(out["advantages"][~null], want.flatten()[~null], atol=1e-4)
    assert trainer.state.log_history[0]["unscorable_share"] == pytest.approx(3 / 8)


def test_a_null_is_left_out_whatever_another_reward_function_says(fake: FakeRrl, tmp_path: Path) -> None:
    tok = tiny_tokenizer()
    unscorable_every_third(fake)
    args = parse_args(
        [
            "--model",
            "unused",
            "--steps",
            "1",
            "--num-generations",
            "4",
            "--prompts-per-step",
            "2",
            "--max-completion-length",
            "8",
            "--output-dir",
            str(tmp_path),
            "--cpu",
            "--seed",
            "1",
            "--format-weight",
            "0",
            "--keep-flat-groups",
        ]
    )

    def length(prompts: Any, completions: Any, **kw: Any) -> list[float]:  # a user's own reward function: always a number
        return [float(len(str(c))) for c in completions]

    trainer, reward = build_trainer(args, RrlClient(fake.url), tiny_model(tok), tok, ["iris-classify"])
    trainer.reward_funcs.append(length)
    trainer.reward_func_names.append("length")
    trainer.reward_processing_classes.append(None)
    trainer.reward_weights = torch.tensor([1.0, 1.0])
    seen: list[dict[str, Any]] = []
    plain = trainer._generate_and_score_completions
    trainer._generate_and_score_completions = lambda inputs: seen.append(plain(inputs)) or seen[-1]
    trainer.train()
    null = torch.tensor([r is None for r in reward.last_rewards])
    assert null.any() and seen[0]["completion_mask"][null].eq(0).all() and seen[0]["advantages"][null].eq(0).all()
