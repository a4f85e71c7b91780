"""The one-command experiment's plumbing: family flags, the arms' last-5-step figures, resuming past
finished stages, and its flag checks. (Its stages are the tested commands: rrl train, rrl export sft,
rrl_client.sft, rrl_client.grpo and rrl_client.heldout.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rrl_client.expert_iteration import family_flags, serve_cmd
from rrl_client.llm_experiment import grpo_arms, last_five, parse_args, stage_grpo, stage_heldout, stage_sft


def test_family_flags_name_every_draw_and_the_seed_once() -> None:
    assert family_flags([], 1) == []
    assert family_flags(["rings:2", "acrobot"], 5) == ["--family", "rings:2", "--family", "acrobot", "--family-seed", "5"]
    assert serve_cmd("node", "rrl.js", Path("r"), ["rings:2"], 5) == [
        "node",
        "rrl.js",
        "serve",
        "--port",
        "0",
        "--run",
        "r",
        "--family",
        "rings:2",
        "--family-seed",
        "5",
    ]


def test_last_five_reads_the_last_five_steps(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    lines = [
        {
            "step": i,
            "step_s": float(i),
            "outer/reward": i / 10,
            "outer/valid_share": 1.0,
            "outer/distinct_specs": 4 + i % 2,
            "outer/score_mean_step": 0.5,
            "tokens_per_s": 20.0,
        }
        for i in range(1, 9)
    ]
    log.write_text("".join(json.dumps(x) + "\n" for x in lines))
    got = last_five(log)
    assert got["steps"] == 8
    assert got["reward_last5"] == pytest.approx((0.4 + 0.5 + 0.6 + 0.7 + 0.8) / 5)
    assert got["reward_first5"] == pytest.approx(0.3)
    assert got["distinct_last5"] == pytest.approx((4 + 5 + 4 + 5 + 4) / 5)
    assert got["step_s_median"] == 5.0
    assert last_five(tmp_path / "absent.jsonl")["reward_last5"] is None


def test_finished_stages_are_kept_not_rerun(tmp_path: Path) -> None:
    args = parse_args(
        [
            "--model",
            "m.gguf",
            "--out",
            str(tmp_path),
            "--grpo-tasks",
            "a",
            "--heldout-family",
            "rings:1",
            "--steps",
            "2",
            "--node",
            "/nonexistent/node",
            "--ablate-doc",
            "--eval-rounds",
            "2",
        ]
    )
    (tmp_path / "sft").mkdir()
    (tmp_path / "sft" / "summary.json").write_text(json.dumps({"adapter": "A", "rows": 3}))
    for arm in ("grpo", "frozen"):
        (tmp_path / arm).mkdir()
        (tmp_path / arm / "log.jsonl").write_text('{"step": 1}\n{"step": 2}\n')
    for folder in ("heldout", "heldout-nodoc", "heldout-rounds"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "heldout.json").write_text("{}")
    # nothing is started (the node given does not exist): every stage finds its result
    assert stage_sft(args, tmp_path, ["run"]) == {"adapter": "A", "rows": 3}
    stage_grpo(args, tmp_path, "A")
    stage_heldout(args, tmp_path, "A")


def test_grpo_seeds_are_runs_of_their_own_and_the_frozen_arm_sits_beside_seed_0() -> None:
    base = ["--model", "m", "--out", "o", "--grpo-tasks", "a", "--heldout-corpus", "held-out:1"]
    assert grpo_arms(parse_args(base)) == [("grpo", 0), ("frozen", 0)]
    assert grpo_arms(parse_args([*base, "--grpo-seeds", "3", "--no-frozen"])) == [("grpo", 0), ("grpo-1", 1), ("grpo-2", 2)]
    for bad in (["--grpo-seeds", "0"], ["--sft-adapter", "A", "--own-samples", "4"], ["--seeds", "1"]):
        with pytest.raises(SystemExit):
            parse_args([*base, *bad])


def test_held_out_draws_are_required() -> None:
    with pytest.raises(SystemExit):
        parse_args(["--model", "m", "--out", "o", "--grpo-tasks", "a"])
