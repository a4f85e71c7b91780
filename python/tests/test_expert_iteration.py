"""Expert iteration's orchestration: a real `rrl export sft` on a small real run, SFT and one GRPO step
on a tiny model against the stand-in server, and starting a server from its `listening on` line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fake_server import FakeRrl
from rrl_client.expert_iteration import REPO_RRL, main, start_serve
from tiny_model import tiny_model, tiny_tokenizer

needs_rrl = pytest.mark.skipif(
    shutil.which("node") is None or not (REPO_RRL.parents[1] / "dist" / "src" / "cli" / "index.js").exists(),
    reason="node or the built rrl (dist/) is missing: run npm run build",
)


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real `rrl train` run: random search on two-spirals, one iteration of 3 (about 45 s on 2 cores)."""
    run = tmp_path_factory.mktemp("rrl") / "run"
    subprocess.run(
        [
            "node",
            str(REPO_RRL),
            "train",
            "--tasks",
            "two-spirals",
            "--agent",
            "random",
            "--iterations",
            "1",
            "--group",
            "3",
            "--seed",
            "1",
            "--run",
            str(run),
            "--workers",
            "2",
        ],
        check=True,
        capture_output=True,
    )
    return run


@needs_rrl
def test_one_round_exports_fine_tunes_and_runs_grpo_from_the_adapter(fake: FakeRrl, real_run: Path, tmp_path: Path) -> None:
    tok = tiny_tokenizer()
    tiny_model(tok).save_pretrained(str(tmp_path / "model"))
    tok.save_pretrained(str(tmp_path / "model"))
    out = tmp_path / "ei"
    code = main(
        [
            "--rounds",
            "1",
            "--runs",
            str(real_run),
            "--model",
            str(tmp_path / "model"),
            "--tasks",
            "iris-classify",
            "--output-dir",
            str(out),
            "--url",
            fake.url,
            "--steps",
            "1",
            "--num-generations",
            "2",
            "--prompts-per-step",
            "1",
            "--max-completion-length",
            "8",
            "--sft-epochs",
            "1",
            "--sft-max-length",
            "4096",
            "--lora-r",
            "4",
            "--lora-alpha",
            "8",
        ]
    )
    assert code == 0
    rows = [json.loads(line) for line in (out / "round-1" / "sft.jsonl").read_text().splitlines()]
    assert rows and all(r["task"] == "two-spirals" and r["messages"][-1]["role"] == "assistant" for r in rows)
    [summary] = [json.loads(line) for line in (out / "rounds.jsonl").read_text().splitlines()]
    assert summary["round"] == 1 and summary["sft_rows"] == len(rows) and summary["sft"]["steps"] >= 1
    assert summary["grpo_start"] == str(out / "round-1" / "sft" / "adapter"), "GRPO started from the SFT adapter"
    assert (out / "round-1" / "grpo" / "adapter" / "adapter_config.json").exists()
    assert summary["grpo"]["step"] == 1 and fake.reward_calls


def test_start_serve_reads_the_listening_line(fake: FakeRrl) -> None:
    proc, url = start_serve([sys.executable, "-c", f"import time; print('rrl serve: listening on {fake.url}', flush=True); time.sleep(60)"])
    try:
        assert url == fake.url
    finally:
        proc.terminate()
        proc.wait()
    with pytest.raises(RuntimeError, match="no 'listening on' line"):
        start_serve([sys.executable, "-c", "print('nothing here')"])
