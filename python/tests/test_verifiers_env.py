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
from scripted_model import ScriptedModel

ARS_STEP_PATCH = '{"algorithm": {"stepSize": 0.05}}'
"""Valid only over the ARS job of TINY_PATCH (the baseline is not ARS): that the second round's job runs shows the
patch was applied over the episode's last valid job."""

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


def test_rounds_play_one_harness_episode_and_the_reward_is_its_mean(rrl_serve: str, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    from verifiers.v1.clients import EvalClientConfig, ModelContext

    client = RrlClient(rrl_serve)
    replies = [TINY_PATCH, ARS_STEP_PATCH, "I would rather not write JSON."]
    env = rrl_jobs.load_environment(url=rrl_serve, tasks=[TINY_TASK], form="patch", rounds=3, harness="scripted_model")
    # the taskset's own env (found through rrl_jobs.__all__), still the single-agent env
    assert type(env) is rrl_jobs.RrlJobsEnv and isinstance(env, vf.SingleAgentEnv)
    (task,) = list(env.taskset)
    assert task.config.rounds == 3
    monkeypatch.setenv("SCRIPTED_MODEL_KEY", "unused")
    with ScriptedModel(replies).serving() as model:
        ctx = ModelContext(model="scripted", client=EvalClientConfig(base_url=model.url, api_key_var="SCRIPTED_MODEL_KEY"))
        episode = asyncio.run(_play(env, task, ctx))
    assert episode.ok, episode.errors
    (trace,) = episode.traces
    info = trace.info["rrl"]
    state = client.episode(info["episode"])
    feedback = state["submissions"]
    jobs = [client.job(str(f["job"])) for f in feedback]
    rewards = [j.get("reward") for j in jobs]
    print(f"\nrounds: statuses {[f['status'] for f in feedback]}; job rewards {rewards}; episode {state['reward']}; trace {trace.rewards}")
    print(f"the second turn shown: {model.seen[1][-1]['content']!r}")

    # three replies, three jobs of one episode; the ARS patch ran over the ARS job before it, the last reply is invalid
    assert trace.num_turns == 3 and trace.stop_condition == "user_closed"  # the env closed the exchange after the third reply
    assert [f["status"] for f in feedback] == ["succeeded", "succeeded", "invalid"]
    assert [s["status"] for s in info["submissions"]] == ["succeeded", "succeeded", "invalid"]
    assert jobs[1]["spec"]["algorithm"] == {**jobs[0]["spec"]["algorithm"], "stepSize": 0.05} and jobs[0]["spec"]["algorithm"]["name"] == "ars"
    # the reward: the episode's, as the server closed it, the mean of its jobs' rewards
    assert all(isinstance(r, (int, float)) for r in rewards) and rewards[2] == -1.0
    reward = trace.rewards[rrl_jobs.REWARD]
    assert reward is not None and state["status"] == "closed"
    assert reward.score == state["reward"] == info["reward"] == pytest.approx(sum(rewards) / 3)
    assert rrl_jobs.trace_reward(trace) == reward.score and trace.metrics["rrl_invalid"] == pytest.approx(1 / 3)

    # what the model saw: the task's prompt, then per round its own reply and the feedback's ``next`` text only
    assert len(model.seen) == 3
    assert [(m["role"], m["content"]) for m in model.seen[0]] == [(m["role"], m["content"]) for m in client.prompt(TINY_TASK, "patch")]
    for i in (1, 2):
        assert [(m["role"], m["content"]) for m in model.seen[i][-2:]] == [("assistant", replies[i - 1]), ("user", feedback[i - 1]["next"])]
        assert model.seen[i][:-2] == model.seen[i - 1]
    shown = "\n".join(str(m["content"]) for seen in model.seen for m in seen[2:] if m["role"] == "user")
    hidden = [j[k] for j in jobs for k in ("reward", "score") if isinstance(j.get(k), (int, float)) and j[k] != -1.0]
    hidden += [j["score"]["normalized"] for j in jobs if isinstance(j.get("score"), dict) and isinstance(j["score"].get("normalized"), (int, float))]
    assert hidden, "the scored jobs have hidden figures to look for"
    for x in hidden:
        assert repr(x) not in shown and f"{x:.3f}" not in shown, f"a hidden figure {x} was shown to the model"

    # rounds = 1 through the same env: its base's single-agent run, one turn, one job, no episode
    one = rrl_jobs.load_environment(url=rrl_serve, tasks=[TINY_TASK], form="patch", harness="scripted_model")
    with ScriptedModel([TINY_PATCH]).serving() as model:
        ctx = ModelContext(model="scripted", client=EvalClientConfig(base_url=model.url, api_key_var="SCRIPTED_MODEL_KEY"))
        single = asyncio.run(_play(one, next(iter(one.taskset)), ctx))
    (only,) = single.traces
    assert single.ok and only.num_turns == 1 and len(model.seen) == 1
    assert "episode" not in only.info["rrl"] and only.info["rrl"]["status"] == "succeeded"
    assert only.rewards[rrl_jobs.REWARD].score == only.info["rrl"]["reward"] == rewards[0]

    # a multi-round task scored outside its env (the TRL bridge's one-turn trace) has no episode: an error, never a reward
    (alone,) = asyncio.run(_score(task, [TINY_PATCH]))
    assert not alone.ok and alone.rewards[rrl_jobs.REWARD] is None and "RrlJobsEnv" in str(alone.errors)


async def _play(env: Any, task: Any, ctx: Any) -> Any:
    async with env.serving():
        return await env.run_episode(task, ctx)
