"""Aggregating the held-out evaluation (mean ± sd over seeds of the means over tasks) and writing
``heldout.json`` and ``heldout.md``; reading the rows of `rrl experiment transfer`'s ``transfer.json``."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Metrics = dict[str, float | None]
"""One task's numbers for one arm and seed: ``greedy`` (its single score), ``greedy_confirmed`` (the same job on the
harness's confirmation seeds), ``best_N`` per N, ``rounds`` (best of the rounds of an episode), ``valid_share``."""


def metric_keys(samples: Sequence[int], rounds: int = 0) -> list[str]:
    """The columns: greedy, best of each N, best of the ``rounds`` jobs of an episode with feedback (when above 0), valid share."""
    return ["greedy", "greedy_confirmed", *[f"best_{n}" for n in samples], *(["rounds"] if rounds else []), "valid_share"]


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def _sd(xs: Sequence[float]) -> float:
    if len(xs) < 2:
        return 0.0
    m = _mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def spread(values: Sequence[float | None]) -> dict[str, Any]:
    """``{"mean", "sd", "n"}`` of the values that are not None (mean and sd None when none is)."""
    xs = [v for v in values if v is not None]
    return {"mean": _mean(xs) if xs else None, "sd": _sd(xs) if xs else None, "n": len(xs)}


def summarise(per_seed: dict[int, dict[str, Metrics]], tasks: Sequence[str], keys: Sequence[str]) -> dict[str, Any]:
    """Per seed the mean over tasks of each metric (over the tasks where it is defined, counted in
    ``tasks_scored``); then mean ± sd of those over seeds, and per task mean ± sd over seeds."""
    seed_means: dict[int, dict[str, Any]] = {}
    for seed, cells in per_seed.items():
        row: dict[str, Any] = {}
        for k in keys:
            xs = [cells[t][k] for t in tasks if t in cells and cells[t].get(k) is not None]
            row[k] = _mean([x for x in xs if x is not None]) if xs else None
            row[f"{k}_tasks_scored"] = len(xs)
        seed_means[seed] = row
    summary = {k: spread([m[k] for m in seed_means.values()]) for k in keys}
    for k in keys:
        summary[k]["tasks_scored"] = min((m[f"{k}_tasks_scored"] for m in seed_means.values()), default=0)
    per_task = {t: {k: spread([cells.get(t, {}).get(k) for cells in per_seed.values()]) for k in keys} for t in tasks}
    return {"seed_means": {str(s): m for s, m in seed_means.items()}, "summary": summary, "per_task": per_task}


# -- transfer.json -------------------------------------------------------------------------------

TRANSFER_ROWS: dict[str, dict[str, str]] = {
    "transfer: controller": {"greedy": "zeroShot", "best_4": "controllerBest4", "best_16": "controllerBest16"},
    "transfer: random search": {"best_4": "randomBest4", "best_16": "randomBest16"},
    "transfer: model-based search": {"best_4": "searchBest4", "best_16": "searchBest16"},
    "transfer: optuna TPE": {"best_4": "optunaTpeBest4", "best_16": "optunaTpeBest16"},
    "transfer: optuna CMA-ES": {"best_4": "optunaCmaesBest4", "best_16": "optunaCmaesBest16"},
    "transfer: optuna TPE seeded": {"best_4": "optunaTpeSeededBest4", "best_16": "optunaTpeSeededBest16"},
    "transfer: optuna CMA-ES seeded": {"best_4": "optunaCmaesSeededBest4", "best_16": "optunaCmaesSeededBest16"},
    "transfer: baseline": {"greedy": "baseline"},
}
"""The rows `rrl experiment transfer` measured (its zero-shot job is the controller's mode, its greedy answer)."""

TRANSFER_FILE = "transfer.json"
RESULT_ROWS = "rows"
"""``transfer.json``'s held-out rows (means over repetitions), and each repetition's own."""
RESULT_REPETITIONS = "perSeed"
"""``transfer.json``'s repetitions (one seed under one evaluation secret)."""
REPETITION_SEED = "seed"
REPETITION_SECRET = "secret"
REPETITION_CONFIRMED = "confirmed"
"""A repetition's picks trained again on the confirmation seeds: its ``rows``, with the fields of ``rows``."""
ROW_TASK = "task"


