"""The client against a server on a real socket (the stand-in until `rrl serve` is wired, see conftest.py)."""

from __future__ import annotations

import json

import pytest

from fake_server import FakeRrl
from rrl_client.client import RrlClient, RrlError, parse_retry_after

SPEC = json.dumps({"task": "cartpole-balance", "seed": 3})


def test_tasks_and_prompt(server_url: str) -> None:
    client = RrlClient(server_url)
    tasks = client.tasks()
    assert tasks and all(isinstance(t["id"], str) for t in tasks)
    messages = client.prompt(tasks[0]["id"])
    assert messages and all(m["role"] in ("system", "user", "assistant") and isinstance(m["content"], str) for m in messages)


def test_rewards_one_per_completion_in_order(server_url: str) -> None:
    client = RrlClient(server_url)
    task = client.tasks()[0]["id"]
    answer = client.rewards(task, ["no json here, sorry", f"Here it is:\n```json\n{SPEC}\n```"])
    assert len(answer["rewards"]) == 2 and len(answer["results"]) == 2
    bad, _ = answer["results"]
    assert bad["status"] == "invalid" and bad["score"] is None and bad["reason"]


def test_rewards_values_and_job(fake: FakeRrl) -> None:
    client = RrlClient(fake.url)
    answer = client.rewards("cartpole-balance", ['{"seed": 3}', '{"seed": 5}', "prose only"])
    assert answer["rewards"] == [1.0, pytest.approx(1 / 3), -1.0]
    ok = answer["results"][0]
    assert ok["status"] == "ok" and ok["score"] == {"normalized": 1.0, "stderr": 0.01}
    assert ok["job"] is not None
    assert client.job(ok["job"])["spec"] == {"seed": 3}


def test_http_errors_name_the_request(fake: FakeRrl) -> None:
    client = RrlClient(fake.url)
    with pytest.raises(RrlError, match=r"GET /v1/tasks/nope/prompt: HTTP 404: task: unknown task") as err:
        client.prompt("nope")
    assert err.value.status == 404
    with pytest.raises(RrlError, match="HTTP 404"):
        client.rewards("nope", ["x"])


def test_unreachable_server_is_an_error_not_a_hang() -> None:
    with pytest.raises(RrlError, match="cannot reach"):
        RrlClient("http://127.0.0.1:9", timeout=5).tasks()


def test_bearer_token() -> None:
    fake = FakeRrl(token="s3cret").start()
    try:
        with pytest.raises(RrlError, match="HTTP 401") as err:
            RrlClient(fake.url).tasks()
        assert err.value.status == 401
        assert RrlClient(fake.url, token="s3cret").tasks()
    finally:
        fake.stop()


def test_retries_on_429_with_retry_after(fake: FakeRrl) -> None:
    fake.force_busy = 2
    fake.retry_after = "7"
    slept: list[float] = []
    client = RrlClient(fake.url, sleep=slept.append)
    answer = client.rewards("iris-classify", ['{"seed": 3}'])
    assert answer["rewards"] == [1.0]
    assert slept == [7.0, 7.0] and client.waits == [7.0, 7.0]
    assert len(fake.reward_calls) == 1


def test_gives_up_after_max_wait(fake: FakeRrl) -> None:
    fake.force_busy = 100
    fake.retry_after = "10"
    client = RrlClient(fake.url, max_wait=25, sleep=lambda s: None)
    with pytest.raises(RrlError, match="server busy \\(429\\)") as err:
        client.rewards("iris-classify", ["x"])
    assert err.value.status == 429 and client.waits == [10.0, 10.0]


def test_parse_retry_after() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0


def test_rejects_bad_base_url() -> None:
    with pytest.raises(ValueError, match="base_url"):
        RrlClient("localhost:8377")
