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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from .chat import ensure_chat_template
from .client import RrlClient
from .contracts import DEFAULT_URL
from .grpo_steps import rounds_step_line, run_frozen, run_frozen_rounds, step_line
from .grpo_trainer import RrlGRPOTrainer
from .prefix import install_prefix_cache
from .prompts import prompt_dataset
from .rewards import TrlReward
from .rounds import EpisodeReward, RoundRollout, episode_line, task_router
from .shaping import FormatReward


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The trainer's flags."""
    p = argparse.ArgumentParser(prog="python -m rrl_client.grpo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", default=os.environ.get("RRL_URL", DEFAULT_URL), help="rrl serve's address (env RRL_URL)")
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
    p.add_argument("--learning-rate", type=float, default=2e-4, help="LoRA learning rate (results/llm-training.md has the learning rates tried)")
    p.add_argument(
        "--frozen", action="store_true", help="the control run: the same prompts, sampling and rewards from the model as loaded, never updated (no GRPOTrainer)"
    )
    p.add_argument(
        "--prompt-form",
        default="compact",
        choices=["compact", "full", "patch"],
        help="the prompt's form (compact: a few hundred tokens and an example spec, for small models; patch: the same, answered with a JSON Merge Patch over it)",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="jobs per episode (1 to 8): above 1, each completion is an episode of rounds with feedback (rrl_client.rounds; --prompt-form patch), paid the mean of its jobs' rewards",
    )
    p.add_argument(
        "--doc-chars",
        type=int,
        default=None,
        help="the patch prompt's documentation budget in characters (default: the server's; 0 drops the documentation)",
    )
    p.add_argument(
        "--guided",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="constrain sampling to each task's answer schema (GET /v1/tasks/{id}/schema: form=patch for --prompt-form patch, else form=spec); default on for --prompt-form patch, off otherwise; not with --use-vllm",
    )
    p.add_argument(
        "--shared-prefix",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run each group's prompt once, in generation and in the update (rrl_client.prefix); turns TRL's gradient checkpointing off, which "
        "drops the shared cache (--no-shared-prefix: every row in full, checkpointing on, for memory)",
    )
    p.add_argument(
        "--guided-engine", default="xgrammar", choices=["xgrammar", "llguidance"], help="grammar engine of --guided (xgrammar: measured, docs/llm-training.md)"
    )
    p.add_argument(
        "--format-weight",
        type=float,
        default=None,
        help="weight of the trainer-side format reward beside the harness's reward (0: off; default 0.5 for --prompt-form compact, 0 for patch: it scores a completion by the example's fields, which would pull patches towards the example)",
    )
    p.add_argument(
        "--beta", type=float, default=0.04, help="KL coefficient to the model as loaded (0: none; with LoRA the reference is the adapter switched off)"
    )
    p.add_argument("--adapter", default=None, help="start from this LoRA adapter (e.g. rrl_client.sft's OUTPUT_DIR/adapter) instead of a new one")
    p.add_argument(
        "--keep-flat-groups",
        action="store_true",
        help="train on groups whose rewards are all equal too (by default they are left out of the loss: no advantage, only KL drift); unscorable completions stay out either way",
    )
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
    if args.guided is None:
        args.guided = args.prompt_form == "patch"
    if args.format_weight is None:
        args.format_weight = 0.0 if args.prompt_form == "patch" else 0.5
    if args.guided and args.use_vllm:
        p.error("--guided constrains transformers' generate (the CPU path); with vLLM use its own structured outputs (--no-guided)")
    if args.num_generations < 2:
        p.error("--num-generations must be at least 2 (GRPO compares completions within a group)")
    if not 1 <= args.rounds <= 8:
        p.error("--rounds must be 1 to 8")
    if args.rounds > 1 and (args.prompt_form != "patch" or args.format_weight > 0 or args.use_vllm):
        p.error("--rounds above 1 needs --prompt-form patch, no format reward and the transformers path (not --use-vllm)")
    return args


