"""The client's side of the job API (POST /v1/jobs, GET /v1/requests/{id} and its events) against a real `rrl serve`."""

from __future__ import annotations

import socket
import tempfile
import threading
from pathlib import Path
from typing import Any

from real_serve import TINY_PATCH, TINY_TASK, start_serve
from rrl_client.client import RewardsResponse, RrlClient


def test_score_submits_and_waits_on_the_event_stream(rrl_serve: str) -> None:
    client = RrlClient(rrl_serve)
    answer = client.score(TINY_TASK, [TINY_PATCH, "no job in this text"], idempotency_key="py-jobs-1")
    assert isinstance(answer["rewards"][0], float)
    assert answer["rewards"][1] == -1.0
    assert answer["results"][1]["status"] == "invalid"
    # The same key is the same request: done, the same jobs, nothing trained again.
    again = client.submit(TINY_TASK, [TINY_PATCH, "no job in this text"], idempotency_key="py-jobs-1")
    assert again["replayed"] and again["status"] == "done"
    assert [r["job"] for r in answer["results"]] == again["jobs"]
    # The stream of a done request: its jobs, then the rewards.
    events = list(client.events(again["request"]))
    assert [e for e, _ in events] == ["job", "job", "rewards"]
    assert events[-1][1]["rewards"] == answer["rewards"]
    status = client.request(again["request"])
    assert status["status"] == "done" and status["finished"] == 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_wait_outlives_a_server_restart() -> None:
    """A trainer waiting on a request keeps waiting through `rrl serve` stopping and coming back with --resume."""
    with tempfile.TemporaryDirectory(prefix="rrl-serve-restart-") as tmp:
        run, port = Path(tmp) / "run", _free_port()
        first, url = start_serve(run, port=port)
        client = RrlClient(url)
        got: dict[str, Any] = {}
        try:
            accepted = client.submit(TINY_TASK, [TINY_PATCH], idempotency_key="restart")

            def wait() -> None:
                try:
                    got["answer"] = client.wait(accepted["request"], timeout=120)
                except Exception as err:  # noqa: BLE001  (any failure in the thread is reported below, in the test)
                    got["error"] = err

            waiter = threading.Thread(target=wait)
            waiter.start()
        finally:
            first.terminate()  # the baseline is still training: the request stays pending
            first.wait(timeout=60)
        second, _ = start_serve(run, "--resume", port=port)
        try:
            waiter.join(timeout=150)
            assert "error" not in got, got.get("error")
            answer: RewardsResponse = got["answer"]
            assert isinstance(answer["rewards"][0], float)
        finally:
            second.terminate()
            second.wait(timeout=60)
