"""An exported model from Python: the docs' snippet (docs/tasks-own.md, "The model in use") run verbatim
on a model `rrl export model` wrote (from a job of a task file with categorical columns and empty
cells), against `rrl predict` on the same rows; and a Gymnasium task file's exported policy run for
whole episodes in Gymnasium, its actions against `rrl predict`'s.

Needs node and the compiled harness (dist/); skips loudly naming the command that enables it.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import gymnasium as gym
import numpy as np
import onnx
import onnxruntime as ort
import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRY = ROOT / "dist" / "src" / "cli" / "index.js"
DOC = ROOT / "docs" / "tasks-own.md"

if shutil.which("node") is None or not ENTRY.exists():
    pytest.skip("the model export tests need node and dist/: run `npm run build` in the repository root", allow_module_level=True)


def rrl(*args: str | Path, cwd: Path) -> str:
    env = {**os.environ, "RRL_EVAL_SECRET": os.environ.get("RRL_EVAL_SECRET") or "1779033703"}
    r = subprocess.run(["node", str(ENTRY), *map(str, args)], check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"rrl {' '.join(map(str, args))}: {r.stderr[-2000:]}"
    return r.stdout


def snippet() -> str:
    text = DOC.read_text()
    m = re.search(r"<!-- snippet: onnx-python -->\n```python\n(.*?)```", text, re.DOTALL)
    assert m, "docs/tasks-own.md holds the snippet under <!-- snippet: onnx-python -->"
    return m.group(1)


def customers(n: int, offset: int = 0) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for k in range(n):
        i = k + offset
        plan = ["basic", "plus", "pro"][(i * 5) % 3]
        region = "" if i % 13 == 0 else ["EU", "US", "APAC", "LATAM"][(i * 3) % 4]
        tenure: object = "" if i % 11 == 0 else (i * 7) % 60
        spend = round(20 + ((i * 37) % 90) + float(np.sin(i)), 2)
        risk = (plan == "basic") + (isinstance(tenure, int) and tenure < 12) + 0.5 * (spend < 50)
        rows.append({"plan_type": plan, "region": region, "tenure": tenure, "spend": spend, "churned": "yes" if risk >= 1.5 else "no"})
    return rows


def write_csv(path: Path, rows: list[dict[str, object]]) -> None:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_the_docs_snippet_gives_what_rrl_predict_gives(tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    write_csv(tmp_path / "tasks" / "customers.csv", customers(300))
    task = {
        "id": "own-churn",
        "title": "Which customers leave",
        "description": "Customers of a subscription service: their plan, region, tenure in months and monthly spend.",
        "kind": "supervised",
        "data": {"file": "customers.csv", "target": "churned", "type": "classification", "features": ["plan_type", "region", "tenure", "spend"]},
        "metric": "accuracy",
        "caps": {"maxExamples": 20000, "maxWallSeconds": 60},
        "baseline": {"epochs": 10, "examples": 3000, "hidden": [8], "learningRate": 0.01},
    }
    (tmp_path / "tasks" / "churn.json").write_text(json.dumps(task))
    # One job of the task's baseline spec is model enough (src/cli/model.test.ts exports a whole run's).
    (tmp_path / "spec.json").write_text(rrl("job", "baseline", "own-churn", "--task-dir", "tasks", cwd=tmp_path))
    rrl("job", "run", "spec.json", "--task-dir", "tasks", "--out", "jobs/churn", cwd=tmp_path)
    rrl("export", "model", "jobs/churn", "--out", "models/churn", cwd=tmp_path)
    onnx.checker.check_model(onnx.load(tmp_path / "models" / "churn" / "model.onnx"), full_check=True)
    fresh = customers(50, offset=1000)
    fresh.append({"plan_type": "enterprise", "region": "MARS", "tenure": "", "spend": 70, "churned": ""})
    write_csv(tmp_path / "new-customers.csv", fresh)
    rrl("predict", "models/churn", "--data", "new-customers.csv", "--out", "predictions.csv", cwd=tmp_path)
    with (tmp_path / "predictions.csv").open() as f:
        predicted = list(csv.DictReader(f))
    names: dict[str, object] = {}
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        exec(compile(snippet(), str(DOC), "exec"), names)  # noqa: S102 - the docs' own snippet, verbatim
    finally:
        os.chdir(cwd)
    outputs = names["outputs"]
    assert isinstance(outputs, dict)
    assert list(outputs["label"]) == [r["label"] for r in predicted]
    classes = json.loads((tmp_path / "models" / "churn" / "card.json").read_text())["task"]["classes"]
    want = np.array([[float(r[f"p({c})"]) for c in classes] for r in predicted])
    np.testing.assert_allclose(outputs["probabilities"], want, rtol=0, atol=1e-12)


def test_a_gymnasium_task_files_exported_policy_runs_whole_episodes_in_gymnasium(tmp_path: Path) -> None:
    rrl("task", "new", "--gymnasium", "CartPole-v1", "--id", "cart-pole", "--out", "tasks/cart-pole.json", cwd=tmp_path)
    task_file = tmp_path / "tasks" / "cart-pole.json"
    task = json.loads(task_file.read_text())
    task["split"]["episodes"] = 5  # a short job and a short hidden evaluation: the test is of the export
    task_file.write_text(json.dumps(task))
    spec = json.loads(rrl("job", "baseline", "cart-pole", "--task-dir", "tasks", cwd=tmp_path))
    spec["budget"]["envSteps"] = 4096
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    rrl("job", "run", "spec.json", "--task-dir", "tasks", "--out", "jobs/cart", cwd=tmp_path)
    rrl("export", "model", "jobs/cart", "--out", "models/cart", cwd=tmp_path)
    model = tmp_path / "models" / "cart" / "model.onnx"
    onnx.checker.check_model(onnx.load(model), full_check=True)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    session = ort.InferenceSession(str(model), options)
    env = gym.make("CartPole-v1")
    seen: list[np.ndarray] = []
    actions: list[int] = []
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            action = int(session.run(["action"], {"observation": obs[None, :].astype(np.float64)})[0][0])
            assert env.action_space.contains(action)
            seen.append(obs.astype(np.float64))
            actions.append(action)
            obs, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
    env.close()
    observations = np.array(seen)
    write_csv(tmp_path / "obs.csv", [{f"obs_{j}": repr(float(v)) for j, v in enumerate(row)} for row in observations])
    rrl("predict", "models/cart", "--data", "obs.csv", "--out", "actions.csv", cwd=tmp_path)
    with (tmp_path / "actions.csv").open() as f:
        assert [int(r["action"]) for r in csv.DictReader(f)] == actions, "the same greedy actions from rrl predict"
