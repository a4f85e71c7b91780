"""The held-out evaluation (python -m rrl_client.heldout) against the stand-in server on a real socket:
two model arms (a tiny model saved in the test, and the same with a LoRA adapter) × one task × two
seeds end to end, the Optuna arm's study, its search space from the published design space, and the rows of
a transfer experiment's report."""

from __future__ import annotations

import importlib.util
import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fake_server import PATCH_SCHEMA, FakeRrl, baseline
from rrl_client.client import RrlClient
from rrl_client.guided import schema_errors
from rrl_client.heldout.cli import held_out_tasks, main, parse_args
from rrl_client.heldout.models import parse_arm
from rrl_client.heldout.report import REPETITION_STRIDE, metric_keys, read_transfer, transfer_ready, transfer_tasks
from rrl_client.heldout.space import from_description

REPO = Path(__file__).resolve().parents[2]
TASK = "acrobot-swingup"


def optuna_or_skip() -> None:
    if importlib.util.find_spec("optuna") is None:
        pytest.skip("SKIPPED LOUDLY: the Optuna arm needs optuna, not installed: pip install optuna==5.0.0 (python/requirements.txt)")


def save_tiny(tmp: Path) -> tuple[str, str]:
    """A tiny Llama-like model and its char tokenizer saved as a model directory, and a LoRA adapter for it."""
    from peft import LoraConfig, get_peft_model

    from tiny_model import tiny_model, tiny_tokenizer

    tok = tiny_tokenizer()
    model = tiny_model(tok, seed=2)
    model_dir, adapter_dir = tmp / "tiny", tmp / "adapter"
    model.save_pretrained(model_dir)
    tok.save_pretrained(model_dir)
    peft = get_peft_model(model, LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False, task_type="CAUSAL_LM"))
    peft.save_pretrained(adapter_dir)
    return str(model_dir), str(adapter_dir)


def test_arms_flags_and_task_selection() -> None:
    assert parse_arm("sft=models/m.gguf:runs/sft/adapter").adapter == "runs/sft/adapter"
    assert parse_arm("base=models/m.gguf").adapter is None
    for bad in ("nomodel", "=m", "x=m:", "baseline=m", "optuna=m"):
        with pytest.raises(ValueError):
            parse_arm(bad)
    args = parse_args(["--arm", "a=m", "--samples", "16,4"])
    assert args.samples == [4, 16] and args.seeds == 2 and args.temperature == 0.8
    assert parse_args(["--arm", "a=m", "--samples", "0"]).samples == []  # greedy only
    for bad in (["--samples", "0,4"], ["--samples", "0", "--optuna"]):
        with pytest.raises(SystemExit):
            parse_args(["--arm", "a=m", *bad])
    with pytest.raises(SystemExit):
        parse_args(["--seeds", "1"])
    with pytest.raises(SystemExit):
        parse_args(["--arm", "a=m", "--arm", "a=n"])
    rows = [{"id": "a", "split": "train"}, {"id": "b", "split": "held-out"}, {"id": "rings-fam-1-0", "split": "held-out"}]
    assert held_out_tasks(rows) == ["b", "rings-fam-1-0"]


