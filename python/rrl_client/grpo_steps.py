"""A GRPO run's steps as lines of ``log.jsonl`` (the harness's reward, not the shaped sum; the valid share;
the hidden scores; the distinct accepted specs; the timing), and the frozen control run that samples and
scores the same prompts without an update, logged the same way."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

from .extract import extract_json_object
from .rewards import TrlReward


def generation_kwargs(args: argparse.Namespace, tokenizer: Any) -> dict[str, Any]:
    """Sampling as GRPOTrainer does it without vLLM (its defaults: top_p 1, top_k off, no repetition penalty)."""
    return {
        "max_new_tokens": args.max_completion_length,
        "do_sample": True,
        "temperature": args.temperature,
        "top_p": 1.0,
        "top_k": 0,
        "pad_token_id": tokenizer.pad_token_id,
        "eos_token_id": tokenizer.eos_token_id,
    }


def run_frozen(args: argparse.Namespace, model: Any, tokenizer: Any, dataset: Any, funcs: Sequence[Any], log: Any) -> None:
    """The control run of a GRPO measurement: for each step, the same prompts as the trainer's step, ``num_generations``
    samples each from the unchanged model, the same reward calls; ``log(step, step_s, gen_s, logs)`` after each step."""
    import torch

    torch.manual_seed(args.seed)
    model.eval()
    kwargs = generation_kwargs(args, tokenizer)
    weights = [1.0, args.format_weight][: len(funcs)]
    for step in range(args.steps):
        began = time.time()
        rows = [dataset[i] for i in range(step * args.prompts_per_step, (step + 1) * args.prompts_per_step)]
        prompts: list[Any] = []
        completions: list[Any] = []
        tasks: list[str] = []
        lengths: list[int] = []
        for row in rows:
            ids = tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, return_tensors="pt", return_dict=True)
            with torch.no_grad():
                out = model.generate(**ids, num_return_sequences=args.num_generations, **kwargs)
            gen = out[:, ids["input_ids"].shape[1] :]
            for seq in gen:
                kept = seq[seq != tokenizer.pad_token_id]
                lengths.append(int(kept.shape[0]))
                completions.append([{"role": "assistant", "content": tokenizer.decode(kept, skip_special_tokens=True)}])
                prompts.append(row["prompt"])
                tasks.append(row["task"])
        gen_s = time.time() - began
        per_func = [f(prompts=prompts, completions=completions, task=tasks) for f in funcs]
        # an unscorable completion (harness reward None) has no total, as in the trainer
        total = [None if per_func[0][i] is None else sum(w * (r[i] or 0.0) for w, r in zip(weights, per_func)) for i in range(len(completions))]
        logs = {"reward": _mean([t for t in total if t is not None]), "completions/mean_length": sum(lengths) / len(lengths)}
        if len(per_func) > 1:
            logs["rewards/format/mean"] = _mean([r for r in per_func[1] if r is not None])
        log(step + 1, time.time() - began, gen_s, logs)


def run_frozen_rounds(args: argparse.Namespace, model: Any, tokenizer: Any, dataset: Any, client: Any, log: Any) -> None:
    """The control run with ``--rounds`` above 1: per step the same prompts, ``num_generations`` episodes each
    from the unchanged model (``rrl_client.rounds.run_episodes``), logged as the trainer's steps are."""
    import torch

    from .rounds import batched_generate, episode_line, run_episodes

    torch.manual_seed(args.seed)
    model.eval()
    generate = batched_generate(model, tokenizer, generation_kwargs(args, tokenizer))
    for step in range(args.steps):
        began = time.time()
        rows = [dataset[i] for i in range(step * args.prompts_per_step, (step + 1) * args.prompts_per_step)]
        prompts = [row["prompt"] for row in rows for _ in range(args.num_generations)]
        tasks = [row["task"] for row in rows for _ in range(args.num_generations)]
        timing: dict[str, float] = {}
        episodes = run_episodes(client, tokenizer, generate, prompts, tasks, args.rounds, timing)
        log(step + 1, time.time() - began, timing, episode_line(episodes))


