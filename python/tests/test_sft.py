"""SFT smoke test: TRL's SFTTrainer with a LoRA adapter on a tiny random model and rows as `rrl export sft` writes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from rrl_client.sft import build_trainer, losses, main, parse_args, read_rows
from tiny_model import tiny_model, tiny_tokenizer


def write_rows(path: Path, n: int = 6) -> None:
    rows = []
    for i in range(n):
        patch = json.dumps({"algorithm": {"learningRate": 0.01 * (1 + i % 2)}})
        messages = [{"role": "system", "content": "Edit the spec."}, {"role": "user", "content": f"task t{i % 2}"}, {"role": "assistant", "content": patch}]
        rows.append({"messages": messages, "task": f"t{i % 2}", "score": 0.9, "reward": 0.2, "run": "r", "job": i})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_sft_moves_the_lora_adapter_only_and_the_loss_falls(tmp_path: Path) -> None:
    data = tmp_path / "sft.jsonl"
    write_rows(data)
    tok = tiny_tokenizer()
    model = tiny_model(tok)
    with torch.no_grad():  # random 0.02-scale tied embeddings bound every logit near 0; give the head some range to learn with
        model.get_input_embeddings().weight.mul_(50)
    args = parse_args(
        [
            "--model",
            "unused",
            "--data",
            str(data),
            "--output-dir",
            str(tmp_path / "out"),
            "--epochs",
            "8",
            "--learning-rate",
            "0.05",
            "--lora-r",
            "4",
            "--lora-alpha",
            "8",
            "--batch-size",
            "3",
            "--max-length",
            "256",
        ]
    )
    trainer = build_trainer(args, model, tok, read_rows(str(data)))
    # the loss counts the assistant turn only: the prompt's tokens are masked out
    first = trainer.train_dataset[0]
    counted = [t for t in first["labels"] if t != -100]
    assert 0 < len(counted) < len(first["input_ids"])
    answer = tok.decode(counted)
    assert answer.startswith('{"algorithm"') and "<|im_end|>" in answer
    lora = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if "lora_" in n}
    base = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if "lora_" not in n}
    trainer.train()
    after = dict(trainer.model.named_parameters())
    assert lora and all(not torch.equal(p, after[n].detach()) for n, p in lora.items() if "lora_B" in n), "every LoRA B moved"
    assert all(torch.equal(p, after[n].detach()) for n, p in base.items()), "a base weight changed"
    seen = losses(trainer)
    assert len(seen) == 16 and sum(seen[-3:]) < 0.7 * sum(seen[:3]), seen


def test_bad_rows_are_one_line_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}]}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:1: expected messages ending with an assistant turn"):
        read_rows(str(bad))
    bad.write_text("{nope\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: not JSON"):
        read_rows(str(bad))
    bad.write_text("\n")
    with pytest.raises(ValueError, match="no rows"):
        read_rows(str(bad))
    assert main(["--model", "unused", "--data", str(bad)]) == 2


def test_a_tokenizer_without_a_chat_template_gets_the_plain_one() -> None:
    from rrl_client.chat import PLAIN_TEMPLATE, ensure_chat_template

    tok = tiny_tokenizer()
    tok.chat_template = None
    assert ensure_chat_template(tok) and tok.chat_template == PLAIN_TEMPLATE
    assert not ensure_chat_template(tok), "a template already there is kept"
    prompt = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    head = tok.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False)
    full = tok.apply_chat_template(prompt + [{"role": "assistant", "content": "{}"}], tokenize=False)
    assert head == "### system\nS\n\n### user\nU\n\n### assistant\n"
    assert full.startswith(head) and full[len(head) :] == "{}<|im_end|>\n", "the answer follows the prompt and ends with end of sequence"


def test_a_stopped_sft_resumes_from_its_last_checkpoint(tmp_path: Path) -> None:
    from rrl_client.sft import latest_checkpoint

    data = tmp_path / "sft.jsonl"
    write_rows(data)
    out = tmp_path / "out"
    flags = ["--model", "unused", "--data", str(data), "--output-dir", str(out), "--batch-size", "3", "--max-length", "256", "--save-steps", "2"]
    tok = tiny_tokenizer()
    first = build_trainer(parse_args([*flags, "--epochs", "1"]), tiny_model(tok), tok, read_rows(str(data)))
    first.train()  # 6 rows in batches of 3: 2 steps, then "stopped"
    assert latest_checkpoint(str(out)) == str(out / "checkpoint-2")
    again = build_trainer(parse_args([*flags, "--epochs", "2"]), tiny_model(tok), tok, read_rows(str(data)))
    again.train(resume_from_checkpoint=latest_checkpoint(str(out)))
    assert again.state.global_step == 4 and len(losses(again)) == 4, "steps 3 and 4 ran; the first two came from the checkpoint"
    assert latest_checkpoint(str(out)) == str(out / "checkpoint-4")
    assert latest_checkpoint(str(tmp_path / "none")) is None