def test_the_search_space_is_the_published_design_space_and_gives_valid_patches() -> None:
    entry = REPO / "dist" / "src" / "cli" / "index.js"
    if shutil.which("node") is None or not entry.exists():
        pytest.skip("SKIPPED LOUDLY: `rrl space` needs node and dist/: run `npm run build` in the repository root")
    described = subprocess.run(["node", str(entry), "space", "--task", "penguins-species"], capture_output=True, text=True, check=True, cwd=REPO)
    description = json.loads(described.stdout)
    inputs = json.loads((REPO / "bench" / "guided" / "inputs.json").read_text())
    task = inputs["penguins-species"]
    schema = task["patchSchema"]
    text = task["messages"][-1]["content"]
    base = json.loads(text[text.index("{") : text.index("\n", text.index("{"))])
    space = from_description(description, base)
    by = {p.name: p for p in space.params}
    heads = {h["name"]: h for h in description["heads"]}
    for name, p in by.items():  # the harness's kinds, ranges and log scale, as its own optimisers take them
        assert heads[name]["writes"] == "option" and p.path == tuple(heads[name]["path"].split("."))
        assert (p.kind, p.log) == (heads[name]["param"]["kind"], heads[name]["param"].get("log", False))
    assert by["learningRate"].kind == "float" and by["learningRate"].log and by["learningRate"].path == ("algorithm", "learningRate")
    assert by["batchSize"].kind == "int" and by["batchSize"].log
    assert set(by["activation"].choices) == {"tanh", "relu"} and by["activation"].path == ("model", "activation")
    # Written through a rule (the optimizer with its weight decay, the sources' mixture, the budget's share): left at the baseline.
    assert "optimizer" not in by and "budgetShare" not in by and not any(n.startswith("source:") for n in by)
    assert json.loads(str(by["hidden"].choices[0])) == [32]
    rng = random.Random(0)
    for _ in range(50):
        values: dict[str, Any] = {}
        for p in space.params:
            values[p.name] = (
                rng.choice(p.choices) if p.kind == "categorical" else (rng.randint(int(p.low), int(p.high)) if p.kind == "int" else rng.uniform(p.low, p.high))
            )
        patch = space.to_patch(values)
        assert schema_errors(patch, schema) == [], patch
        for p in space.params:
            if p.kind != "categorical":  # a drawn number lands on an option of the design space
                node: Any = patch
                for key in p.path:
                    node = node[key]
                assert node in heads[p.name]["options"], (p.name, node)


def test_the_optuna_study_posts_schema_valid_patches_and_improves_on_its_first_trial(fake: FakeRrl) -> None:
    optuna_or_skip()
    from rrl_client.heldout.study import run_study

    space = from_description(RrlClient(fake.url).space(TASK), baseline(TASK))
    assert [p.name for p in space.params] == ["hidden", "ppo.learningRate"]
    res = run_study(RrlClient(fake.url), TASK, space, trials=12, seed=1, batch=4)
    assert len(res.trials) == 12 and len(fake.reward_calls) == 3  # rounds of 4, one request each
    for t in res.trials:
        assert schema_errors(t.patch, PATCH_SCHEMA) == [], t.patch
    scores = [o.normalized for o in res.outcomes]
    assert all(s is not None and 0 <= s <= 1 for s in scores)
    assert max(s for s in scores if s is not None) >= scores[0]  # type: ignore[operator]
    again = run_study(RrlClient(fake.url), TASK, space, trials=12, seed=1, batch=4)
    assert [t.patch for t in again.trials] == [t.patch for t in res.trials]  # seeded


