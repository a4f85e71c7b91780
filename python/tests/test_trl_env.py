"""rrl_client.trl_env against a REAL `rrl serve`, and a GRPO step of TRL's GRPOTrainer through it
(environment_factory), on a tiny random model on the CPU.

Needs node and the compiled harness (`npx tsc -p tsconfig.json` in the repository root) and TRL
(`python/setup-venv.sh`); skips loudly, naming them, when they are missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from env_grpo import INVALID_PATCH, check_grpo_step, grpo_step
from real_serve import TINY_PATCH, TINY_TASK
from rrl_client.trl_env import TOOL_HINT, environment_reward, rrl_environment, spec_text


def test_a_good_job_is_scored_and_its_reward_read(rrl_serve: str) -> None:
    env = rrl_environment(rrl_serve)()
    assert env.reset(task=TINY_TASK, prompt=[{"role": "user", "content": "tune it"}]) == TOOL_HINT
    line = env.submit_job(TINY_PATCH)
    assert line.startswith("succeeded: score "), line
    assert "\n" not in line and line.isascii() and "reward " in line
    assert isinstance(env.reward, float) and env.reward > -1
    assert env.result is not None and env.result["status"] == "succeeded" and env.submitted == 1
    assert environment_reward(environments=[env]) == [env.reward]
    # one job per episode: a second call sends nothing and the reward stands
    again = env.submit_job(INVALID_PATCH)
    assert again.startswith("not submitted:") and env.submitted == 1 and env.result["status"] == "succeeded"
    # a new episode starts clean
    env.reset(task=TINY_TASK, prompt="x")
    assert env.reward is None and env.submitted == 0 and env.result is None


def test_an_invalid_job_is_minus_one_with_the_reason_and_no_job_is_none(rrl_serve: str) -> None:
    cls = rrl_environment(rrl_serve)
    bad, idle = cls(), cls()
    bad.reset(task=TINY_TASK, prompt="x")
    idle.reset(task=TINY_TASK, prompt="x")
    line = bad.submit_job(INVALID_PATCH)
    assert line.startswith("invalid: ") and "algorithm.learningRate" in line and line.endswith("reward -1"), line
    assert environment_reward(environments=[bad, idle]) == [-1.0, None]


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
    assert line.startswith("unscorable: the harness did not answer") and line.endswith("reward none (not scored)"), line
    assert env.reward is None and environment_reward(environments=[env]) == [None]


def test_a_spec_written_as_an_object_is_sent_as_json() -> None:
    assert spec_text({"seed": 3}) == '{"seed": 3}' and spec_text("{}") == "{}"


def test_a_grpo_step_runs_through_the_trl_environment(rrl_serve: str, tmp_path: Path) -> None:
    trainer, seconds = grpo_step(rrl_environment(rrl_serve), tmp_path, TINY_TASK)
    logs = check_grpo_step(trainer)
    # the agent read the harness's line as the tool's answer
    assert trainer.environments[0].message.startswith("succeeded: score ")
    print(f"GRPO step through RrlEnvironment: {seconds:.1f} s; rewards {[e.reward for e in trainer.environments]}; "
          f"logged reward mean {logs['reward']:.3f}")


def test_a_grpo_step_where_no_rollout_submits_runs_and_learns_nothing(rrl_serve: str, tmp_path: Path) -> None:
    # every reward None: TRL 1.13 warns, logs no reward, gives every rollout a zero advantage (loss 0)
    trainer, _ = grpo_step(rrl_environment(rrl_serve), tmp_path, TINY_TASK, calls=False)
    assert trainer.state.global_step == 1 and [e.reward for e in trainer.environments] == [None] * 4
    logs = trainer.state.log_history[0]
    assert logs["loss"] == 0.0 and logs["reward"] is None and logs["tools/call_frequency"] == 0.0
