"""A GRPO step of a tiny random model through an environment_factory class, with scripted tool calls.

A random model almost never writes a well-formed tool call, so the GRPO tests script a few: each whole
tool call is one added token of the tokenizer (``tool_call_token``), and a logits processor wrapped
around the model's own ``generate`` (as ``rrl_client.grpo.install_guided`` does) makes rollout ``i``
write the calls ``plan[i]``, one a turn, each turn ending after its call; the other rollouts sample
freely but can never write a scripted call; after its last tool answer a rollout ends its turn at
once. Everything else is TRL's own: it parses the call, runs the environment's tool, appends the
answer and computes the rewards.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from real_serve import TINY_PATCH

INVALID_PATCH = '{"algorithm": {"learningRate": "fast"}}'


def scripted_generate(tok: Any, plan: list[str]) -> Any:
    """A ``rrl_client.rounds.Generate`` that answers round r with ``plan[r]`` (and the end-of-sequence token) in every row."""
    calls = [0]

    def generate(prompt_ids: list[list[int]]) -> list[list[int]]:
        text = plan[calls[0]]
        calls[0] += 1
        return [tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id] for _ in prompt_ids]

    return generate


def tool_call_token(name: str, **arguments: Any) -> str:
    """One tool call as Qwen3's template writes it, to add to the tokenizer as a single token."""
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def script_tool_calls(model: Any, tokenizer: Any, plan: dict[int, str | list[str]], call_tokens: list[str]) -> None:
    """Make ``model.generate`` follow ``plan``: rollout ``i`` (row ``i`` of the first turn's batch) writes the
    tool-call tokens ``plan[i]`` (a string: one call), one per turn, each turn ending after its call and the
    turn after the last call ending at once; a rollout outside the plan samples freely but never writes any
    of ``call_tokens``.

    TRL's tool loop regenerates, turn after turn, the rollouts whose last turn called a tool, in order, so
    a row's rollout follows from its turn (the calls its input holds): turn 0 is every rollout, turn k the
    scripted ones with at least k calls. A row whose calls so far are not its rollout's script is an error."""
    import torch
    from transformers import LogitsProcessor

    scripts = {row: [calls] if isinstance(calls, str) else list(calls) for row, calls in plan.items()}
    ids = {tok: tokenizer.convert_tokens_to_ids(tok) for tok in call_tokens}
    call_ids = sorted(ids.values())
    scripted = set(call_ids)
    eos = tokenizer.eos_token_id

    def forced_tokens(row: int, input_ids: list[int]) -> list[int] | None:
        """The tokens ``row`` of a turn's batch must write from its first step (None: it samples freely)."""
        calls = [t for t in input_ids if t in scripted]
        turn = len(calls)
        rollout = row if turn == 0 else sorted(r for r, s in scripts.items() if len(s) >= turn)[row]
        script = [ids[t] for t in scripts.get(rollout, [])]
        assert calls == script[:turn], f"turn {turn}, row {row}: its calls are not rollout {rollout}'s script"
        if turn < len(script):
            return [script[turn], eos]
        return [eos] if turn > 0 else None

    class Scripted(LogitsProcessor):  # type: ignore[misc]
        prompt_len = 0
        forced: ClassVar[list[list[int] | None]] = []

        def __call__(self, input_ids: Any, scores: Any) -> Any:
            step = input_ids.shape[1] - self.prompt_len
            out = scores.clone()
            for row in range(scores.shape[0]):
                tokens = self.forced[row]
                if tokens is not None and step < len(tokens):
                    out[row] = -torch.inf
                    out[row, tokens[step]] = 0.0
                else:
                    out[row, call_ids] = -torch.inf
            return out

    processor = Scripted()
    plain_generate = model.generate

    def generate(*a: Any, **kw: Any) -> Any:
        batch = kw["input_ids"]
        processor.prompt_len = batch.shape[1]
        processor.forced = [forced_tokens(r, batch[r].tolist()) for r in range(batch.shape[0])]
        extra = kw.pop("logits_processor", None) or []
        return plain_generate(*a, logits_processor=[*extra, processor], **kw)

    model.generate = generate


