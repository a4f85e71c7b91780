"""A GRPO step of a tiny random model through an environment_factory class, with scripted tool calls.

A random model almost never writes a well-formed tool call, so the GRPO tests script a few: each whole
tool call is one added token of the tokenizer (``tool_call_token``), and a logits processor wrapped
around the model's own ``generate`` (as ``rrl_client.grpo.install_guided`` does) makes row ``i`` of the
first turn's batch write ``plan[i]`` then end its turn; the other rows sample freely but can never
write a scripted call; after a tool answer every row ends its turn at once. Everything else is TRL's
own: it parses the call, runs the environment's tool, appends the answer and computes the rewards.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pytest

from real_serve import TINY_PATCH

INVALID_PATCH = '{"algorithm": {"learningRate": "fast"}}'


def tool_call_token(name: str, **arguments: Any) -> str:
    """One tool call as Qwen3's template writes it, to add to the tokenizer as a single token."""
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def script_tool_calls(model: Any, tokenizer: Any, plan: dict[int, str], call_tokens: list[str]) -> None:
    """Make ``model.generate`` follow ``plan`` (first-turn batch row -> the tool-call token it writes);
    no other row writes any of ``call_tokens``."""
    import torch
    from transformers import LogitsProcessor

    forced = {row: tokenizer.convert_tokens_to_ids(tok) for row, tok in plan.items()}
    call_ids = sorted(tokenizer.convert_tokens_to_ids(t) for t in call_tokens)
    eos = tokenizer.eos_token_id

    class Scripted(LogitsProcessor):  # type: ignore[misc]
        prompt_len = 0
        answered: list[bool] = []

        def __call__(self, input_ids: Any, scores: Any) -> Any:
            step = input_ids.shape[1] - self.prompt_len
            out = scores.clone()
            for row in range(scores.shape[0]):
                want = None
                if self.answered[row]:
                    want = eos  # a tool answered: end the turn
                elif row in forced and step == 0:
                    want = forced[row]
                elif row in forced and step == 1:
                    want = eos
                if want is not None:
                    out[row] = -torch.inf
                    out[row, want] = 0.0
                else:
                    out[row, call_ids] = -torch.inf
            return out

    processor = Scripted()
    plain_generate = model.generate

    def generate(*a: Any, **kw: Any) -> Any:
        ids = kw["input_ids"]
        processor.prompt_len = ids.shape[1]
        processor.answered = [bool(torch.isin(ids[r], torch.tensor(call_ids)).any()) for r in range(ids.shape[0])]
        extra = kw.pop("logits_processor", None) or []
        return plain_generate(*a, logits_processor=[*extra, processor], **kw)

    model.generate = generate


def grpo_step(env_cls: type, tmp_path: Path, task: str, calls: bool = True) -> tuple[Any, float]:
    """One GRPO step of a tiny random model with ``environment_factory=env_cls``: 2 prompts x 2 generations.
    With ``calls``, row 0 calls submit_job with a good patch, row 1 with an invalid one, and the second
    group never calls; without, no row calls. Returns the trainer and the step's seconds."""
    pytest.importorskip("trl", reason="SKIPPED: TRL is missing: run python/setup-venv.sh")
    import torch
    from datasets import Dataset
    from trl import GRPOConfig

    from rrl_client.grpo import RrlGRPOTrainer

    from rrl_client.trl_env import environment_reward
    from tiny_model import tiny_model, tiny_tool_tokenizer

    torch.set_num_threads(1)
    good, bad = tool_call_token("submit_job", spec=TINY_PATCH), tool_call_token("submit_job", spec=INVALID_PATCH)
    tok = tiny_tool_tokenizer([good, bad])
    model = tiny_model(tok, max_positions=2048)
    script_tool_calls(model, tok, {0: good, 1: bad} if calls else {}, [good, bad])
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": "Tune the job."}], "task": task}] * 2)
    args = GRPOConfig(
        output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=4, num_generations=2,
        max_completion_length=192, learning_rate=1e-3, beta=0.0, shuffle_dataset=False, seed=0,
        use_cpu=True, bf16=False, fp16=False, logging_steps=1, save_strategy="no", report_to="none",
        disable_tqdm=True, max_tool_calling_iterations=2,
    )
    trainer = RrlGRPOTrainer(model=model, reward_funcs=[environment_reward], args=args, train_dataset=dataset,
                             processing_class=tok, environment_factory=env_cls)
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
