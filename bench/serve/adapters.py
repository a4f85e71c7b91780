"""`npm run bench -- serve`'s Python arms: jobs through each framework adapter against a running `rrl serve`.

    .venv/bin/python bench/serve/adapters.py --url URL --task TASK --specs FILE --arm trl|openenv|verifiers --clients 8

Each of ``--clients`` threads takes completions from FILE (a JSON list of job texts) one at a time and
sends each as one episode through the adapter, timing submission to reward. Prints one JSON line:
``{"arm", "latencies": [s, ...], "rewards": [r, ...], "seconds"}``.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from typing import Any, Callable


def episode_runner(arm: str, url: str, task: str) -> tuple[Callable[[str], Any], Callable[[], None]]:
    """A function that runs one episode of ``task`` with a completion and returns its reward, and a cleanup."""
    if arm == "trl":
        from rrl_client.trl_env import rrl_environment

        cls = rrl_environment(url)

        def trl(text: str) -> Any:
            env = cls()
            env.reset(task=task)
            env.submit_job(text)
            return env.reward

        return trl, lambda: None
    if arm == "openenv":
        from rrl_client.openenv_client import openenv_environment

        server = subprocess.Popen(
            [sys.executable, "-m", "rrl_client.openenv_server", "--rrl-url", url, "--port", "0", "--max-sessions", "64"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        assert server.stdout is not None
        env_url = None
        for line in server.stdout:
            m = re.search(r"listening on (http://\S+)", line)
            if m:
                env_url = m.group(1)
                break
        if env_url is None:
            raise RuntimeError("the OpenEnv server did not start")
        out = server.stdout
        threading.Thread(target=lambda: [None for _ in out], daemon=True).start()
        cls = openenv_environment(env_url)
        local = threading.local()

        def openenv(text: str) -> Any:
            if not hasattr(local, "env"):
                local.env = cls()  # one WebSocket session per client thread, as a trainer keeps one per rollout slot
            local.env.reset(task=task)
            local.env.submit_job(text)
            return local.env.reward

        def stop() -> None:
            server.terminate()
            server.wait(timeout=30)

        return openenv, stop
    if arm == "verifiers":
        from rrl_verifiers_bench import verifiers_runner  # type: ignore[import-not-found]

        return verifiers_runner(url, task), lambda: None
    raise SystemExit(f"unknown arm {arm!r}")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--task", required=True)
    p.add_argument("--specs", required=True)
    p.add_argument("--arm", required=True)
    p.add_argument("--clients", type=int, default=8)
    a = p.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    with open(a.specs) as f:
        texts: list[str] = json.load(f)
    run, stop = episode_runner(a.arm, a.url, a.task)
    work: queue.Queue[str] = queue.Queue()
    for t in texts:
        work.put(t)
    latencies: list[float] = []
    rewards: list[Any] = []
    lock = threading.Lock()

    def client() -> None:
        while True:
            try:
                text = work.get_nowait()
            except queue.Empty:
                return
            t0 = time.perf_counter()
            r = run(text)
            with lock:
                latencies.append(time.perf_counter() - t0)
                rewards.append(r)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(a.clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - t0
    stop()
    print(json.dumps({"arm": a.arm, "latencies": latencies, "rewards": rewards, "seconds": seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