def one_step_config(tmp_path: Path, batch: int, num_generations: int, max_completion_length: int, **extra: Any) -> Any:
    """TRL's GRPOConfig for one GRPO step on the CPU, no KL term, no saving or reporting; ``extra`` adds to it."""
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=str(tmp_path),
        max_steps=1,
        per_device_train_batch_size=batch,
        num_generations=num_generations,
        max_completion_length=max_completion_length,
        beta=0.0,
        use_cpu=True,
        bf16=False,
        fp16=False,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        **extra,
    )


def scripted_trainer(
    env_cls: type,
    tmp_path: Path,
    task: str,
    plan: dict[int, list[str]],
    groups: int,
    num_generations: int,
    max_completion_length: int = 192,
    max_positions: int = 2048,
) -> Any:
    """An ``RrlGRPOTrainer`` of one step (not yet run) of a tiny random model with ``environment_factory=env_cls``:
    ``groups`` prompts of ``task`` x ``num_generations`` rollouts, in order; rollout ``i`` sends the jobs
    ``plan[i]`` (spec texts), one tool call a turn (see :func:`script_tool_calls`), and a rollout outside
    the plan samples freely, never calling the tool."""
    pytest.importorskip("trl", reason="SKIPPED: TRL is missing: run python/setup-venv.sh")
    import torch
    from datasets import Dataset

    from rrl_client.grpo_trainer import RrlGRPOTrainer
    from rrl_client.trl_env import environment_reward
    from tiny_model import tiny_model, tiny_tool_tokenizer

    torch.set_num_threads(1)
    calls = {spec: tool_call_token("submit_job", spec=spec) for specs in plan.values() for spec in specs}
    tok = tiny_tool_tokenizer(list(calls.values()))
    model = tiny_model(tok, max_positions=max_positions)
    script_tool_calls(model, tok, {row: [calls[s] for s in specs] for row, specs in plan.items()}, list(calls.values()))
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": "Tune the job."}], "task": task}] * groups)
    most_calls = max((len(specs) for specs in plan.values()), default=1)
    args = one_step_config(
        tmp_path,
        groups * num_generations,
        num_generations,
        max_completion_length,
        learning_rate=1e-3,
        shuffle_dataset=False,
        seed=0,
        max_tool_calling_iterations=max(2, most_calls),
    )
    return RrlGRPOTrainer(model=model, reward_funcs=[environment_reward], args=args, train_dataset=dataset, processing_class=tok, environment_factory=env_cls)


def grpo_step(env_cls: type, tmp_path: Path, task: str, calls: bool = True) -> tuple[Any, float]:
    """One GRPO step of a tiny random model with ``environment_factory=env_cls``: 2 prompts x 2 generations.
    With ``calls``, row 0 calls submit_job with a good patch, row 1 with an invalid one, and the second
    group never calls; without, no row calls. Returns the trainer and the step's seconds."""
    plan = {0: [TINY_PATCH], 1: [INVALID_PATCH]} if calls else {}
    trainer = scripted_trainer(env_cls, tmp_path, task, plan, groups=2, num_generations=2)
    started = time.perf_counter()
    trainer.train()
    return trainer, time.perf_counter() - started


def check_grpo_step(trainer: Any) -> dict[str, float]:
    """The step ran and its rewards are the environments' episodes': [good, -1, -1, -1] (the second group never
    submitted: -1 each, as prose sent as a completion)."""
    assert trainer.state.global_step == 1
    envs = trainer.environments
    assert [e.submitted for e in envs] == [1, 1, 0, 0]
    assert envs[0].feedback["status"] == "succeeded" and isinstance(envs[0].reward, float)
    assert envs[1].reward == -1.0 and envs[1].feedback["status"] == "invalid"
    assert envs[2].reward == -1.0 and envs[3].reward == -1.0
    logs = next(h for h in trainer.state.log_history if "reward" in h)
    assert math.isclose(logs["rewards/environment_reward/mean"], (envs[0].reward - 3.0) / 4, rel_tol=1e-5)
    assert logs["tools/call_frequency"] == 0.5 and logs["tools/failure_frequency"] == 0.0
    assert math.isfinite(logs["loss"])
    return logs
