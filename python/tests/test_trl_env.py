"""rrl_client.trl_env against a REAL `rrl serve`, and a GRPO step of TRL's GRPOTrainer through it
(environment_factory), on a tiny random model on the CPU.

Needs node and the compiled harness (`npx tsc -p tsconfig.json` in the repository root) and TRL
(`python/setup-venv.sh`); skips loudly, naming them, when they are missing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from env_grpo import INVALID_PATCH, check_grpo_step, grpo_step
from real_serve import TINY_PATCH, TINY_TASK
from rrl_client.client import RrlClient
from rrl_client.trl_env import TOOL_HINT, environment_reward, rrl_environment, spec_text


def test_a_good_job_gets_feedback_and_its_reward_is_read_by_closing_the_episode(rrl_serve: str) -> None:
    env = rrl_environment(rrl_serve)()
    assert env.reset(task=TINY_TASK, prompt=[{"role": "user", "content": "tune it"}]) == TOOL_HINT
    line = env.submit_job(TINY_PATCH)
    assert line.startswith("succeeded: ") and "0 submissions left" in line, line
    assert "\n" not in line and line.isascii()
    assert env.feedback is not None and env.feedback["status"] == "succeeded" and env.submitted == 1
    assert env.reward is None  # not known to anyone before the episode is closed
    [reward] = environment_reward(environments=[env])
    assert isinstance(reward, float) and reward > -1 and env.reward == reward
    assert environment_reward(environments=[env]) == [reward]  # closing again reads the same reward
    # one job per episode: a second call sends nothing and the reward stands
    again = env.submit_job(INVALID_PATCH)
    assert again.startswith("not submitted:") and env.submitted == 1 and env.feedback["status"] == "succeeded"
    # a new episode starts clean
    env.reset(task=TINY_TASK, prompt="x")
    assert env.reward is None and env.submitted == 0 and env.feedback is None


def test_an_invalid_job_is_minus_one_with_the_reason_and_an_episode_without_a_job_is_minus_one(rrl_serve: str) -> None:
    cls = rrl_environment(rrl_serve)
    bad, idle = cls(), cls()
    bad.reset(task=TINY_TASK, prompt="x")
    idle.reset(task=TINY_TASK, prompt="x")
    line = bad.submit_job(INVALID_PATCH)
    assert line.startswith("invalid: ") and "algorithm.learningRate" in line, line
    # never submitting is paid as the same prose sent as a completion would be, not None (no advantage)
    assert environment_reward(environments=[bad, idle]) == [-1.0, -1.0]


def test_an_episode_of_several_jobs_is_paid_their_mean_not_its_last(rrl_serve: str) -> None:
    client = RrlClient(rrl_serve)
    env = rrl_environment(rrl_serve, max_submissions=2)()
    env.reset(task=TINY_TASK, prompt="x")
    first = env.submit_job(INVALID_PATCH)
    assert first.startswith("invalid: ") and first.endswith("1 submission left"), first
    assert env.submit_job("{}").startswith("succeeded: ")
    base_reward = client.job(str(env.feedback["job"]))["reward"]
    assert env.submit_job(TINY_PATCH).startswith("not submitted:") and env.submitted == 2
    [reward] = environment_reward(environments=[env])
    assert reward == pytest.approx((-1.0 + base_reward) / 2), (reward, base_reward)  # a bad job then {} is not paid {}'s


def test_no_hidden_number_reaches_the_agent_before_the_reward(rrl_serve: str) -> None:
    client = RrlClient(rrl_serve)
    env = rrl_environment(rrl_serve, max_submissions=2)()
    env.reset(task=TINY_TASK, prompt="x")
    replies, hidden = [], []
    for spec in (TINY_PATCH, INVALID_PATCH):
        replies.append(env.submit_job(spec))
        hidden.append(client.job(str(env.feedback["job"])))
    assert hidden[0]["score"] is not None and hidden[0]["reward"] is not None
    assert_no_hidden_numbers(replies, hidden)


def hidden_texts(job: dict[str, Any]) -> set[str]:
    """The ways a job's hidden figures (score, its spread, reward) could be written in a reply."""
    score = job.get("score") or {}
    values = [v for v in (score.get("normalized"), score.get("stderr"), score.get("uncertainty"), job.get("reward")) if isinstance(v, (int, float))]
    forms = {f(v) for v in values for f in (lambda x: f"{x:.3f}", lambda x: f"{x:+.3f}", lambda x: f"{x:.4f}", lambda x: f"{x:.4g}", repr)}
    return {t for t in forms if t.lstrip("+-") not in ("0.000", "0.0000", "0", "0.0", "1", "1.0", "1.000", "1.0000")}