def transfer_fields_read() -> dict[str, set[str]]:
    """The fields of ``transfer.json`` this module reads, per level (``result``, ``repetition``, ``row``): the
    TypeScript writes them, and ``tests/test_contracts.py`` checks each is among the fields it exports."""
    return {
        "result": {RESULT_ROWS, RESULT_REPETITIONS},
        "repetition": {REPETITION_SEED, REPETITION_SECRET, RESULT_ROWS, REPETITION_CONFIRMED},
        "row": {ROW_TASK, *(field for fields in TRANSFER_ROWS.values() for field in fields.values())},
    }


REPETITION_STRIDE = 1_000_000
"""Key of a transfer repetition: its seed + this × its secret's index (seeds stay below it)."""


REPETITION_FILE = "repetition.json"
"""A finished repetition's own file, ``DIR/<repetition>/repetition.json`` (what a transfer experiment's committed summary
keeps, e.g. ``bench/transfer-corpus/``): its fields are a ``perSeed`` entry's."""


def transfer_repetition_files(directory: str) -> list[Path]:
    """The ``repetition.json`` files one level below ``directory``, by folder name."""
    return sorted(Path(directory).glob(f"*/{REPETITION_FILE}"))


def transfer_ready(directory: str) -> bool:
    """Whether ``directory`` holds a transfer experiment's rows: its ``transfer.json``, or its repetitions' files."""
    return (Path(directory) / TRANSFER_FILE).is_file() or bool(transfer_repetition_files(directory))


def transfer_data(directory: str) -> dict[str, Any]:
    """``DIR/transfer.json``, or, where only the repetitions were kept, their ``repetition.json`` files as its
    ``perSeed`` (its ``rows`` then the first repetition's, which name the same tasks)."""
    path = Path(directory) / TRANSFER_FILE
    if path.is_file():
        return dict(json.loads(path.read_text()))
    reps = [json.loads(f.read_text()) for f in transfer_repetition_files(directory)]
    return {RESULT_ROWS: reps[0].get(RESULT_ROWS, []) if reps else [], RESULT_REPETITIONS: reps}


def transfer_tasks(directory: str) -> list[str]:
    """The held-out task ids of the transfer experiment in ``directory`` (its ``rows``, in order)."""
    data = transfer_data(directory)
    return [str(r[ROW_TASK]) for r in data.get(RESULT_ROWS, []) if isinstance(r, dict) and ROW_TASK in r]


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) else None


def transfer_keys(keys: Sequence[str]) -> list[str]:
    """The columns a transfer row fills: ``keys`` and the transfer's own best of 4 and 16, which it measured whatever
    ``--samples`` the models were given (``--samples 0`` still sets the models' greedy jobs beside them)."""
    extra = [k for k in ("best_4", "best_16") if k not in keys]
    return [*keys[: len(keys) - 1], *extra, keys[-1]] if keys and keys[-1] == "valid_share" else [*keys, *extra]


def read_transfer(directory: str, tasks: Sequence[str], keys: Sequence[str]) -> tuple[dict[str, dict[int, dict[str, Metrics]]], list[str]]:
    """The transfer experiment's rows for ``tasks`` from ``DIR/transfer.json`` (or its repetitions' files), per arm and seed (its own
    seeds), and the tasks it has no row for. Only best of 4 and 16 exist there (and failed jobs scored 0).
    Where a repetition has its picks confirmed (its ``confirmed`` rows: each pick trained again on the
    harness's confirmation seeds), its best of N are those confirmed scores, as a model arm's are, and the
    greedy job's (the zero-shot job's, the baseline's) is its ``greedy_confirmed``; a pick it did not
    confirm is missing there rather than its single score. Under several evaluation secrets
    (``--secrets``) each repetition is its own key: the seed plus ``REPETITION_STRIDE`` times the secret's
    index."""
    data = transfer_data(directory)
    per_seed = data.get(RESULT_REPETITIONS) or [{REPETITION_SEED: 0, RESULT_ROWS: data.get(RESULT_ROWS, [])}]
    arms: dict[str, dict[int, dict[str, Metrics]]] = {name: {} for name in TRANSFER_ROWS}
    seen: set[str] = set()
    for entry in per_seed:
        seed = int(entry.get(REPETITION_SEED, 0)) + REPETITION_STRIDE * int(entry.get(REPETITION_SECRET, 0))
        confirmed = entry.get(REPETITION_CONFIRMED)
        sure = {r.get(ROW_TASK): r for r in confirmed.get(RESULT_ROWS, [])} if isinstance(confirmed, dict) else {}
        for row in entry.get(RESULT_ROWS, []):
            task = row.get(ROW_TASK)
            if task not in tasks:
                continue
            seen.add(task)
            for name, fields in TRANSFER_ROWS.items():
                cell: Metrics = {k: None for k in keys}
                for k, src in fields.items():
                    if k in cell:
                        cell[k] = _number(row.get(src))
                    if task in sure:
                        picked = "greedy_confirmed" if k == "greedy" else k
                        if picked in cell:
                            cell[picked] = _number(sure[task].get(src))
                arms[name].setdefault(seed, {})[task] = cell
    return arms, [t for t in tasks if t not in seen]


