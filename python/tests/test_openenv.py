"""rrl_client.openenv_server (a real uvicorn on a real socket, openenv-core 0.3.0's routes) forwarding to a
REAL `rrl serve`: /health and /schema, the stateless HTTP /reset and /step, two concurrent WebSocket
sessions over the library's client, episodes of two jobs (feedback only until done, paid the mean;
-1 without a job), the front door (Host, Origin, its own token, loopback only), and a GRPO step of a
tiny model through the OpenEnv adapter.

Needs node and the compiled harness (`npx tsc -p tsconfig.json` in the repository root), openenv-core
and TRL (`python/setup-venv.sh`); skips loudly, naming them, when they are missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "openenv.core.env_server", reason="SKIPPED (OpenEnv): openenv-core is missing: run python/setup-venv.sh (requirements.txt pins openenv-core==0.3.0)"
)

from env_grpo import INVALID_PATCH, check_grpo_step, grpo_step
from real_serve import TINY_PATCH, TINY_TASK, start_listening
from rrl_client.client import RrlClient
from rrl_client.openenv_client import HarnessEnvClient, openenv_environment
from rrl_client.openenv_server import JobAction, exposure_refusal, main
from rrl_client.trl_env import TOOL_HINT
from test_trl_env import assert_no_hidden_numbers

PYTHON_DIR = Path(__file__).resolve().parents[1]


def start_openenv(rrl_serve: str, *extra: str, env_extra: dict[str, str] | None = None) -> tuple[Any, str]:
    env = {**os.environ, "PYTHONPATH": str(PYTHON_DIR) + os.pathsep + os.environ.get("PYTHONPATH", ""), **(env_extra or {})}
    cmd = [sys.executable, "-m", "rrl_client.openenv_server", "--rrl-url", rrl_serve, "--port", "0", *extra]
    return start_listening(cmd, PYTHON_DIR, env)


@pytest.fixture(scope="module")
def openenv_url(rrl_serve: str) -> Iterator[str]:
    """`python -m rrl_client.openenv_server --rrl-url SERVE --port 0 --max-sessions 8 --max-submissions 2`, its URL."""
    proc, url = start_openenv(rrl_serve, "--max-sessions", "8", "--max-submissions", "2")
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def http(url: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="GET" if body is None else "POST", headers={"Content-Type": "application/json", **(headers or {})})
    with urllib.request.urlopen(req, timeout=120) as resp:
        return json.loads(resp.read())


def refused(url: str, headers: dict[str, str]) -> tuple[int, str]:
    """The status and error line of a request the server refuses."""
    with pytest.raises(urllib.error.HTTPError) as err:
        http(url, headers=headers)
    return err.value.code, json.loads(err.value.read())["error"]


def test_health_and_schema_answer(openenv_url: str) -> None:
    assert http(f"{openenv_url}/health") == {"status": "healthy"}
    schema = http(f"{openenv_url}/schema")
    assert {"spec", "task", "finish"} <= set(schema["action"]["properties"])
    observation = set(schema["observation"]["properties"])
    assert {"text", "messages", "status", "reason", "cost", "validation", "submissions_left", "reward", "done"} <= observation
    assert "score" not in observation
    assert http(f"{openenv_url}/metadata")["name"] == "rrl-harness"


def test_http_reset_gives_the_prompt_and_a_stateless_step_is_an_episode_of_one_job(openenv_url: str) -> None:
    first = http(f"{openenv_url}/reset", {"task": TINY_TASK})
    assert first["reward"] is None and first["done"] is False
    assert first["observation"]["task"] == TINY_TASK and "merge patch" in first["observation"]["text"]
    assert [m["role"] for m in first["observation"]["messages"]] == ["system", "user"]
    step = http(f"{openenv_url}/step", {"action": {"spec": INVALID_PATCH, "task": TINY_TASK}})
    assert step["reward"] == -1.0 and step["done"] is True and step["observation"]["status"] == "invalid"
    assert "algorithm.learningRate" in step["observation"]["reason"]


def test_two_concurrent_sessions_each_get_their_own_reward(openenv_url: str) -> None:
    async def episode(spec: str) -> tuple[Any, Any, Any, Any]:
        async with HarnessEnvClient(openenv_url) as env:
            first = await env.reset(task=TINY_TASK)
            result = await env.step(JobAction(spec=spec))
            done = await env.step(JobAction(finish=True))
            state = await env.state()
            return first, result, done, state

    async def both() -> list[tuple[Any, Any, Any, Any]]:
        return list(await asyncio.gather(episode(TINY_PATCH), episode(INVALID_PATCH)))

    (first_a, good, good_done, state_a), (_, bad, bad_done, state_b) = asyncio.run(both())
    assert first_a.reward is None and not first_a.done and first_a.observation.text.startswith("You are")
    assert not good.done and good.reward is None and good.observation.status == "succeeded"
    assert good.observation.text.startswith("succeeded: ") and good.observation.submissions_left == 1
    assert good_done.done and isinstance(good_done.reward, float) and good_done.reward > -1
    assert not bad.done and bad.reward is None and bad.observation.status == "invalid"
    assert bad_done.done and bad_done.reward == -1.0
    assert (state_a.submitted, state_a.closed, state_a.reward) == (1, True, good_done.reward)
    assert (state_b.submitted, state_b.closed, state_b.reward) == (1, True, -1.0)
    assert state_a.episode_id != state_b.episode_id and state_a.episode != state_b.episode


def test_an_episode_of_two_jobs_shows_feedback_only_and_is_paid_their_mean(openenv_url: str, rrl_serve: str) -> None:
    client = RrlClient(rrl_serve)
    with HarnessEnvClient(openenv_url).sync() as env:
        env.reset(task=TINY_TASK)
        first = env.step(JobAction(spec=INVALID_PATCH))
        second = env.step(JobAction(spec="{}"))
        after = env.step(JobAction(spec=TINY_PATCH))
    assert not first.done and first.reward is None and first.observation.submissions_left == 1
    assert second.done and after.done and after.reward is None and after.observation.text.startswith("not submitted:")
    jobs = [client.job(str(r.observation.job)) for r in (first, second)]
    assert second.reward == pytest.approx((-1.0 + jobs[1]["reward"]) / 2)  # a bad job then {} is not paid {}'s
    # nothing the agent reads before the reward holds a hidden figure; the done step's text neither
    seen = [first.observation.model_dump_json(exclude={"reward"}), second.observation.model_dump_json(exclude={"reward"})]
    assert_no_hidden_numbers(seen, jobs)


def test_an_episode_finished_without_a_job_is_paid_minus_one(openenv_url: str) -> None:
    with HarnessEnvClient(openenv_url).sync() as env:
        env.reset(task=TINY_TASK)
        done = env.step(JobAction(finish=True))
        assert done.done and done.reward == -1.0 and "no job submitted" in done.observation.text
        again = env.step(JobAction(spec=TINY_PATCH))
        assert again.done and again.reward is None and again.observation.text.startswith("not submitted:")


def test_the_trl_adapter_reads_the_harness_through_openenv(openenv_url: str) -> None:
    from rrl_client.trl_env import environment_reward

    env = openenv_environment(openenv_url)()
    assert env.reset(task=TINY_TASK, prompt="x") == TOOL_HINT
    line = env.submit_job(INVALID_PATCH)
    assert line.startswith("invalid: ") and "reward" not in line and env.reward is None
    assert environment_reward(environments=[env]) == [-1.0] and env.reward == -1.0
    env.reset(task=TINY_TASK)  # a new episode on the same session
    assert env.reward is None and env.submit_job(TINY_PATCH).startswith("succeeded: ")
    idle = openenv_environment(openenv_url)()
    idle.reset(task=TINY_TASK, prompt="x")
    [good, none] = environment_reward(environments=[env, idle])
    assert isinstance(good, float) and good > -1 and none == -1.0


def test_a_foreign_origin_or_host_is_refused(openenv_url: str) -> None:
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    port = openenv_url.rsplit(":", 1)[1]
    ws = openenv_url.replace("http://", "ws://") + "/ws"
    with pytest.raises(InvalidStatus) as err:
        connect(ws, origin="http://evil.example", proxy=None).close()
    assert err.value.response.status_code == 403
    with connect(ws, origin=f"http://127.0.0.1:{port}", proxy=None) as own:  # the server's own origin passes
        own.send(json.dumps({"type": "state"}))
        assert json.loads(own.recv(timeout=30))["type"] == "state"
    status, why = refused(f"{openenv_url}/health", {"Host": f"evil.example:{port}"})
    assert status == 421 and "evil.example" in why
    status, why = refused(f"{openenv_url}/health", {"Origin": "http://evil.example"})
    assert status == 403 and "another origin" in why
    sock = socket.create_connection(("127.0.0.1", int(port)))
    with pytest.raises(InvalidStatus) as err:  # a DNS-rebinding page: its own name as Host, this server's address
        connect(f"ws://evil.example:{port}/ws", sock=sock).close()
    assert err.value.response.status_code == 421


def test_beyond_loopback_needs_the_opt_in_and_a_token_of_its_own(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["--host", "0.0.0.0", "--rrl-url", "http://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--allow-remote" in err and "--own-token-env" in err, err
    monkeypatch.setenv("OPENENV_OWN", "s3cret")
    assert main(["--host", "0.0.0.0", "--own-token-env", "OPENENV_OWN", "--rrl-url", "http://127.0.0.1:1"]) == 2
    assert "--allow-remote" in capsys.readouterr().err
    assert exposure_refusal("0.0.0.0", True, None) is not None and exposure_refusal("192.168.1.4", False, "t") is not None
    assert exposure_refusal("0.0.0.0", True, "t") is None and exposure_refusal("127.0.0.1", False, None) is None
    assert exposure_refusal("localhost", False, None) is None and exposure_refusal("::1", False, None) is None


def test_a_token_of_its_own_is_asked_on_every_request(rrl_serve: str) -> None:
    proc, url = start_openenv(rrl_serve, "--own-token-env", "OPENENV_OWN", env_extra={"OPENENV_OWN": "s3cret"})
    try:
        status, _ = refused(f"{url}/health", {})
        assert status == 401
        assert http(f"{url}/health", headers={"Authorization": "Bearer s3cret"}) == {"status": "healthy"}
        with pytest.raises(ConnectionError):
            HarnessEnvClient(url).sync().connect()
        with HarnessEnvClient(url, token="s3cret").sync() as env:
            assert env.reset(task=TINY_TASK).observation.task == TINY_TASK
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_grpo_step_runs_through_the_openenv_adapter(openenv_url: str, tmp_path: Path) -> None:
    trainer, seconds = grpo_step(openenv_environment(openenv_url), tmp_path, TINY_TASK)
    logs = check_grpo_step(trainer)
    print(f"GRPO step through OpenEnvEnvironment: {seconds:.1f} s; rewards {[e.reward for e in trainer.environments]}; logged reward mean {logs['reward']:.3f}")
