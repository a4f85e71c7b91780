"""The Gymnasium bridge as the TypeScript side speaks to it: a real process, real frames."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from rrl_gym.frames import KIND_ACTIONS, KIND_JSON, KIND_STEP, BridgeClosed, frame, json_frame, read_frame, write_all

HERE = Path(__file__).resolve().parent


class Bridge:
    """A bridge process and the frames to and from it."""

    def __init__(self, *args: str, env_extra: dict[str, str] | None = None) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parent), str(HERE)]), **(env_extra or {}))
        self.p = subprocess.Popen(
            [sys.executable, "-m", "rrl_gym.bridge", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        assert self.p.stdin is not None and self.p.stdout is not None
        self.fin, self.fout = self.p.stdin.fileno(), self.p.stdout.fileno()

    def make(self, env_id: str, seeds: list[int], **extra: Any) -> dict[str, Any]:
        write_all(self.fin, json_frame({"op": "make", "env_id": env_id, "kwargs": {}, "num_envs": len(seeds), "seeds": seeds, **extra}))
        return self.read_json()

    def read_json(self) -> dict[str, Any]:
        kind, body = read_frame(self.fout)
        assert kind == KIND_JSON
        out: dict[str, Any] = json.loads(body)
        return out

    def read_step(self, n: int, d: int) -> dict[str, np.ndarray]:
        kind, body = read_frame(self.fout)
        assert kind == KIND_STEP, body[:200]
        assert len(body) == n * d * 16 + n * 10
        f = np.frombuffer(body, dtype="<f8", count=n * d * 2 + n)
        u = np.frombuffer(body, dtype=np.uint8, offset=(n * d * 2 + n) * 8)
        return {
            "obs": f[: n * d].reshape(n, d),
            "final": f[n * d : 2 * n * d].reshape(n, d),
            "rewards": f[2 * n * d :],
            "terminated": u[:n],
            "truncated": u[n:],
        }

    def step(self, actions: list[float], n: int, d: int) -> dict[str, np.ndarray]:
        write_all(self.fin, frame(KIND_ACTIONS, np.asarray(actions, dtype="<f8").tobytes()))
        return self.read_step(n, d)

    def close(self) -> int:
        try:
            write_all(self.fin, json_frame({"op": "close"}))
        except OSError:
            pass
        return self.p.wait(timeout=60)


@pytest.fixture
def bridge() -> Iterator[Bridge]:
    b = Bridge()
    yield b
    if b.p.poll() is None:
        b.p.kill()
    b.p.wait()


def test_spaces_as_data_and_first_observations_match_gymnasium(bridge: Bridge) -> None:
    hello = bridge.make("CartPole-v1", [3, 4])
    assert hello["ok"] is True
    assert hello["action_space"] == {"type": "discrete", "n": 2}
    obs_space = hello["observation_space"]
    assert obs_space["type"] == "box" and obs_space["shape"] == [4]
    assert obs_space["low"][1] is None and obs_space["high"][0] == pytest.approx(4.8)
    assert hello["obs_dim"] == 4 and hello["action_dim"] == 1 and hello["max_episode_steps"] == 500
    first = bridge.read_step(2, 4)
    for i, seed in enumerate([3, 4]):
        want, _ = gym.make("CartPole-v1").reset(seed=seed)
        np.testing.assert_allclose(first["obs"][i], want)
    assert bridge.close() == 0


def test_same_step_autoreset_keeps_the_final_observation(bridge: Bridge) -> None:
    bridge.make("CartPole-v1", [1, 2])
    bridge.read_step(2, 4)
    reference = [gym.make("CartPole-v1") for _ in range(2)]
    for i, e in enumerate(reference):
        e.reset(seed=i + 1)
    ended = 0
    for _ in range(200):  # always push right: episodes end within a few dozen steps
        s = bridge.step([1.0, 1.0], 2, 4)
        for i, e in enumerate(reference):
            o, r, term, trunc, _ = e.step(1)
            np.testing.assert_allclose(s["final"][i], o)
            assert s["rewards"][i] == r and bool(s["terminated"][i]) == term and bool(s["truncated"][i]) == trunc
            if term or trunc:
                ended += 1
                o, _ = e.reset()
                assert not np.allclose(s["obs"][i], s["final"][i])
            np.testing.assert_allclose(s["obs"][i], o)
    assert ended >= 4


def test_without_autoreset_a_finished_env_stays_finished(bridge: Bridge) -> None:
    bridge.make("CartPole-v1", [7], autoreset=False)
    bridge.read_step(1, 4)
    total, steps = 0.0, 0
    while True:
        s = bridge.step([0.0], 1, 4)
        steps += 1
        total += float(s["rewards"][0])
        if s["terminated"][0]:
            break
    again = bridge.step([0.0], 1, 4)
    assert again["terminated"][0] == 1 and again["rewards"][0] == 0.0
    np.testing.assert_allclose(again["obs"], s["obs"])
    assert total == steps


def test_box_actions_are_clipped_to_the_bounds(bridge: Bridge) -> None:
    hello = bridge.make("Pendulum-v1", [5])
    assert hello["action_space"] == {"type": "box", "shape": [1], "low": [-2.0], "high": [2.0]}
    bridge.read_step(1, 3)
    s = bridge.step([100.0], 1, 3)
    e = gym.make("Pendulum-v1")
    e.reset(seed=5)
    o, r, *_ = e.step(np.array([2.0], dtype=np.float32))
    np.testing.assert_allclose(s["final"][0], o, rtol=1e-6)
    assert s["rewards"][0] == pytest.approx(r)


def test_discrete_observations_become_one_hot(bridge: Bridge) -> None:
    hello = bridge.make("FrozenLake-v1", [0])
    assert hello["observation_space"] == {"type": "discrete", "n": 16} and hello["obs_dim"] == 16
    first = bridge.read_step(1, 16)
    assert first["obs"][0].tolist() == [1.0] + [0.0] * 15


def test_an_unknown_environment_is_one_line_and_exit_1(bridge: Bridge) -> None:
    out = bridge.make("NoSuchEnv-v0", [0])
    assert "NoSuchEnv" in out["error"] and "\n" not in out["error"]
    assert bridge.p.wait(timeout=60) == 1


def test_a_bad_action_is_one_line(bridge: Bridge) -> None:
    bridge.make("CartPole-v1", [0])
    bridge.read_step(1, 4)
    write_all(bridge.fin, frame(KIND_ACTIONS, np.array([5.0]).tobytes()))
    out = bridge.read_json()
    assert out["error"] == "action 5 is not an index of Discrete(2)"
    assert bridge.p.wait(timeout=60) == 1


def test_prints_of_the_environment_do_not_corrupt_the_frames(bridge: Bridge) -> None:
    bridge.make("gym_test_envs:RrlChatty-v0", [0], allow_import=True)
    bridge.read_step(1, 2)
    s = bridge.step([1.0], 1, 2)
    assert s["final"][0].tolist() == [0.5, 1.0] and s["rewards"][0] == 1.0
    assert bridge.close() == 0
    assert bridge.p.stderr is not None and b"chatty env says hello" in bridge.p.stderr.read()


def test_a_step_that_hangs_ends_the_bridge() -> None:
    b = Bridge("--step-timeout", "1")
    b.make("gym_test_envs:RrlSlow-v0", [0], allow_import=True)
    b.read_step(1, 2)
    write_all(b.fin, frame(KIND_ACTIONS, np.array([1.0]).tobytes()))
    with pytest.raises(BridgeClosed):  # end of file: the bridge ended itself
        read_frame(b.fout)
    assert b.p.wait(timeout=60) == 3
    assert b.p.stderr is not None and b"timeout: no answer within 1 s" in b.p.stderr.read()


def test_a_bridge_left_idle_ends_itself() -> None:
    b = Bridge("--idle-timeout", "1")
    b.make("CartPole-v1", [0])
    b.read_step(1, 4)
    assert b.p.wait(timeout=60) == 0


def test_a_module_id_is_refused_without_allow_import_and_the_module_is_never_imported(tmp_path: Path) -> None:
    marker = tmp_path / "imported"
    b = Bridge(env_extra={"RRL_IMPORT_MARKER": str(marker)})
    out = b.make("gym_import_marker:RrlMarked-v0", [0])
    assert (
        out["error"] == 'env_id "gym_import_marker:RrlMarked-v0" names a module to import (gym_import_marker); the task must allow it (environment.allowImport)'
    )
    assert b.p.wait(timeout=60) == 1
    assert not marker.exists(), "the bridge imported the module it refused"
    for not_true in [1, "true"]:  # only JSON true allows it
        b = Bridge(env_extra={"RRL_IMPORT_MARKER": str(marker)})
        assert "names a module to import" in b.make("gym_import_marker:RrlMarked-v0", [0], allow_import=not_true)["error"]
        assert b.p.wait(timeout=60) == 1
    assert not marker.exists()


def test_with_allow_import_the_bridge_imports_the_module_the_id_names(tmp_path: Path) -> None:
    marker = tmp_path / "imported"
    b = Bridge(env_extra={"RRL_IMPORT_MARKER": str(marker)})
    out = b.make("gym_import_marker:RrlMarked-v0", [0], allow_import=True)
    assert "RrlMarked" in out["error"]  # imported, but the module registers no such environment
    assert b.p.wait(timeout=60) == 1
    assert marker.read_text() == "imported\n"
