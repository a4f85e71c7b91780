"""A real `rrl serve` for the adapter tests: `node bin/rrl.js serve --port 0` on a fresh run directory.

Started once per test session (the task's baseline job trains on the first request and is reused).
Skips loudly, naming the command that enables it, when node or the compiled harness (dist/) is missing;
with RRL_REQUIRE_SERVE=1 it fails instead.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRY = ROOT / "dist" / "src" / "cli" / "index.js"

TINY_TASK = "cartpole-short"
"""A task whose jobs train in a second or two (ARS on a short cart-pole budget)."""

TINY_PATCH = (
    '{"algorithm": {"name": "ars", "stepSize": 0.02, "directions": 8, "topDirections": 4, "noise": 0.03}, "model": {"hidden": []}, "budget": {"envSteps": 500}}'
)
"""A merge patch over the tiny task's baseline that makes a tiny job (ARS, 500 env steps)."""


def _missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not on PATH"
    if not ENTRY.exists():
        return "dist/ is missing: run `npm run build` in the repository root"
    return None


def start_listening(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """Starts a server that prints ``listening on http://HOST:PORT``; returns the process and that URL
    (its output is drained from then on). Raises with its last lines when it exits first."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd, env=env)
    assert proc.stdout is not None
    lines: list[str] = []
    url = None
    for line in proc.stdout:
        lines.append(line)
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            url = m.group(1)
            break
    if url is None:
        proc.wait(timeout=30)
        raise RuntimeError(f"{' '.join(cmd[:4])} exited without listening:\n" + "".join(lines[-20:]))
    out = proc.stdout
    threading.Thread(target=lambda: [None for _ in out], daemon=True).start()  # keep the pipe drained
    return proc, url


def start_serve(run_dir: Path, *extra: str, port: int = 0) -> tuple[subprocess.Popen[str], str]:
    """Starts `rrl serve --port PORT --run RUN_DIR EXTRA...` (port 0: a free one); returns the process and its URL."""
    cmd = ["node", str(ROOT / "bin" / "rrl.js"), "serve", "--port", str(port), "--run", str(run_dir), "--workers", "2", *extra]
    env = {**os.environ, "RRL_EVAL_SECRET": os.environ.get("RRL_EVAL_SECRET", "1779033703")}
    return start_listening(cmd, ROOT, env)


@pytest.fixture(scope="session")
def rrl_serve() -> Iterator[str]:
    """The URL of a real `rrl serve` (2 local workers) shared by the session's tests."""
    why = _missing()
    if why:
        if os.environ.get("RRL_REQUIRE_SERVE") == "1":
            pytest.fail(f"a real rrl serve is required (RRL_REQUIRE_SERVE=1) but {why}")
        pytest.skip(f"SKIPPED (real rrl serve): {why}")
    with tempfile.TemporaryDirectory(prefix="rrl-serve-") as tmp:
        proc, url = start_serve(Path(tmp) / "run")
        try:
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=60)