def test_two_model_arms_one_task_two_seeds_end_to_end(fake: FakeRrl, tmp_path: Path) -> None:
    import torch

    torch.set_num_threads(1)
    model_dir, adapter_dir = save_tiny(tmp_path)
    out = tmp_path / "out"
    optuna = importlib.util.find_spec("optuna") is not None
    argv = [
        "--url",
        fake.url,
        "--tasks",
        TASK,
        "--arm",
        f"base={model_dir}",
        "--arm",
        f"lora={model_dir}:{adapter_dir}",
        "--samples",
        "2,4",
        "--seeds",
        "2",
        "--max-new-tokens",
        "40",
        "--out",
        str(out),
        "--threads",
        "1",
    ]
    assert main(argv + (["--optuna"] if optuna else [])) == 0
    asked = list(fake.confirm_calls)
    result = json.loads((out / "heldout.json").read_text())
    md = (out / "heldout.md").read_text()
    expected = ["baseline", "base", "lora"] + (["optuna"] if optuna else [])
    assert list(result["arms"]) == expected and result["tasks"] == [TASK] and result["settings"]["seeds"] == [1, 2]
    for name in expected:
        assert f"| {name} |" in md and f"| `{TASK}` | {name} |" in md
    assert result["arms"]["baseline"]["per_seed"]["1"][TASK]["greedy"] == pytest.approx(1 / 3)  # the empty patch: seed 1
    for name in ("base", "lora") + (("optuna",) if optuna else ()):
        arm = result["arms"][name]
        assert arm["seconds"] > 0
        for seed in ("1", "2"):
            c = arm["per_seed"][seed][TASK]
            for k in ("greedy", "best_2", "best_4", "valid_share"):
                assert c[k] is None or 0 <= c[k] <= 1, (name, seed, k, c)
            if c["best_2"] is not None:
                assert c["best_4"] is not None  # a larger N keeps a scored pick (its confirmed score may be lower)
        s = arm["summary"]["best_4"]
        assert s["mean"] is None or (0 <= s["mean"] <= 1 and s["sd"] >= 0)
    picked: set[str] = set()
    for name in ("base", "lora"):
        raw = result["arms"][name]["raw"][TASK]
        assert all(len(raw["seeds"][s]["results"]) == 4 for s in ("1", "2"))
        assert result["arms"][name]["guided"] == (importlib.util.find_spec("xgrammar") is not None)
        for s in ("1", "2"):  # best of N is the confirmed score of the best single score among the first N
            results, picks = raw["seeds"][s]["results"], raw["seeds"][s]["picks"]
            for n in (2, 4):
                c = result["arms"][name]["per_seed"][s][TASK][f"best_{n}"]
                if c is None:
                    assert f"best_{n}" not in picks
                    continue
                p = picks[f"best_{n}"]
                singles = [r["normalized"] for r in results[:n] if r["normalized"] is not None]
                assert p["single"] == max(singles) and results[p["index"]]["normalized"] == p["single"]
                assert c == p["confirmed"] == fake.confirm(TASK, {"completion": results[p["index"]]["completion"]})[1]["confirmed"]["normalized"]
                picked.add(results[p["index"]]["completion"])
    if optuna:
        picked |= {json.dumps(t["patch"]) for s in ("1", "2") for t in result["arms"]["optuna"]["raw"][TASK]["seeds"][s] if t["picked_for"]}
    # the greedy jobs are confirmed too: the models' valid ones and the baseline's empty patch
    for name in ("base", "lora"):
        greedy = result["arms"][name]["raw"][TASK]["greedy"]
        if greedy["normalized"] is not None:
            picked.add(greedy["completion"])
            assert result["arms"][name]["per_seed"]["1"][TASK]["greedy_confirmed"] == greedy["confirmed"] is not None
    picked.add("{}")
    assert sorted(asked) == sorted((TASK, t) for t in picked) and result["settings"]["confirmations"] == len(asked)  # each pick confirmed once
    assert result["arms"]["base"]["adapter"] is None and result["arms"]["lora"]["adapter"] == adapter_dir
    # every post was a patch-form completion for the task; each arm: 1 greedy + one group of 4 per seed
    groups = [len(c["completions"]) for c in fake.reward_calls]
    assert groups[:1] == [1] and groups.count(4) >= 2 * 2
    if optuna:
        trials = result["arms"]["optuna"]["raw"][TASK]["seeds"]["1"]
        assert len(trials) == 4 and all(schema_errors(t["patch"], PATCH_SCHEMA) == [] for t in trials)
        assert result["arms"]["optuna"]["per_seed"]["1"][TASK]["best_4"] >= trials[0]["normalized"]
    else:
        pytest.skip("SKIPPED LOUDLY (Optuna part): optuna is not installed")


def test_best_of_n_is_the_confirmed_score_of_the_best_single_pick_not_the_largest_single(fake: FakeRrl) -> None:
    from rrl_client.heldout.harness import Confirmed, best_of, post

    # seeds of one spec: single scores 1/(1+|seed-3|) = 0.25, 1.0, 0.333, 0.5; the lucky seed 3 is picked
    texts = [json.dumps({"seed": s}) for s in (0, 3, 1, 2)]
    outcomes = post(RrlClient(fake.url), TASK, texts)
    confirmed = Confirmed(RrlClient(fake.url))
    score, index = best_of(outcomes, texts, 4, lambda t: confirmed(TASK, t))
    expected = sum(1 / (1 + abs(s - 3)) for s in (5, 6, 7, 8, 9)) / 5  # the stand-in's confirmation seeds
    assert index == 1 and score == pytest.approx(expected) and score < 0.3  # not the single 1.0
    assert best_of(outcomes, texts, 4, lambda t: confirmed(TASK, t)) == (score, 1) and confirmed.asked == 1  # asked once
    assert best_of(outcomes[:1], texts, 1, lambda t: confirmed(TASK, t))[1] == 0
    invalid = post(RrlClient(fake.url), TASK, ["no json"])
    assert best_of(invalid, ["no json"], 1, lambda t: confirmed(TASK, t)) == (None, None)


