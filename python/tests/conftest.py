"""Fixtures: a server speaking the `rrl serve` API on a real socket.

``server_url`` is the real `rrl serve` when ``RRL_TEST_SERVE_CMD`` is set (a shell command that starts
it and prints ``listening on http://HOST:PORT``, e.g. ``node bin/rrl.js serve --port 0 --run DIR``);
otherwise the in-test stand-in (fake_server.py), until the integrator wires the real one.
``fake`` is always the stand-in (tests that inspect what the server received).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_server import FakeRrl
from real_serve import rrl_serve  # noqa: F401  (a real `rrl serve`, one per session, for the adapter tests)


@pytest.fixture
def fake() -> Iterator[FakeRrl]:
    server = FakeRrl().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def server_url(fake: FakeRrl) -> Iterator[str]:
    cmd = os.environ.get("RRL_TEST_SERVE_CMD")
    if not cmd:
        yield fake.url
        return
    proc = subprocess.Popen(shlex.split(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=Path(__file__).resolve().parents[2])
    try:
        assert proc.stdout is not None
        url = None
        for line in proc.stdout:
            m = re.search(r"listening on (http://\S+)", line)
            if m:
                url = m.group(1)
                break
        assert url, f"`{cmd}` exited without printing 'listening on http://...'"
        out = proc.stdout
        threading.Thread(target=lambda: [None for _ in out], daemon=True).start()  # keep the pipe drained
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
