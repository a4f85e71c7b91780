"""GRPO on `rrl serve`'s rewards: TRL's GRPOTrainer with a PEFT LoRA adapter.

The RL framework owns generation and the GRPO update; the harness owns jobs and the hidden
evaluation. Prompts come from ``GET /v1/tasks/{id}/prompt``; each group of completions is scored in
one ``POST /v1/rewards``. The trainer process gets numbers only.

    python -m rrl_client.grpo --model models/smollm2/SmolLM2-135M-Instruct.Q8_0.gguf \\
        --tasks cartpole-balance,iris-classify --steps 20 --num-generations 4

``--model`` is a Hugging Face model directory or a ``.gguf`` file (loaded with ``gguf_file=``,
dequantised to float32). ``--use-vllm`` is the GPU path (vLLM generation, colocated by default).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence, cast

from .client import RrlClient
from .rewards import TrlReward


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    """The trainer's flags."""
    p = argparse.ArgumentParser(prog="python -m rrl_client.grpo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", default=os.environ.get("RRL_URL", "http://127.0.0.1:8377"), help="rrl serve's address (env RRL_URL)")
    p.add_argument("--token-env", default="RRL_TOKEN", help="environment variable holding the bearer token, if any")
    p.add_argument("--tasks", default="", help="comma-separated task ids (default: every task of split 'train')")
    p.add_argument("--model", required=True, help="a Hugging Face model directory, or a .gguf file")
    p.add_argument("--tokenizer", default=None, help="tokenizer directory (default: the model's own)")
    p.add_argument("--output-dir", default="runs/grpo", help="where the LoRA adapter and the log go")
    p.add_argument("--steps", type=int, default=20, help="GRPO optimiser steps")
    p.add_argument("--num-generations", type=int, default=4, help="group size: completions per prompt")
    p.add_argument("--prompts-per-step", type=int, default=2, help="prompts (groups) per step")
    p.add_argument("--max-completion-length", type=int, default=256, help="generation cap in tokens")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--learning-rate", type=float, default=1e-4)
    p.add_argument("--beta", type=float, default=0.0, help="KL coefficient (0: no reference model)")
    p.add_argument("--lora-r", type=int, default=16)
    p.add_argument("--lora-alpha", type=int, default=32)
    p.add_argument("--lora-targets", default="all-linear", help="LoRA target modules: 'all-linear' or a comma list")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--use-vllm", action="store_true", help="GPU path: generate with vLLM")
    p.add_argument("--vllm-mode", default="colocate", choices=["colocate", "server"])
    p.add_argument("--cpu", action="store_true", help="force the CPU (default when no GPU is visible)")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    args = p.parse_args(argv)
    for name in ("steps", "num_generations", "prompts_per_step", "max_completion_length"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.num_generations < 2:
        p.error("--num-generations must be at least 2 (GRPO compares completions within a group)")
    return args


def load_model(model: str, tokenizer: Optional[str] = None, dtype: Any = None) -> tuple[Any, Any]:
    """Model and tokenizer from a directory or a .gguf file (``gguf_file=``, dequantised by transformers)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(model)
    kwargs: dict[str, Any] = {}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if path.suffix == ".gguf":
        if not path.is_file():
            raise FileNotFoundError(f"--model: no GGUF file at {path}")
        m = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, **kwargs)
        unmark_gguf(m)
        tok = AutoTokenizer.from_pretrained(tokenizer or str(path.parent), **({} if tokenizer else {"gguf_file": path.name}))
    else:
        m = AutoModelForCausalLM.from_pretrained(model, **kwargs)
        tok = AutoTokenizer.from_pretrained(tokenizer or model)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return m, tok


def unmark_gguf(model: Any) -> None:
    """Let a model loaded from GGUF be trained: transformers dequantises every GGUF tensor on load, but
    leaves a GGUF "quantizer" marker that makes Trainer refuse the model; drop it, after checking
    that every weight really is a plain floating-point tensor."""
    not_float = [n for n, p in model.named_parameters() if not p.dtype.is_floating_point]
    if not_float:
        raise ValueError(f"--model: GGUF tensors not dequantised: {not_float[:3]}")
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config


def build_dataset(client: RrlClient, task_ids: Sequence[str], rows: int) -> Any:
    """A dataset of ``rows`` rows cycling over the tasks: ``prompt`` (chat messages from the server) and ``task``."""
    from datasets import Dataset

    prompts = {t: client.prompt(t) for t in task_ids}
    return Dataset.from_list([{"prompt": prompts[task_ids[i % len(task_ids)]], "task": task_ids[i % len(task_ids)]} for i in range(rows)])


def grpo_config(args: argparse.Namespace, cpu: bool) -> Any:
    """TRL's GRPOConfig for these flags; one optimiser step sees ``prompts_per_step`` groups."""
    from trl.trainer.grpo_config import GRPOConfig

    extra: dict[str, Any] = {}
    if args.use_vllm:
        extra.update(use_vllm=True, vllm_mode=args.vllm_mode)
    if cpu:
        extra.update(use_cpu=True, bf16=False, fp16=False)
    return GRPOConfig(
        output_dir=args.output_dir,
        max_steps=args.steps,
        per_device_train_batch_size=args.num_generations * args.prompts_per_step,
        gradient_accumulation_steps=1,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        temperature=args.temperature,
        learning_rate=args.learning_rate,
        beta=args.beta,
        seed=args.seed,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        **extra,
    )


def build_trainer(args: argparse.Namespace, client: RrlClient, model: Any, tokenizer: Any, task_ids: Sequence[str]) -> tuple[Any, TrlReward]:
    """The GRPOTrainer (LoRA adapter on ``model``) and its reward function."""
    import torch
    from peft import LoraConfig
    from trl.trainer.grpo_trainer import GRPOTrainer

    cpu = args.cpu or not torch.cuda.is_available()
    targets: Any = args.lora_targets if args.lora_targets == "all-linear" else args.lora_targets.split(",")
    peft_config = LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=0.0, target_modules=targets, task_type="CAUSAL_LM")
    reward = TrlReward(client)
    dataset = build_dataset(client, task_ids, args.steps * args.prompts_per_step)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[cast(Any, reward)],
        args=grpo_config(args, cpu),
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=peft_config,
    )
    return trainer, reward


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run GRPO; writes the adapter and ``log.jsonl`` (one line per step) under --output-dir."""
    args = parse_args(argv)
    import torch
    from transformers import TrainerCallback

    if args.threads:
        torch.set_num_threads(args.threads)
    client = RrlClient(args.url, os.environ.get(args.token_env) or None)
    task_ids = [t for t in args.tasks.split(",") if t] or [t["id"] for t in client.tasks() if t.get("split") == "train"]
    if not task_ids:
        print("no tasks: pass --tasks or start rrl serve with train tasks", file=sys.stderr)
        return 2
    model, tokenizer = load_model(args.model, args.tokenizer, None if torch.cuda.is_available() else torch.float32)
    trainer, reward = build_trainer(args, client, model, tokenizer, task_ids)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / "log.jsonl"
    started = time.time()

    class LogLines(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            logs: Optional[dict[str, Any]] = kwargs.get("logs")
            if not logs or "reward" not in logs:
                return
            scores = [r["score"]["normalized"] for r in reward.last_results if r["score"] is not None]
            statuses = [r["status"] for r in reward.last_results]
            line = {
                "step": state.global_step,
                "wall_s": round(time.time() - started, 2),
                "outer/reward": logs.get("reward"),
                "outer/reward_std": logs.get("reward_std"),
                "outer/valid_share": (sum(s != "invalid" for s in statuses) / len(statuses)) if statuses else None,
                "outer/score_best": max(scores, default=None),
                "completion_length": logs.get("completions/mean_length"),
            }
            with log_path.open("a") as f:
                f.write(json.dumps(line) + "\n")
            print(json.dumps(line), flush=True)

    trainer.add_callback(LogLines())
    trainer.train()
    trainer.save_model(str(out / "adapter"))
    print(f"adapter saved to {out / 'adapter'}; statuses {reward.totals}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
