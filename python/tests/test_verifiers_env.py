"""The verifiers environment (python/environments/rrl_jobs) against the real library and a real `rrl serve`.

Skips loudly, naming the command that enables it, without verifiers (python/setup-venv.sh installs the pinned
verifiers==0.4.0) or without the compiled harness (dist/: `npm run build`); with RRL_REQUIRE_PYTHON=1 (CI) a
missing verifiers fails instead.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

try:
    import verifiers.v1 as vf
except ImportError as err:  # pragma: no cover - depends on the venv
    why = f"verifiers is not installed ({err}): run python/setup-venv.sh (it pins verifiers==0.4.0, python/requirements.txt)"
    if os.environ.get("RRL_REQUIRE_PYTHON") == "1":
        raise RuntimeError(why) from None
    pytest.skip(f"SKIPPED LOUDLY (verifiers environment): {why}", allow_module_level=True)

ENV_DIR = Path(__file__).resolve().parents[1] / "environments" / "rrl_jobs"
try:
    import rrl_jobs
except ImportError:  # not pip-installed: import it from the repository
    sys.path.insert(0, str(ENV_DIR))
    import rrl_jobs

from env_grpo import one_step_config
from fake_server import FakeRrl
from real_serve import TINY_PATCH, TINY_TASK, rrl_serve  # noqa: F401  (rrl_serve: the session fixture)
from rrl_client.client import RrlClient

GRPO_SEED = 2
"""The sampling seed of the GRPO test: the tiny model then writes one completion with a JSON object and one without."""


def test_the_rows_are_the_tasks_prompts_and_the_reward_is_the_harnesss(rrl_serve: str) -> None:  # noqa: F811
    client = RrlClient(rrl_serve)
    env = rrl_jobs.load_environment(url=rrl_serve, tasks=[TINY_TASK], form="patch")
    assert isinstance(env, vf.SingleAgentEnv) and isinstance(env.taskset, rrl_jobs.RrlJobsTaskset)
    rows = list(env.taskset)
    assert [r.data.id for r in rows] == [TINY_TASK]
    assert rrl_jobs.prompt_messages(rows[0].data) == client.prompt(TINY_TASK, "patch")
    assert rows[0].data.example == client.prompt_response(TINY_TASK, "patch")["example"]

    # by id, the way prime-rl and `vf-eval` load it: a family's tasks of one split, in the full form
    server_rows = client.tasks()
    config = vf.SingleAgentEnvConfig.model_validate(
        {"taskset": {"id": "rrl-jobs", "task": {"url": rrl_serve}, "family": "cartpole", "split": "held-out", "form": "full"}}
    )
    assert isinstance(config.taskset, rrl_jobs.RrlJobsConfig)
    by_id = list(vf.load_environment(config).taskset)
    held_out = [r["id"] for r in server_rows if r["family"] == "cartpole" and r["split"] == "held-out"]
    assert [r.data.id for r in by_id] == held_out and held_out
    assert all(rrl_jobs.prompt_messages(r.data) == client.prompt(str(r.data.id), "full") for r in by_id)
    # without tasks or split: the training tasks only
    assert {r.data.id for r in rrl_jobs.load_environment(url=rrl_serve).taskset} == {r["id"] for r in server_rows if r["split"] == "train"}

    # the environment's own reward path (Task.score, as a rollout scores): a good completion and an invalid one
    good, bad = asyncio.run(_score(rows[0], [TINY_PATCH, "I would rather not write JSON."]))
    print(f"\nrewards: TINY_PATCH {good.rewards[rrl_jobs.REWARD]} {good.info['rrl']}; invalid {bad.rewards[rrl_jobs.REWARD]} {bad.info['rrl']['reason']!r}")
    assert good.ok and good.info["rrl"]["status"] == "succeeded" and good.info["rrl"]["job"] is not None
    reward = good.rewards[rrl_jobs.REWARD]
    assert reward is not None and reward.score == good.info["rrl"]["reward"] and reward.score != -1.0
    assert good.metrics["rrl_score"] == good.info["rrl"]["score"]["normalized"]
    assert bad.ok and bad.rewards[rrl_jobs.REWARD] is not None and bad.rewards[rrl_jobs.REWARD].score == -1.0
    assert bad.info["rrl"]["status"] == "invalid" and "no JSON object" in bad.info["rrl"]["reason"]
    assert bad.metrics["rrl_invalid"] == 1.0


async def _score(task: Any, texts: list[str]) -> list[Any]:
    return list(await asyncio.gather(*(rrl_jobs.score_completion(task, t) for t in texts)))


def test_an_unscorable_completion_has_no_reward_and_fails_its_trace(fake: FakeRrl) -> None:
    # the stand-in answers a null reward, as `rrl serve` does when it could not score for its own reasons
    fake.score = lambda task, text: {"reward": None, "result": {"status": "failed", "score": None, "reason": "unscorable: worker lost", "job": None}}  # type: ignore[method-assign]
    env = rrl_jobs.load_environment(url=fake.url, tasks=["cartpole-balance"])
    (trace,) = asyncio.run(_score(next(iter(env.taskset)), ['{"seed": 3}']))
    assert trace.rewards == {rrl_jobs.REWARD: None}, "a reward that did not run is None, never -1"
    assert not trace.ok and trace.errors and rrl_jobs.trace_reward(trace) is None
    # the TRL bridge passes it on as None (TRL: no reward from this function for that completion)
    bridge = rrl_jobs.TrlReward(env)
    assert bridge([None], ['{"seed": 3}'], task=["cartpole-balance"]) == [None]


def test_a_grpo_step_of_a_tiny_model_runs_through_the_environment(rrl_serve: str, tmp_path: Path) -> None:  # noqa: F811
    import torch
    from datasets import Dataset
    from trl import GRPOTrainer

    from tiny_model import tiny_model, tiny_tokenizer

    torch.set_num_threads(1)
    env = rrl_jobs.load_environment(url=rrl_serve, tasks=[TINY_TASK], form="patch")
    rows = rrl_jobs.trl_rows(env)
    assert rows == [{"prompt": RrlClient(rrl_serve).prompt(TINY_TASK, "patch"), "task": TINY_TASK}]
    reward = rrl_jobs.TrlReward(env)
    tok = tiny_tokenizer()
    args = one_step_config(tmp_path, 2, 2, 16, learning_rate=0.05, seed=GRPO_SEED)
    trainer = GRPOTrainer(model=tiny_model(tok), reward_funcs=[reward], args=args, train_dataset=Dataset.from_list(rows), processing_class=tok)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    started = time.time()
    trainer.train()
    seconds = time.time() - started

    traces = reward.last_traces
    rewards = [rrl_jobs.trace_reward(t) for t in traces]
    print(
        f"\nGRPO step through the verifiers environment: {seconds:.1f} s; rewards {rewards}; "
        f"replies {[t.last_reply for t in traces]}; statuses {[t.info['rrl']['status'] for t in traces]}"
    )
    assert trainer.state.global_step == 1 and len(traces) == 2
    assert all(t.ok and t.info["rrl"]["job"] is not None for t in traces), "every completion was scored by the harness"
    assert -1.0 in rewards and any(r is not None and r > -1.0 for r in rewards), f"expected one invalid and one scored completion, got {rewards}"
    logged = [h for h in trainer.state.log_history if "reward" in h]
    assert logged and logged[0]["reward"] == pytest.approx(sum(r for r in rewards if r is not None) / 2)
    after = dict(trainer.model.named_parameters())
    assert any(not torch.equal(p, after[n].detach()) for n, p in before.items()), "the GRPO update moved the model"
    assert seconds < 60
