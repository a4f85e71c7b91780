"""TRL and verl reward functions against a server on a real socket: one /v1/rewards call per task."""

from __future__ import annotations

from typing import Any

import pytest

from fake_server import FakeRrl
from rrl_client import rewards as rw
from rrl_client.client import RrlClient
from rrl_client.rewards import TrlReward, completion_text, compute_score, compute_score_batch


def test_completion_text_forms() -> None:
    assert completion_text("raw") == "raw"
    assert completion_text([{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]) == "ab"
    assert completion_text([{"role": "assistant", "content": [{"type": "text", "text": "x"}, {"type": "image"}]}]) == "x"
    assert completion_text([{"role": "user", "content": "not mine"}]) == ""


def test_trl_reward_one_call_per_task_order_kept(fake: FakeRrl) -> None:
    reward = TrlReward(RrlClient(fake.url))
    completions = [[{"role": "assistant", "content": c}] for c in ['{"seed": 3}', "none", '{"seed": 4}', '{"seed": 1}']]
    tasks = ["cartpole-balance", "iris-classify", "cartpole-balance", "iris-classify"]
    out = reward(prompts=[[{"role": "user", "content": "p"}]] * 4, completions=completions, task=tasks, completion_ids=[[1]] * 4, trainer_state=None)
    assert out == [1.0, -1.0, 0.5, pytest.approx(1 / 3)]
    calls = sorted(fake.reward_calls, key=lambda c: c["task"])
    assert calls == [
        {"task": "cartpole-balance", "completions": ['{"seed": 3}', '{"seed": 4}']},
        {"task": "iris-classify", "completions": ["none", '{"seed": 1}']},
    ]
    assert reward.totals == {"ok": 3, "invalid": 1}
    assert reward.__name__ == "rrl"


def test_trl_reward_needs_the_task_column(fake: FakeRrl) -> None:
    with pytest.raises(KeyError, match="'task' column"):
        TrlReward(RrlClient(fake.url))(prompts=["p"], completions=["c"])


def test_trl_reward_works_on_the_real_api(server_url: str) -> None:
    client = RrlClient(server_url)
    task = client.tasks()[0]["id"]
    out = TrlReward(client)(prompts=["p", "p"], completions=["no spec at all", "still nothing"], task=[task, task])
    assert len(out) == 2 and out[0] == out[1]  # both invalid: the same penalty


def test_verl_batch_and_single(fake: FakeRrl, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RRL_URL", fake.url)
    monkeypatch.delenv("RRL_TOKEN", raising=False)
    rw._clients.clear()
    out = compute_score_batch(
        data_sources=["rrl"] * 3,
        solution_strs=['{"seed": 3}', "x", '{"seed": 2}'],
        ground_truths=["cartpole-balance", "cartpole-balance", None],
        extra_infos=[None, None, {"task": "iris-classify"}],
    )
    assert out == [1.0, -1.0, 0.5]
    assert sorted(len(c["completions"]) for c in fake.reward_calls) == [1, 2]
    assert compute_score("rrl", '{"seed": 3}', "iris-classify") == 1.0
    with pytest.raises(ValueError, match="no task id"):
        compute_score("rrl", "x", None, {})


def test_verl_data_rows_feed_the_batched_reward(fake: FakeRrl, tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    from datasets import Dataset

    from rrl_client.verl_data import main

    out = f"{tmp_path}/train.parquet"
    assert main(["--url", fake.url, "--repeat", "2", "--out", out]) == 0
    ds = Dataset.from_parquet(out)
    assert ds.num_rows == 4 and ds[0]["data_source"] == "rrl"
    assert [r["task"] for r in ds["extra_info"]] == ["cartpole-balance", "iris-classify"] * 2
    assert ds[0]["prompt"][0]["role"] == "system"
    monkeypatch.setenv("RRL_URL", fake.url)
    rw._clients.clear()
    rewards = compute_score_batch(ds["data_source"], ['{"seed": 3}'] * 4, [r["ground_truth"] for r in ds["reward_model"]], ds["extra_info"])
    assert rewards == [1.0] * 4 and len(fake.reward_calls) == 2


def test_verl_a_null_gets_the_mean_of_its_rows_scored_completions(fake: FakeRrl, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RRL_URL", fake.url)
    monkeypatch.delenv("RRL_TOKEN", raising=False)
    rw._clients.clear()
    plain = fake.score

    def score(task: str, text: str) -> dict[str, Any]:  # "null" marks a completion the harness cannot score
        if "null" in text:
            return {"reward": None, "result": {"status": "failed", "score": None, "reason": "unscorable: score-timeout", "job": "j", "unchanged": False}}
        return plain(task, text)

    fake.score = score  # type: ignore[method-assign]
    texts = ['{"seed": 3} null', '{"seed": 3}', '{"seed": 4}', "x", '{"seed": 2} null', '{"seed": 1} null', '{"seed": 1} null']
    rows = [0, 0, 0, 0, 1, 2, 2]
    out = compute_score_batch(["rrl"] * 7, texts, ["cartpole-balance"] * 7, [{"task": "cartpole-balance", "index": i} for i in rows])
    # row 0: the null gets the mean of 1.0, 0.5 and -1 (its advantage is 0); rows 1 and 2 have no scored completion: 0.0
    assert out == [pytest.approx(0.5 / 3), 1.0, 0.5, -1.0, 0.0, 0.0, 0.0]
    assert out[0] == pytest.approx(sum(out[:4]) / 4), "the null is its row's mean: advantage 0"
    # the per-sample form cannot see the row: a null gets the least a job is paid, nothing a null-seeker could profit from
    assert compute_score("rrl", '{"seed": 3} null', "cartpole-balance") == -1.0