def load_model(model: str, tokenizer: str | None = None, dtype: Any = None) -> tuple[Any, Any]:
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
    if ensure_chat_template(tok):
        print(f"{model}: the tokenizer has no chat template; using the plain one (rrl_client.chat.PLAIN_TEMPLATE)", file=sys.stderr)
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


def build_dataset(
    client: RrlClient, task_ids: Sequence[str], rows: int, form: str = "compact", doc_chars: int | None = None
) -> tuple[Any, dict[str, dict[str, Any]]]:
    """The prompt dataset (:func:`rrl_client.prompts.prompt_dataset`), and each task's example spec (compact form)."""
    dataset, answers = prompt_dataset(client, task_ids, rows, form, doc_chars)
    return dataset, {t: a["example"] for t, a in answers.items() if a["example"] is not None}


def prompt_router(tokenizer: Any, markers: dict[str, str]) -> Callable[[Sequence[int]], str]:
    """A function from a prompt's token ids to its task: the task whose marker (its prompt's last message
    text, unique per task) occurs in the decoded prompt. Cached per prompt."""
    cache: dict[tuple[int, ...], str] = {}

    def task_of(ids: Sequence[int]) -> str:
        key = tuple(ids)
        if key not in cache:
            text = tokenizer.decode(list(ids), skip_special_tokens=False)
            found = [t for t, marker in markers.items() if marker in text]
            if len(found) != 1:
                raise ValueError(f"--guided: cannot tell this prompt's task ({'no' if not found else len(found)} task prompts match): {text[-200:]!r}")
            cache[key] = found[0]
        return cache[key]

    return task_of


def install_guided(args: argparse.Namespace, client: RrlClient, model: Any, tokenizer: Any, dataset: Any) -> Any:
    """Constrain every ``model.generate`` call (GRPOTrainer's and the frozen run's) to each row's task schema.

    TRL 1.13's GRPOTrainer builds its transformers ``generate`` call from a GenerationConfig and has no
    way to pass a logits processor, so this wraps the model's own ``generate`` (an instance attribute,
    as transformers does for ``custom_generate``), adding one ``SchemaLogitsProcessor`` that picks each
    row's schema from its prompt. Returns that processor."""
    from .guided import GuidedDecoding

    form = "patch" if args.prompt_form == "patch" else "spec"
    tasks = sorted(set(dataset["task"]))
    schemas = {t: client.schema(t, form) for t in tasks}
    markers: dict[str, str] = {}
    for row in dataset:
        markers.setdefault(row["task"], row["prompt"][-1]["content"])
    guided = GuidedDecoding(tokenizer, vocab_size=getattr(model.config, "vocab_size", None) or len(tokenizer), engine=args.guided_engine)
    for s in schemas.values():
        guided.compile(s)
    task_of = prompt_router(tokenizer, markers)
    processor = guided.processor(lambda ids: schemas[task_of(ids)])
    plain_generate = model.generate

    def generate(*a: Any, **kw: Any) -> Any:
        extra = kw.pop("logits_processor", None) or []
        return plain_generate(*a, logits_processor=[*extra, processor], **kw)

    model.generate = generate
    model.rrl_guided = processor
    return processor


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
        # the shared prompt's key/value cache does not survive checkpointed layers (rrl_client.prefix)
        gradient_checkpointing=not getattr(args, "shared_prefix", False),
        max_steps=args.steps,
        per_device_train_batch_size=args.num_generations * args.prompts_per_step,
        gradient_accumulation_steps=1,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        temperature=args.temperature,
        learning_rate=args.learning_rate,
        beta=args.beta,
        seed=args.seed,
        shuffle_dataset=False,  # the dataset alternates tasks; a frozen run (--frozen) sees the same order
        reward_weights=[1.0, args.format_weight] if args.format_weight > 0 else None,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        **extra,
    )


