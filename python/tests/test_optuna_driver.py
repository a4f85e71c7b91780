"""The Optuna driver (python -m rrl_client.optuna_driver) with the real optuna and cmaes: its protocol over
real pipes, both samplers, the seeded first trial, failed trials, a history given again, and the refusals
that leave it running."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]

SPACE: list[dict[str, Any]] = [
    {"name": "lr", "kind": "float", "low": 1e-4, "high": 3e-3, "log": True},
    {"name": "gamma", "kind": "float", "low": 0.98, "high": 0.99, "log": False},
    {"name": "steps", "kind": "int", "low": 2500, "high": 50000, "log": True},
    {"name": "algo", "kind": "categorical", "choices": ["ppo", "ars", "dqn"]},
    {"name": "hidden", "kind": "categorical", "choices": ["[]", "[16]", "[64,64]"]},
    {"name": "demo", "kind": "categorical", "choices": [None, "expert"]},
    {"name": "norm", "kind": "categorical", "choices": [False, True]},
]


@pytest.fixture(autouse=True)
def needs_optuna() -> None:
    for module in ("optuna", "cmaes"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"SKIPPED LOUDLY: the Optuna driver needs {module}, not installed: run python/setup-venv.sh (python/requirements.txt)")


class Pipe:
    """The driver in its own process, spoken to as the TypeScript agent does: one JSON line each way."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": str(PYTHON_DIR), "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rrl_client.optuna_driver"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=PYTHON_DIR
        )
        self.next_id = 0
        self.hello = self.read()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the driver ended"
        out: dict[str, Any] = json.loads(line)
        return out

    def raw(self, line: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.read()

    def __call__(self, op: str, **body: Any) -> dict[str, Any]:
        self.next_id += 1
        answer = self.raw(json.dumps({"id": self.next_id, "op": op, **body}))
        assert answer["id"] == self.next_id
        return answer

    def ok(self, op: str, **body: Any) -> dict[str, Any]:
        answer = self(op, **body)
        assert answer["ok"] is True, answer
        return answer

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=30)


@pytest.fixture
def pipe() -> Any:
    p = Pipe()
    yield p
    assert p.close() == 0, "the driver ends at the end of its input"


def in_space(params: dict[str, Any]) -> None:
    assert set(params) == {p["name"] for p in SPACE}
    for p in SPACE:
        v = params[p["name"]]
        if p["kind"] == "categorical":
            assert v in p["choices"]
        else:
            assert p["low"] <= v <= p["high"]
            if p["kind"] == "int":
                assert isinstance(v, int)


def test_the_driver_says_it_is_ready_with_its_versions(pipe: Pipe) -> None:
    assert pipe.hello["ready"] is True
    assert pipe.hello["optuna"] == "5.0.0"
    assert pipe.hello["cmaes"] == "0.13.1"


@pytest.mark.parametrize("sampler", ["tpe", "cmaes"])
def test_ask_and_tell_in_rounds_of_four_learn_what_is_rewarded(pipe: Pipe, sampler: str) -> None:
    pipe.ok("init", study="t", sampler=sampler, seed=3, space=SPACE, enqueue=None)
    steps: list[int] = []
    for _ in range(6):
        asked = [pipe.ok("ask", study="t") for _ in range(4)]
        for a in asked:
            in_space(a["params"])
            steps.append(a["params"]["steps"])
            pipe.ok("tell", study="t", trial=a["trial"], value=a["params"]["steps"] / 50000)
    assert sum(steps[-8:]) > sum(steps[:8]), f"{sampler}: steps did not rise: {steps}"


def test_seeded_the_first_trial_is_the_enqueued_point_and_failed_trials_are_told_as_failed(pipe: Pipe) -> None:
    point = {"lr": 1e-3, "gamma": 0.99, "steps": 25000, "algo": "ppo", "hidden": "[64,64]", "demo": None, "norm": True}
    for sampler in ("tpe", "cmaes"):
        pipe.ok("init", study=sampler, sampler=sampler, seed=1, space=SPACE, enqueue=point)
        first = pipe.ok("ask", study=sampler)
        assert first["trial"] == 0 and first["params"] == point
        second = pipe.ok("ask", study=sampler)
        in_space(second["params"])
        assert second["params"] != point
        pipe.ok("tell", study=sampler, trial=0, value=0.25)
        pipe.ok("tell", study=sampler, trial=1, value=None)
        refused = pipe("tell", study=sampler, trial=1, value=0.5)
        assert refused["ok"] is False and "not a running trial" in refused["error"]


def test_a_history_given_again_is_the_study_s_own(pipe: Pipe) -> None:
    pipe.ok("init", study="t", sampler="tpe", seed=2, space=SPACE, enqueue=None)
    for k in range(6):
        a = pipe.ok("ask", study="t")
        pipe.ok("tell", study="t", trial=a["trial"], value=float(k))
    pipe.ok("init", study="u", sampler="tpe", seed=2, space=SPACE, enqueue=None)
    params = {"lr": 2e-4, "gamma": 0.985, "steps": 9999, "algo": "dqn", "hidden": "[]", "demo": "expert", "norm": False}
    pipe.ok("add", study="u", params=params, value=1.5)
    pipe.ok("add", study="u", params=params, value=None)
    assert pipe.ok("ask", study="u")["trial"] == 2


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("not json", "not a JSON line"),
        ("[1, 2]", "one JSON object"),
        ('{"id": 1, "op": "fly"}', "unknown op"),
        ('{"id": 1, "op": "ask", "study": "nope"}', "no study"),
        (
            '{"id": 1, "op": "init", "study": "s", "sampler": "grid", "seed": 1, "space": [{"name": "a", "kind": "categorical", "choices": [1, 2]}]}',
            "unknown sampler",
        ),
        (
            '{"id": 1, "op": "init", "study": "s", "sampler": "tpe", "seed": 1, "space": [{"name": "a", "kind": "float", "low": 0, "high": 1, "log": true}]}',
            "low > 0",
        ),
        (
            '{"id": 1, "op": "init", "study": "s", "sampler": "tpe", "seed": 1, "space": [{"name": "a", "kind": "categorical", "choices": [[1], [2]]}]}',
            "plain values",
        ),
        (
            '{"id": 1, "op": "init", "study": "s", "sampler": "tpe", "seed": 1, "space": [{"name": "a", "kind": "int", "low": 1, "high": 9}], "enqueue": {"a": 12}}',
            "outside",
        ),
    ],
)
def test_a_bad_request_is_refused_in_one_line_and_the_driver_goes_on(pipe: Pipe, line: str, error: str) -> None:
    answer = pipe.raw(line)
    assert answer["ok"] is False and error in answer["error"] and "\n" not in answer["error"]
    pipe.ok("init", study="after", sampler="cmaes", seed=1, space=SPACE, enqueue=None)
    in_space(pipe.ok("ask", study="after")["params"])


def test_values_must_be_finite_numbers(pipe: Pipe) -> None:
    pipe.ok("init", study="t", sampler="tpe", seed=1, space=SPACE, enqueue=None)
    a = pipe.ok("ask", study="t")
    for bad in ('"0.5"', "true", "NaN", "Infinity"):
        answer = pipe.raw(f'{{"id": 9, "op": "tell", "study": "t", "trial": {a["trial"]}, "value": {bad}}}')
        assert answer["ok"] is False and "finite number" in answer["error"], (bad, answer)
    pipe.ok("tell", study="t", trial=a["trial"], value=0.1)