# -- writing -------------------------------------------------------------------------------------


def _cell(s: dict[str, Any] | None, n_tasks: int, seeds: bool = True) -> str:
    if not s or s.get("mean") is None:
        return "–"
    text = f"{s['mean']:.3f}"
    if seeds and s.get("n", 0) > 1:
        text += f" ± {s['sd']:.3f}"
    scored = s.get("tasks_scored")
    if isinstance(scored, int) and scored < n_tasks:
        text += f" ({scored}/{n_tasks} tasks)"
    return text


def markdown(result: dict[str, Any]) -> str:
    """``heldout.md``: the arms' table and the per-task table."""
    samples: list[int] = result["settings"]["samples"]
    rounds: int = result["settings"].get("rounds", 0)
    keys = metric_keys(samples, rounds)
    tasks: list[str] = result["tasks"]
    heads = ["greedy", "greedy confirmed", *[f"best of {n}" for n in samples], *([f"best of {rounds} rounds"] if rounds else []), "valid share"]
    lines = [
        "# Held-out evaluation",
        "",
        (
            f"Tasks ({len(tasks)}): {', '.join(f'`{t}`' for t in tasks)}. Seeds: {', '.join(map(str, result['settings']['seeds']))}; "
            f"temperature {result['settings']['temperature']}; guided: {result['settings']['guided']}. "
            "Hidden normalised score (0: the random/trivial reference, 1: the solved one), mean over tasks, then mean ± sd over seeds; "
            "an invalid or failed job has no score (missing from best-of; see valid share). "
            "Best of N: the completion with the best single score among the first N, reported by its confirmed score "
            "(the mean over the harness's confirmation seeds, every seed counted), not the largest single score."
            + (
                f" Best of {rounds} rounds: one greedy episode of {rounds} jobs per task, each a patch over the episode's last valid job "
                "after the harness's feedback (status, reason, cost, the job's own validation figure; never a score), "
                "its best single score's job reported by its confirmed score."
                if rounds
                else ""
            )
        ),
        "",
        "| arm | " + " | ".join(heads) + " | seconds |",
        "| --- | " + " | ".join("---:" for _ in heads) + " | ---: |",
    ]
    for name, arm in result["arms"].items():
        cells = [_cell(arm["summary"][k], len(tasks)) for k in keys]
        secs = arm.get("seconds")
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {'–' if secs is None else f'{secs:.1f}'} |")
    lines += [
        "",
        "Per task (mean ± sd over seeds):",
        "",
        "| task | arm | " + " | ".join(heads) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in heads) + " |",
    ]
    for t in tasks:
        for name, arm in result["arms"].items():
            pt = arm["per_task"].get(t)
            if pt is None:
                continue
            lines.append(f"| `{t}` | {name} | " + " | ".join(_cell(pt[k], 1) for k in keys) + " |")
    notes = result.get("notes") or []
    if notes:
        lines += ["", *[f"- {n}" for n in notes]]
    return "\n".join(lines) + "\n"


def write(out: str, result: dict[str, Any]) -> tuple[Path, Path]:
    """Writes ``OUT/heldout.json`` and ``OUT/heldout.md``; returns their paths."""
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    js, md = d / "heldout.json", d / "heldout.md"
    js.write_text(json.dumps(result, indent=1))
    md.write_text(markdown(result))
    return js, md
