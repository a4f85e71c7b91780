"""rrl_client.openenv_server (a real uvicorn on a real socket, openenv-core 0.3.0's routes) forwarding to a
REAL `rrl serve`: /health and /schema, the stateless HTTP /reset and /step, two concurrent WebSocket
sessions over the library's client, and a GRPO step of a tiny model through the OpenEnv adapter.

Needs node and the compiled harness (`npx tsc -p tsconfig.json` in the repository root), openenv-core
and TRL (`python/setup-venv.sh`); skips loudly, naming them, when they are missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("openenv.core.env_server", reason="SKIPPED (OpenEnv): openenv-core is missing: run python/setup-venv.sh (requirements.txt pins openenv-core==0.3.0)")

from env_grpo import INVALID_PATCH, check_grpo_step, grpo_step  # noqa: E402
from real_serve import TINY_PATCH, TINY_TASK, start_listening  # noqa: E402
from rrl_client.openenv_client import HarnessEnvClient, openenv_environment  # noqa: E402
from rrl_client.openenv_server import JobAction  # noqa: E402
from rrl_client.trl_env import TOOL_HINT  # noqa: E402

PYTHON_DIR = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def openenv_url(rrl_serve: str) -> Iterator[str]:
    """`python -m rrl_client.openenv_server --rrl-url SERVE --port 0 --max-sessions 8`, its URL."""
    env = {**os.environ, "PYTHONPATH": str(PYTHON_DIR) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    cmd = [sys.executable, "-m", "rrl_client.openenv_server", "--rrl-url", rrl_serve, "--port", "0", "--max-sessions", "8"]
    proc, url = start_listening(cmd, PYTHON_DIR, env)
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def http(url: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method="GET" if body is None else "POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as resp:
        return json.loads(resp.read())


def test_health_and_schema_answer(openenv_url: str) -> None:
    assert http(f"{openenv_url}/health") == {"status": "healthy"}
    schema = http(f"{openenv_url}/schema")
    assert schema["action"]["required"] == ["spec"] and "task" in schema["action"]["properties"]
    assert {"text", "messages", "status", "score", "reason", "reward", "done"} <= set(schema["observation"]["properties"])
    assert http(f"{openenv_url}/metadata")["name"] == "rrl-harness"


def test_http_reset_gives_the_prompt_and_a_stateless_step_names_its_task(openenv_url: str) -> None:
    first = http(f"{openenv_url}/reset", {"task": TINY_TASK})
    assert first["reward"] is None and first["done"] is False
    assert first["observation"]["task"] == TINY_TASK and "merge patch" in first["observation"]["text"]
    assert [m["role"] for m in first["observation"]["messages"]] == ["system", "user"]
    step = http(f"{openenv_url}/step", {"action": {"spec": INVALID_PATCH, "task": TINY_TASK}})
    assert step["reward"] == -1.0 and step["done"] is True and step["observation"]["status"] == "invalid"
    assert "algorithm.learningRate" in step["observation"]["reason"]


def test_two_concurrent_sessions_each_get_their_own_reward(openenv_url: str) -> None:
    async def episode(spec: str) -> tuple[Any, Any, Any]:
        async with HarnessEnvClient(openenv_url) as env:
            first = await env.reset(task=TINY_TASK)
            result = await env.step(JobAction(spec=spec))
            state = await env.state()
            return first, result, state

    async def both() -> list[tuple[Any, Any, Any]]:
        return list(await asyncio.gather(episode(TINY_PATCH), episode(INVALID_PATCH)))

    (first_a, good, state_a), (_, bad, state_b) = asyncio.run(both())
    assert first_a.reward is None and not first_a.done and first_a.observation.text.startswith("You are")
    assert good.done and good.observation.status == "succeeded" and good.observation.text.startswith("succeeded: score ")
    assert isinstance(good.reward, float) and good.reward > -1 and good.observation.score is not None
    assert bad.done and bad.reward == -1.0 and bad.observation.status == "invalid"
    assert (state_a.submitted, state_a.reward, state_a.status) == (1, good.reward, "succeeded")
    assert (state_b.submitted, state_b.reward, state_b.status) == (1, -1.0, "invalid")
    assert state_a.episode_id != state_b.episode_id


def test_a_second_step_is_refused_and_the_sync_client_works(openenv_url: str) -> None:
    with HarnessEnvClient(openenv_url).sync() as env:
        env.reset(task=TINY_TASK)
        assert env.step(JobAction(spec=INVALID_PATCH)).reward == -1.0
        again = env.step(JobAction(spec=TINY_PATCH))
        assert again.done and again.reward is None and again.observation.text.startswith("not submitted:")


def test_the_trl_adapter_reads_the_harness_through_openenv(openenv_url: str) -> None:
    env = openenv_environment(openenv_url)()
    assert env.reset(task=TINY_TASK, prompt="x") == TOOL_HINT
    line = env.submit_job(INVALID_PATCH)
    assert line.startswith("invalid: ") and line.endswith("reward -1") and env.reward == -1.0
    env.reset(task=TINY_TASK)  # a new episode on the same session
    assert env.reward is None and env.submit_job(TINY_PATCH).startswith("succeeded: ")


def test_a_grpo_step_runs_through_the_openenv_adapter(openenv_url: str, tmp_path: Path) -> None:
    trainer, seconds = grpo_step(openenv_environment(openenv_url), tmp_path, TINY_TASK)
    logs = check_grpo_step(trainer)
    print(f"GRPO step through OpenEnvEnvironment: {seconds:.1f} s; rewards {[e.reward for e in trainer.environments]}; "
          f"logged reward mean {logs['reward']:.3f}")
