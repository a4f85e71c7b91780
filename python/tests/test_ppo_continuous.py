"""The PyTorch PPO command trainer on a real MuJoCo environment, with a tiny budget."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rrl_gym"))
import ppo_continuous as ppo

BRIEF: dict[str, Any] = {
    "environment": {
        "gymnasium": {
            "id": "InvertedPendulum-v5",
            "kwargs": {},
            "obsDim": 4,
            "actionSpace": {"type": "box", "low": [-3.0], "high": [3.0]},
            "maxEpisodeSteps": 1000,
        }
    },
    "budget": {"maxEnvSteps": 512, "maxWallSeconds": 120},
}


def spec(**algo: Any) -> dict[str, Any]:
    return {
        "task": "inverted-pendulum-torch",
        "environment": {"params": {}, "wrappers": ["normalize-observation"], "numEnvs": 2},
        "reward": {"expression": "r"},
        "model": {"hidden": [8], "activation": "tanh"},
        "algorithm": {
            "name": "ppo",
            "learningRate": 3e-4,
            "annealLr": True,
            "gamma": 0.99,
            "gaeLambda": 0.95,
            "clip": 0.2,
            "epochs": 2,
            "minibatches": 4,
            "rolloutSteps": 64,
            "entropyCoef": 0.0,
            **algo,
        },
        "budget": {"envSteps": 100_000, "targetReturn": None},
        "seed": 3,
    }


def run(tmp: Path, s: dict[str, Any], brief: dict[str, Any] = BRIEF) -> int:
    (tmp / "brief.json").write_text(json.dumps(brief))
    (tmp / "spec.json").write_text(json.dumps(s))
    return ppo.main([str(tmp / "spec.json"), str(tmp)])


def test_a_short_run_writes_the_artifact_within_the_brief_cap(tmp_path: Path) -> None:
    assert run(tmp_path, spec()) == 0
    cost = json.loads((tmp_path / "cost.json").read_text())
    assert cost["envSteps"] == 512  # the brief's cap, not the spec's 100 000
    status = json.loads((tmp_path / "status.json").read_text())
    assert status["status"] == "succeeded" and status["updates"] == 4
    policy = json.loads((tmp_path / "policy.json").read_text())
    assert policy["format"] == "rrl-mlp-policy/1" and policy["obsDim"] == 4
    assert [(layer["in"], layer["out"]) for layer in policy["layers"]] == [(4, 8), (8, 1)]
    assert len(policy["obsNorm"]["mean"]) == 4 and all(s > 0 for s in policy["obsNorm"]["std"])
    names = {json.loads(line)["name"] for line in (tmp_path / "curve.jsonl").read_text().splitlines()}
    assert {"charts/episodic_return", "losses/value_loss"} <= names


def test_the_policy_file_computes_the_actor_mean(tmp_path: Path) -> None:
    agent = ppo.Agent(3, 2, [5, 4], "tanh", 0.0)
    norm = ppo.RunningMeanStd((3,))
    norm.update(np.random.default_rng(0).normal(2.0, 3.0, (50, 3)))
    f = ppo.policy_file(agent, 3, [-1.0, -1.0], [1.0, 1.0], "tanh", norm)
    x = np.random.default_rng(1).normal(size=(6, 3))
    z = np.clip((x - np.array(f["obsNorm"]["mean"])) / np.array(f["obsNorm"]["std"]), -10, 10)
    h = z
    for i, layer in enumerate(f["layers"]):
        h = h @ np.array(layer["weights"]).reshape(layer["in"], layer["out"]) + np.array(layer["bias"])
        if i < len(f["layers"]) - 1:
            h = np.tanh(h)
    want = agent.actor_mean(torch.as_tensor(z, dtype=torch.float32)).detach().numpy()
    np.testing.assert_allclose(h, want, rtol=1e-4, atol=1e-5)


def test_a_bad_spec_fails_in_one_line(tmp_path: Path) -> None:
    s = spec()
    s["algorithm"]["name"] = "dqn"
    assert run(tmp_path, s) == 1
    status = json.loads((tmp_path / "status.json").read_text())
    assert status == {"status": "failed", "error": 'ValueError: algorithm.name: this trainer runs "ppo", not "dqn"'}


def test_a_brief_naming_a_module_to_import_without_allowing_it_fails_in_one_line(tmp_path: Path) -> None:
    g = dict(BRIEF["environment"]["gymnasium"], id="os:InvertedPendulum-v5")
    assert run(tmp_path, spec(), dict(BRIEF, environment={"gymnasium": g})) == 1
    status = json.loads((tmp_path / "status.json").read_text())
    assert status == {
        "status": "failed",
        "error": 'ValueError: brief.environment.gymnasium.id: "os:InvertedPendulum-v5" names a module to import; the task must allow it (allowImport)',
    }