def rounds_step_line(step: int, wall_s: float, step_s: float, timing: dict[str, float], episodes_line: dict[str, Any], logs: dict[str, Any]) -> dict[str, Any]:
    """One line of ``log.jsonl`` for a step of episodes (``--rounds`` above 1): the episodes' figures
    (``rrl_client.rounds.episode_line``), GRPO's own and the step's split into generation, the harness's
    answers (its jobs) and the rest (the update)."""
    gen = timing.get("generation_s")
    harness = timing.get("harness_s")
    tokens = timing.get("model_tokens")
    return {
        "step": step,
        "wall_s": round(wall_s, 2),
        "step_s": round(step_s, 2),
        **episodes_line,
        "train/reward_total": logs.get("reward"),
        "train/flat_group_share": logs.get("flat_group_share"),
        "completion_length": logs.get("completions/mean_length"),
        "generation_s": round(gen, 2) if gen else None,
        "reward_call_s": round(harness, 2) if harness is not None else None,
        "update_s": round(step_s - gen - harness, 2) if gen is not None and harness is not None else None,
        "tokens_per_s": round(tokens / gen, 1) if tokens and gen else None,
    }


def spec_key(text: str) -> str:
    """What makes two accepted completions the same spec: the content of the object the harness extracts (keys sorted), else the text."""
    value = extract_json_object(text)
    return text.strip() if value is None else json.dumps(value, sort_keys=True)


def _mean(xs: Sequence[float]) -> float | None:
    """The mean, or None for no values (an unscorable reward is no value)."""
    return sum(xs) / len(xs) if xs else None


def step_line(step: int, wall_s: float, step_s: float, gen_s: float | None, logs: dict[str, Any], reward: TrlReward, best: list[float]) -> dict[str, Any]:
    """One line of ``log.jsonl``: the harness's reward for this step's completions (not the shaped sum), the
    share of valid specs, the best and mean hidden score this step, the best so far, the distinct accepted
    specs per task (averaged over the step's tasks), and the step's timing."""
    results = reward.last_results
    scores = [r["score"]["normalized"] for r in results if r["score"] is not None]
    best.extend(scores)
    accepted: dict[str, set[str]] = {t: set() for t in reward.last_tasks}
    for r, t, text in zip(results, reward.last_tasks, reward.last_texts):
        if r["status"] != "invalid":
            accepted[t].add(spec_key(text))
    n = len(results)
    mean_len = logs.get("completions/mean_length")
    tokens = mean_len * n if isinstance(mean_len, (int, float)) else None
    return {
        "step": step,
        "wall_s": round(wall_s, 2),
        "step_s": round(step_s, 2),
        "outer/reward": _mean([r for r in reward.last_rewards if r is not None]),
        "outer/valid_share": (sum(r["status"] != "invalid" for r in results) / n) if n else None,
        "outer/failed_share": (sum(r["status"] == "failed" for r in results) / n) if n else None,
        "outer/score_best_step": max(scores, default=None),
        "outer/score_best": max(best, default=None),
        "outer/score_mean_step": (sum(scores) / len(scores)) if scores else None,
        "outer/distinct_specs": (sum(len(v) for v in accepted.values()) / len(accepted)) if accepted else None,
        "train/reward_total": logs.get("reward"),
        "train/format_reward": logs.get("rewards/format/mean"),
        "train/flat_group_share": logs.get("flat_group_share"),
        "completion_length": mean_len,
        "outer/truncated_share": logs.get("completions/clipped_ratio"),
        "reward_call_s": round(reward.last_call_seconds, 2),
        "generation_s": round(gen_s, 2) if gen_s else None,
        # what is left of the step once generation and the harness's answer are done: the log-probabilities and the update
        "update_s": round(step_s - gen_s - reward.last_call_seconds, 2) if gen_s else None,
        "tokens_per_s": round(tokens / gen_s, 1) if tokens and gen_s else None,
    }