def test_best_of_n_on_a_real_serve_is_the_picks_score_on_the_harness_seeds(rrl_serve: str) -> None:
    from real_serve import TINY_PATCH, TINY_TASK
    from rrl_client.heldout.harness import Confirmed, best_of, post

    client = RrlClient(rrl_serve)
    texts = [json.dumps({**json.loads(TINY_PATCH), "seed": s}) for s in (11, 12, 13)]  # one spec, three seeds
    outcomes = post(client, TINY_TASK, texts)
    confirmed = Confirmed(client)
    score, index = best_of(outcomes, texts, 3, lambda t: confirmed(TINY_TASK, t))
    singles = [o.normalized for o in outcomes]
    assert index is not None and singles[index] == max(s for s in singles if s is not None)
    answer = client.confirm(TINY_TASK, texts[0])  # another seed of the same spec: its seed is ignored, the same seeds trained
    assert answer["status"] in ("succeeded", "failed") and answer["confirmed"] is not None
    assert answer["confirmed"]["seeds"] == 5 and score == answer["confirmed"]["normalized"]
    assert confirmed.asked == 1


def test_transfer_rows_join_the_tables(fake: FakeRrl, tmp_path: Path) -> None:
    transfer = tmp_path / "transfer"
    transfer.mkdir()
    row = {
        "task": TASK,
        "zeroShot": 0.7,
        "controllerBest4": 0.75,
        "controllerBest16": 0.8,
        "controllerAdaptBest16": 0.8,
        "randomBest4": 0.6,
        "randomBest16": 0.9,
        "searchBest4": 0.6,
        "searchBest16": 0.85,
        "baseline": 0.1,
    }
    other = {**row, "task": "elsewhere"}
    per_seed = [{"seed": 1, "rows": [row, other]}, {"seed": 2, "rows": [{**row, "zeroShot": 0.5}]}]
    (transfer / "transfer.json").write_text(json.dumps({"rows": [row, other], "perSeed": per_seed}))
    out = tmp_path / "out"
    assert main(["--url", fake.url, "--tasks", f"{TASK},cartpole-balance", "--from-transfer", str(transfer), "--out", str(out)]) == 0
    result = json.loads((out / "heldout.json").read_text())
    ctrl = result["arms"]["transfer: controller"]["summary"]
    assert ctrl["greedy"]["mean"] == pytest.approx(0.6) and ctrl["greedy"]["sd"] == pytest.approx(0.1414, abs=1e-3)
    assert ctrl["best_16"]["tasks_scored"] == 1
    assert result["arms"]["transfer: random search"]["summary"]["best_4"]["mean"] == pytest.approx(0.6)
    assert result["arms"]["transfer: random search"]["summary"]["greedy"]["mean"] is None
    md = (out / "heldout.md").read_text()
    assert "| transfer: controller | 0.600 ± 0.141 (1/2 tasks) |" in md
    assert "no row for: cartpole-balance" in md


