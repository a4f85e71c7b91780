"""Supervised fine-tuning on the harness's own best jobs (the warm start of expert iteration).

    rrl export sft runs/a runs/b --out data/sft.jsonl
    python -m rrl_client.sft --model models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf \\
        --data data/sft.jsonl --output-dir runs/sft

TRL's SFTTrainer with a LoRA adapter, written to ``OUTPUT_DIR/adapter``. Each row of ``rrl export sft``
is a conversation ``messages: [system, user, assistant]``; it is trained as TRL's conversational
prompt-completion pair (the system and user turns as the prompt, the assistant turn as the
completion), so that TRL's completion-only loss counts the assistant's tokens alone. That works
with any chat template; TRL's ``assistant_only_loss`` would need ``{% generation %}`` markers, which
SmolLM2's template lacks and TRL 1.13 adds only for the model families it knows.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .grpo import load_model


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The fine-tuner's flags."""
    p = argparse.ArgumentParser(prog="python -m rrl_client.sft", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="a Hugging Face model directory, or a .gguf file")
    p.add_argument("--tokenizer", default=None, help="tokenizer directory (default: the model's own)")
    p.add_argument("--data", required=True, help="JSON Lines from `rrl export sft`")
    p.add_argument("--output-dir", default="runs/sft", help="where the LoRA adapter (adapter/) and log.jsonl go")
    p.add_argument("--epochs", type=float, default=3.0)
    p.add_argument("--learning-rate", type=float, default=2e-4)
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--lora-r", type=int, default=16)
    p.add_argument("--lora-alpha", type=int, default=32)
    p.add_argument("--lora-targets", default="all-linear", help="LoRA target modules: 'all-linear' or a comma list")
    p.add_argument("--max-length", type=int, default=1024, help="tokens per row (prompt and answer; longer rows are cut)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    p.add_argument(
        "--save-steps",
        type=int,
        default=0,
        help="keep a checkpoint every N steps in OUTPUT_DIR (the last two), and resume from the newest one found there (0: none)",
    )
    args = p.parse_args(argv)
    if args.save_steps < 0:
        p.error("--save-steps must be 0 or more")
    if args.epochs <= 0 or args.batch_size < 1 or args.max_length < 8:
        p.error("--epochs must be positive, --batch-size at least 1 and --max-length at least 8")
    return args


def read_rows(path: str) -> list[dict[str, Any]]:
    """The rows of an ``rrl export sft`` file as prompt-completion pairs; a bad line is a one-line error."""
    rows: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{n}: not JSON ({e.msg})") from None
            messages: Any = row.get("messages") if isinstance(row, dict) else None
            ok = (
                isinstance(messages, list)
                and len(messages) >= 2
                and all(isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str) for m in messages)
            )
            if not ok or messages[-1]["role"] != "assistant":
                raise ValueError(f"{path}:{n}: expected messages ending with an assistant turn, as `rrl export sft` writes")
            rows.append({"prompt": messages[:-1], "completion": messages[-1:], "task": str(row.get("task", ""))})
    if not rows:
        raise ValueError(f"{path}: no rows (did `rrl export sft` keep any job?)")
    return rows


def sft_config(args: argparse.Namespace) -> Any:
    """TRL's SFTConfig for these flags: CPU, completion-only loss, checkpoints only with ``--save-steps``."""
    import torch
    from trl.trainer.sft_config import SFTConfig

    extra: dict[str, Any] = {} if torch.cuda.is_available() else {"use_cpu": True, "bf16": False, "fp16": False}
    return SFTConfig(
        output_dir=args.output_dir,
        num_train_epochs=args.epochs,
        learning_rate=args.learning_rate,
        per_device_train_batch_size=args.batch_size,
        max_length=args.max_length,
        completion_only_loss=True,
        seed=args.seed,
        logging_steps=1,
        save_strategy="steps" if getattr(args, "save_steps", 0) else "no",
        **({"save_steps": args.save_steps, "save_total_limit": 2} if getattr(args, "save_steps", 0) else {}),
        report_to="none",
        disable_tqdm=True,
        **extra,
    )


def latest_checkpoint(output_dir: str) -> str | None:
    """The newest ``checkpoint-N`` folder Trainer left in ``output_dir`` (a stopped run resumes from it), or None."""
    found = [p for p in Path(output_dir).glob("checkpoint-*") if p.is_dir() and p.name.split("-")[-1].isdigit()]
    return str(max(found, key=lambda p: int(p.name.split("-")[-1]))) if found else None


def build_trainer(args: argparse.Namespace, model: Any, tokenizer: Any, rows: Sequence[dict[str, Any]]) -> Any:
    """The SFTTrainer: a new LoRA adapter on ``model``, trained on ``rows``."""
    from datasets import Dataset
    from peft import LoraConfig
    from trl.trainer.sft_trainer import SFTTrainer

    targets: Any = args.lora_targets if args.lora_targets == "all-linear" else args.lora_targets.split(",")
    peft_config = LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=0.0, target_modules=targets, task_type="CAUSAL_LM")
    data = Dataset.from_list([{"prompt": r["prompt"], "completion": r["completion"]} for r in rows])
    return SFTTrainer(model=model, args=sft_config(args), train_dataset=data, processing_class=tokenizer, peft_config=peft_config)


def losses(trainer: Any) -> list[float]:
    """The training loss of every logged step, in order."""
    return [float(h["loss"]) for h in trainer.state.log_history if "loss" in h]


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Fine-tune as ``args`` say; writes ``OUTPUT_DIR/adapter`` and ``OUTPUT_DIR/log.jsonl`` (one line per step) and returns the summary."""
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    rows = read_rows(args.data)
    model, tokenizer = load_model(args.model, args.tokenizer, None if torch.cuda.is_available() else torch.float32)
    trainer = build_trainer(args, model, tokenizer, rows)
    resume = latest_checkpoint(args.output_dir) if getattr(args, "save_steps", 0) else None
    if resume:
        print(f"resuming from {resume}", file=sys.stderr, flush=True)
    trainer.train(resume_from_checkpoint=resume)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    trainer.save_model(str(out / "adapter"))
    steps = [h for h in trainer.state.log_history if "loss" in h]
    (out / "log.jsonl").write_text("".join(json.dumps({"step": h.get("step"), "loss": h["loss"], "epoch": h.get("epoch")}) + "\n" for h in steps))
    seen = losses(trainer)
    return {
        "rows": len(rows),
        "tasks": sorted({r["task"] for r in rows}),
        "steps": trainer.state.global_step,
        "loss_first": seen[0] if seen else None,
        "loss_last": seen[-1] if seen else None,
        "adapter": str(out / "adapter"),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Fine-tune and print the summary line; a bad --data file is a one-line error (exit 2)."""
    args = parse_args(argv)
    try:
        read_rows(args.data)
    except (OSError, ValueError) as e:
        print(f"--data: {e}", file=sys.stderr)
        return 2
    print(json.dumps(run(args)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