def build_trainer(
    args: argparse.Namespace, client: RrlClient, model: Any, tokenizer: Any, task_ids: Sequence[str], **trainer_kwargs: Any
) -> tuple[Any, TrlReward]:
    """The trainer (``RrlGRPOTrainer``, a LoRA adapter on ``model``) and the harness's reward function (then the
    format reward, when weighted); ``trainer_kwargs`` go to GRPOTrainer as they are (e.g. ``rollout_func``)."""
    import torch
    from peft import LoraConfig

    cpu = args.cpu or not torch.cuda.is_available()
    targets: Any = args.lora_targets if args.lora_targets == "all-linear" else args.lora_targets.split(",")
    peft_config = LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=0.0, target_modules=targets, task_type="CAUSAL_LM")
    reward = TrlReward(client)
    dataset, examples = build_dataset(client, task_ids, args.steps * args.prompts_per_step, args.prompt_form, getattr(args, "doc_chars", None))
    shared = getattr(args, "shared_prefix", False)
    if shared:
        install_prefix_cache(model)  # before the grammar's wrapper: guided generation runs through it
    if args.guided:
        install_guided(args, client, model, tokenizer, dataset)
    rounds = getattr(args, "rounds", 1)
    if rounds > 1:
        trainer_kwargs.setdefault("rollout_func", RoundRollout(client, tokenizer, rounds, task_router(list(dataset))))
    funcs: list[Any] = [EpisodeReward() if rounds > 1 else reward]
    if args.format_weight > 0:
        if not examples:
            raise ValueError("--format-weight needs the example specs of --prompt-form compact or patch (or pass --format-weight 0)")
        funcs.append(FormatReward(reward, examples))
    if args.adapter:
        from peft import PeftModel

        # The adapter trains on; TRL keeps a frozen copy of it (adapter "ref") as the KL reference when beta > 0.
        model = PeftModel.from_pretrained(model, args.adapter, is_trainable=True)
    trainer = RrlGRPOTrainer(
        model=model,
        reward_funcs=funcs,
        args=grpo_config(args, cpu),
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=None if args.adapter else peft_config,
        keep_flat_groups=args.keep_flat_groups,
        shared_prefix=shared,
        **trainer_kwargs,
    )
    return trainer, reward


def main(argv: Sequence[str] | None = None) -> int:
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
    log_path.write_text("")
    started = time.time()
    best: list[float] = []

    def write(line: dict[str, Any]) -> None:
        with log_path.open("a") as f:
            f.write(json.dumps(line) + "\n")
        print(json.dumps(line), flush=True)

    def log(step: int, step_s: float, gen_s: float | None, logs: dict[str, Any]) -> None:
        write(step_line(step, time.time() - started, step_s, gen_s, logs, reward, best))

    rollout = cast(RoundRollout | None, getattr(trainer, "rollout_func", None)) if args.rounds > 1 else None

    def log_rounds(step: int, step_s: float, timing: dict[str, float], episodes: dict[str, Any], logs: dict[str, Any] | None = None) -> None:
        write(rounds_step_line(step, time.time() - started, step_s, timing, episodes, logs or {}))

    if args.frozen:
        if args.rounds > 1:
            run_frozen_rounds(args, model, tokenizer, trainer.train_dataset, client, log_rounds)
            print("frozen run done", flush=True)
            return 0
        run_frozen(args, model, tokenizer, trainer.train_dataset, trainer.reward_funcs, log)
        print(f"frozen run done; statuses {reward.totals}", flush=True)
        return 0

    step_started = [time.time()]

    class LogLines(TrainerCallback):
        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            step_started[0] = time.time()

        def on_log(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            logs: dict[str, Any] | None = kwargs.get("logs")
            if not logs or "reward" not in logs:
                return
            if rollout is not None:
                log_rounds(state.global_step, time.time() - step_started[0], dict(rollout.timing), episode_line(rollout.last), logs)
                return
            # Generation ends where the reward call begins (TRL generates, then scores).
            gen_s = reward.last_call_started - step_started[0] if reward.last_call_started > step_started[0] else None
            log(state.global_step, time.time() - step_started[0], gen_s, logs)

    trainer.add_callback(LogLines())
    trainer.train()
    trainer.save_model(str(out / "adapter"))
    print(f"adapter saved to {out / 'adapter'}" + ("" if rollout is not None else f"; statuses {reward.totals}"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