def test_transfer_rows_under_several_secrets_count_every_repetition_and_carry_the_optuna_rows(fake: FakeRrl, tmp_path: Path) -> None:
    transfer = tmp_path / "transfer"
    transfer.mkdir()
    row = {"task": TASK, "zeroShot": 0.7, "randomBest4": 0.6, "optunaTpeBest4": 0.5, "optunaTpeBest16": 0.65, "optunaCmaesSeededBest16": 0.8, "baseline": 0.1}
    # The same seed under two secrets: two repetitions, not one overwritten by the other.
    per_seed = [{"seed": 1, "secret": 0, "rows": [row]}, {"seed": 1, "secret": 1, "rows": [{**row, "zeroShot": 0.5, "optunaTpeBest16": 0.75}]}]
    (transfer / "transfer.json").write_text(json.dumps({"rows": [row], "perSeed": per_seed}))
    out = tmp_path / "out"
    assert main(["--url", fake.url, "--tasks", TASK, "--from-transfer", str(transfer), "--out", str(out)]) == 0
    arms = json.loads((out / "heldout.json").read_text())["arms"]
    assert arms["transfer: controller"]["summary"]["greedy"]["mean"] == pytest.approx(0.6)
    assert arms["transfer: controller"]["summary"]["greedy"]["n"] == 2
    assert arms["transfer: optuna TPE"]["summary"]["best_16"]["mean"] == pytest.approx(0.7)
    assert arms["transfer: optuna CMA-ES seeded"]["summary"]["best_16"]["mean"] == pytest.approx(0.8)
    assert arms["transfer: optuna CMA-ES"]["summary"]["best_16"]["mean"] is None


def test_confirmed_transfer_picks_replace_their_single_scores_and_unconfirmed_ones_are_missing(fake: FakeRrl, tmp_path: Path) -> None:
    transfer = tmp_path / "transfer"
    transfer.mkdir()
    row = {"task": TASK, "zeroShot": 0.7, "randomBest4": 0.6, "randomBest16": 0.9, "optunaTpeSeededBest16": 0.95, "baseline": 0.1}
    sure = {"task": TASK, "zeroShot": 0.65, "randomBest4": 0.5, "randomBest16": 0.7, "baseline": 0.12}  # TPE's pick not confirmed
    per_seed = [{"seed": 1, "rows": [row], "confirmed": {"rows": [sure]}}]
    (transfer / "transfer.json").write_text(json.dumps({"rows": [row], "perSeed": per_seed}))
    out = tmp_path / "out"
    assert main(["--url", fake.url, "--tasks", TASK, "--from-transfer", str(transfer), "--out", str(out)]) == 0
    arms = json.loads((out / "heldout.json").read_text())["arms"]
    ctrl = arms["transfer: controller"]["summary"]
    assert ctrl["greedy"]["mean"] == pytest.approx(0.7) and ctrl["greedy_confirmed"]["mean"] == pytest.approx(0.65)
    assert arms["transfer: random search"]["summary"]["best_16"]["mean"] == pytest.approx(0.7)
    assert arms["transfer: random search"]["summary"]["best_4"]["mean"] == pytest.approx(0.5)
    assert arms["transfer: optuna TPE seeded"]["summary"]["best_16"]["mean"] is None
    assert arms["transfer: baseline"]["summary"]["greedy_confirmed"]["mean"] == pytest.approx(0.12)


def test_from_transfer_alone_picks_its_tasks_the_server_lists(fake: FakeRrl, tmp_path: Path) -> None:
    transfer = tmp_path / "transfer"
    transfer.mkdir()
    rows = [{"task": TASK, "zeroShot": 0.7, "baseline": 0.1}, {"task": "rings-fam-1-0", "zeroShot": 0.2}]
    (transfer / "transfer.json").write_text(json.dumps({"rows": rows, "perSeed": [{"seed": 1, "rows": rows}]}))
    assert main(["--url", fake.url, "--from-transfer", str(transfer), "--out", str(tmp_path / "out")]) == 0
    result = json.loads((tmp_path / "out" / "heldout.json").read_text())
    assert result["tasks"] == [TASK]
    assert result["arms"]["transfer: baseline"]["summary"]["greedy"]["mean"] == pytest.approx(0.1)