def assert_no_hidden_numbers(texts: list[str], jobs: list[dict[str, Any]]) -> None:
    """No reply names a score or a reward (a job spec's own ``reward`` section aside), nor holds any of the jobs'
    hidden figures as a number."""
    for text in texts:
        words = re.sub(r'\\?"reward\\?":', "", text.lower())
        assert "score" not in words and "reward" not in words, text
        for job in jobs:
            leaked = [t for t in hidden_texts(job) if t in text]
            assert not leaked, (text, leaked)


def test_reset_without_a_prompt_gives_the_tasks_own_prompt(rrl_serve: str) -> None:
    env = rrl_environment(rrl_serve)()
    text = env.reset(task=TINY_TASK)
    assert text is not None and text.endswith(TOOL_HINT) and "merge patch" in text
    with pytest.raises(ValueError, match="'task' column"):
        env.reset(prompt="x")


def test_the_url_comes_from_RRL_URL(rrl_serve: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from rrl_client.trl_env import RrlEnvironment

    monkeypatch.setenv("RRL_URL", rrl_serve)
    env = RrlEnvironment()
    env.reset(task=TINY_TASK, prompt="x")
    assert env.submit_job(INVALID_PATCH).startswith("invalid: ")


def test_a_harness_that_does_not_answer_is_none_not_minus_one() -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = rrl_environment(f"http://127.0.0.1:{port}")()
    env.reset(task=TINY_TASK, prompt="x")
    line = env.submit_job(TINY_PATCH)
    assert line.startswith("unscorable: the harness did not open the episode"), line
    assert environment_reward(environments=[env]) == [None] and env.reward is None


def test_a_spec_written_as_an_object_is_sent_as_json() -> None:
    assert spec_text({"seed": 3}) == '{"seed": 3}' and spec_text("{}") == "{}"


def test_a_grpo_step_runs_through_the_trl_environment(rrl_serve: str, tmp_path: Path) -> None:
    trainer, seconds = grpo_step(rrl_environment(rrl_serve), tmp_path, TINY_TASK)
    logs = check_grpo_step(trainer)
    # the agent read the harness's feedback as the tool's answer, and nothing hidden
    assert trainer.environments[0].message.startswith("succeeded: ") and "score" not in trainer.environments[0].message
    print(f"GRPO step through RrlEnvironment: {seconds:.1f} s; rewards {[e.reward for e in trainer.environments]}; logged reward mean {logs['reward']:.3f}")


def test_a_grpo_step_where_no_rollout_submits_runs_and_learns_nothing(rrl_serve: str, tmp_path: Path) -> None:
    # every episode without a job is paid -1: flat groups, every advantage zero (loss 0)
    trainer, _ = grpo_step(rrl_environment(rrl_serve), tmp_path, TINY_TASK, calls=False)
    assert trainer.state.global_step == 1 and [e.reward for e in trainer.environments] == [-1.0] * 4
    logs = trainer.state.log_history[0]
    assert logs["loss"] == 0.0 and logs["reward"] == -1.0 and logs["tools/call_frequency"] == 0.0