def test_transfer_rows_missing_at_first_are_skipped_loudly_then_added_later(fake: FakeRrl, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    transfer = tmp_path / "transfer"
    out = tmp_path / "out"
    assert main(["--url", fake.url, "--tasks", TASK, "--from-transfer", str(transfer), "--out", str(out)]) == 0
    assert "SKIPPED LOUDLY: the transfer rows" in capsys.readouterr().err
    first = json.loads((out / "heldout.json").read_text())
    assert not [a for a in first["arms"].values() if a["kind"] == "transfer"]
    assert any("transfer rows left out" in n for n in first["notes"])
    calls = len(fake.reward_calls)
    transfer.mkdir()
    rows = [{"task": TASK, "zeroShot": 0.7, "randomBest4": 0.6, "baseline": 0.1}]
    (transfer / "transfer.json").write_text(json.dumps({"rows": rows, "perSeed": [{"seed": 1, "rows": rows}]}))
    assert main(["--add-transfer", str(out), "--from-transfer", str(transfer)]) == 0
    assert len(fake.reward_calls) == calls, "adding the rows runs no job"
    after = json.loads((out / "heldout.json").read_text())
    assert after["arms"]["baseline"] == first["arms"]["baseline"]
    assert after["arms"]["transfer: controller"]["summary"]["greedy"]["mean"] == pytest.approx(0.7)
    assert not any("left out" in n for n in after["notes"])
    assert "| transfer: controller |" in (out / "heldout.md").read_text()
    assert main(["--add-transfer", str(tmp_path / "nowhere"), "--from-transfer", str(transfer)]) == 2


def test_a_transfer_kept_as_its_repetitions_files_reads_as_its_transfer_json(tmp_path: Path) -> None:
    row = {"task": TASK, "zeroShot": 0.7, "randomBest16": 0.9, "optunaTpeSeededBest16": 0.8, "baseline": 0.1}
    reps = [
        {"seed": 1, "secret": 0, "rows": [row], "confirmed": {"rows": [{**row, "zeroShot": 0.6}]}},
        {"seed": 1, "secret": 1, "rows": [{**row, "randomBest16": 0.5}], "confirmed": None},
    ]
    whole, kept = tmp_path / "whole", tmp_path / "kept"
    whole.mkdir()
    (whole / "transfer.json").write_text(json.dumps({"rows": [row], "perSeed": reps}))
    for k, rep in enumerate(reps, 1):
        (kept / f"secret-{k}").mkdir(parents=True)
        (kept / f"secret-{k}" / "repetition.json").write_text(json.dumps(rep))
    keys = metric_keys([4, 16])
    assert transfer_ready(str(kept)) and not transfer_ready(str(tmp_path / "empty"))
    assert transfer_tasks(str(kept)) == transfer_tasks(str(whole)) == [TASK]
    assert read_transfer(str(kept), [TASK], keys) == read_transfer(str(whole), [TASK], keys)
    arms, absent = read_transfer(str(kept), [TASK, "elsewhere"], keys)
    assert absent == ["elsewhere"]
    assert arms["transfer: controller"][1][TASK]["greedy_confirmed"] == pytest.approx(0.6)
    assert arms["transfer: random search"][REPETITION_STRIDE + 1][TASK]["best_16"] == pytest.approx(0.5)


def test_greedy_only_evaluations_keep_the_transfer_rows_best_of_n(fake: FakeRrl, tmp_path: Path) -> None:
    transfer = tmp_path / "transfer"
    transfer.mkdir()
    rows = [{"task": TASK, "zeroShot": 0.7, "randomBest4": 0.6, "randomBest16": 0.9, "optunaTpeSeededBest16": 0.8, "baseline": 0.1}]
    (transfer / "transfer.json").write_text(json.dumps({"rows": rows, "perSeed": [{"seed": 1, "rows": rows}]}))
    out = tmp_path / "out"
    assert main(["--url", fake.url, "--tasks", TASK, "--samples", "0", "--from-transfer", str(transfer), "--out", str(out)]) == 0
    arms = json.loads((out / "heldout.json").read_text())["arms"]
    assert arms["transfer: optuna TPE seeded"]["summary"]["best_16"]["mean"] == pytest.approx(0.8)
    assert arms["transfer: random search"]["per_seed"]["1"][TASK]["best_4"] == pytest.approx(0.6)
    assert "best_16" not in arms["baseline"]["summary"]
    assert main(["--add-transfer", str(out), "--from-transfer", str(transfer)]) == 0
    again = json.loads((out / "heldout.json").read_text())["arms"]
    assert again["transfer: random search"]["summary"]["best_16"]["mean"] == pytest.approx(0.9)
