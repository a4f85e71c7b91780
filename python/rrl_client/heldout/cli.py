"""``python -m rrl_client.heldout``: the LLM on tasks it never trained on, against a running `rrl serve`.

    python -m rrl_client.heldout --url http://127.0.0.1:8377 \\
        --arm base=models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf \\
        --arm grpo=models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf:runs/grpo/adapter \\
        --optuna --seeds 2 --out runs/heldout

Per task (default: every task of split ``held-out`` the server lists) and model arm: the greedy job's
hidden normalised score, and the best of N sampled completions for each N of ``--samples`` (the
completion with the best single score among the first N, reported by its confirmed score: trained
again on the harness's confirmation seeds, rrl_client.heldout.harness); beside
them the baseline (the empty patch ``{}``), with ``--optuna`` a seeded Optuna TPE study per task, and
with ``--from-transfer DIR`` the rows of `rrl experiment transfer` for the same tasks. Mean ± sd over
the seeds; ``OUT/heldout.json`` holds every number, ``OUT/heldout.md`` the tables.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, cast

from ..client import RrlClient
from ..contracts import DEFAULT_URL
from .harness import Confirmed, Outcome, best_of, post, valid_share
from .models import ArmSpec, ModelArm, guided_unavailable, load_arm, parse_arm, warn
from .report import Metrics, metric_keys, read_transfer, summarise, transfer_keys, transfer_ready, transfer_tasks, write


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m rrl_client.heldout", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", default=os.environ.get("RRL_URL", DEFAULT_URL), help="rrl serve's address (env RRL_URL)")
    p.add_argument("--token-env", default="RRL_TOKEN", help="environment variable holding the bearer token, if any")
    p.add_argument(
        "--tasks",
        default="",
        help="comma-separated task ids (default: the held-out tasks of --from-transfer that the server lists, else every task of split 'held-out' in GET /v1/tasks)",
    )
    p.add_argument(
        "--arm",
        action="append",
        default=[],
        metavar="NAME=MODEL[:ADAPTER]",
        help="a model arm (repeatable): a model directory or .gguf file, and optionally a PEFT adapter directory",
    )
    p.add_argument("--samples", default="4,16", help="the N of the best-of-N columns, comma-separated (sampled once at the largest); 0: none, greedy only")
    p.add_argument("--temperature", type=float, default=0.8, help="sampling temperature of the best-of-N completions")
    p.add_argument(
        "--rounds",
        type=int,
        default=0,
        help="also one greedy episode of this many jobs per task (1 to 8), each a patch over its last valid job after the harness's feedback; 0: none",
    )
    p.add_argument(
        "--doc-chars",
        type=int,
        default=None,
        help="the patch prompt's documentation budget in characters (default: the server's; 0 drops the documentation, the ablation)",
    )
    p.add_argument("--seeds", type=int, default=2, help="repetitions (at least 2): seeds --seed, --seed+1, ...; they change sampling and Optuna's sampler seed")
    p.add_argument("--seed", type=int, default=1, help="the first seed")
    p.add_argument("--max-new-tokens", type=int, default=160, help="generation cap per completion")
    p.add_argument(
        "--guided",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="constrain generation to each task's patch schema (default: on when the engine is installed)",
    )
    p.add_argument("--guided-engine", default="xgrammar", choices=["xgrammar", "llguidance"])
    p.add_argument("--optuna", action="store_true", help="also an Optuna TPE study per task (no model), its best of N over N trials")
    p.add_argument("--optuna-batch", type=int, default=4, help="trials asked, posted and told together")
    p.add_argument(
        "--space", default=None, metavar="FILE", help="the Optuna arm's design spaces from `rrl space --out FILE` (default: GET /v1/tasks/{id}/space)"
    )
    p.add_argument(
        "--from-transfer",
        default=None,
        metavar="DIR",
        help="add the rows of `rrl experiment transfer`'s DIR (its transfer.json, or only its repetitions' DIR/*/repetition.json) for the same tasks",
    )
    p.add_argument(
        "--add-transfer",
        default=None,
        metavar="OUT",
        help="with --from-transfer: add its rows to the evaluation already in OUT (heldout.json), running nothing",
    )
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    p.add_argument("--out", default="runs/heldout", help="where heldout.json and heldout.md go")
    args = p.parse_args(argv)
    try:
        args.samples = sorted({int(s) for s in args.samples.split(",") if s.strip()})
    except ValueError:
        p.error(f"--samples takes comma-separated integers, got {args.samples!r}")
    if args.samples == [0]:
        args.samples = []
    elif not args.samples or args.samples[0] < 1:
        p.error("--samples: every N must be at least 1 (or 0 alone: greedy only)")
    if args.optuna and not args.samples:
        p.error("--optuna needs --samples N (its best of N over N trials)")
    if args.seeds < 2:
        p.error("--seeds must be at least 2 (the tables give mean ± sd over seeds)")
    if not 0 <= args.rounds <= 8:
        p.error("--rounds must be 0 to 8")
    if args.optuna_batch < 1 or args.max_new_tokens < 1:
        p.error("--optuna-batch and --max-new-tokens must be at least 1")
    try:
        args.arms = [parse_arm(a) for a in args.arm]
    except ValueError as err:
        p.error(str(err))
    if args.add_transfer and not args.from_transfer:
        p.error("--add-transfer OUT needs --from-transfer DIR (the transfer experiment whose rows to add)")
    names = [a.name for a in args.arms]
    if len(set(names)) != len(names):
        p.error(f"--arm: names must differ, got {names}")
    return args


def held_out_tasks(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The ids of split ``held-out``, in the server's order."""
    return [str(r["id"]) for r in rows if r.get("split") == "held-out"]


def cell(
    greedy: Outcome | None,
    sampled: Sequence[Outcome],
    texts: Sequence[str],
    samples: Sequence[int],
    confirmed: Callable[[str], float | None],
    greedy_confirmed: float | None = None,
) -> tuple[Metrics, dict[str, Any]]:
    """One task's metrics for one arm and seed (best of N: the confirmed score of the best single score's
    completion among the first N), and the picks behind them (index, single and confirmed score)."""
    m: Metrics = {"greedy": greedy.normalized if greedy is not None else None, "greedy_confirmed": greedy_confirmed}
    picks: dict[str, Any] = {}
    for n in samples:
        score, i = best_of(sampled, texts, n, confirmed) if len(sampled) >= n else (None, None)
        m[f"best_{n}"] = score
        if i is not None:
            picks[f"best_{n}"] = {"index": i, "single": sampled[i].normalized, "confirmed": score}
    # greedy only (--samples 0): the greedy job's validity, as the baseline's row has it
    m["valid_share"] = valid_share(sampled) if sampled or greedy is None else float(greedy.valid)
    return m, picks


def rounds_cell(client: RrlClient, arm: ModelArm, task: str, inp: dict[str, Any], rounds: int, confirmed: Confirmed) -> tuple[float | None, dict[str, Any]]:
    """One greedy episode of ``rounds`` jobs on ``task``: the confirmed score of its job with the best single score
    (its spec sent whole: its patch applied to the episode's job before it), and what the episode did."""
    from ..rounds import run_episodes

    schema = inp["schema"] if arm.guided is not None else None
    [episode] = run_episodes(client, arm.tokenizer, arm.greedy_ids(schema), [inp["messages"]], [task], rounds)
    jobs = [client.job(str(fb["job"])) if fb else None for fb in episode.feedback]
    singles = [j["score"]["normalized"] if j and j.get("score") else None for j in jobs]
    scored = [i for i, v in enumerate(singles) if v is not None]
    best = max(scored, key=lambda i: cast(float, singles[i])) if scored else None
    picked = jobs[best] if best is not None else None
    spec = picked.get("spec") if picked else None
    score = confirmed(task, json.dumps(spec)) if spec else None
    detail = {
        "answers": episode.answers,
        "statuses": [fb["status"] if fb else None for fb in episode.feedback],
        "singles": singles,
        "pick": best,
        "confirmed": score,
        "reward": episode.reward,
    }
    return score, detail


def _unchanged(outcomes: Sequence[Outcome]) -> float | None:
    return sum(bool(o.unchanged) for o in outcomes) / len(outcomes) if outcomes else None


def run_model_arm(
    client: RrlClient, spec: ArmSpec, args: argparse.Namespace, seeds: list[int], inputs: dict[str, dict[str, Any]], guided: bool, confirmed: Confirmed
) -> dict[str, Any]:
    """One model arm over every task and seed: the greedy completion once per task (it does not depend
    on the seed), ``max(samples)`` sampled completions per task and seed (none with ``--samples 0``)."""
    started = time.time()
    model, tok = load_arm(spec)
    arm = ModelArm(model, tok, guided=guided, engine=args.guided_engine, max_new_tokens=args.max_new_tokens, temperature=args.temperature)
    n = max(args.samples, default=0)
    per_seed: dict[int, dict[str, Metrics]] = {s: {} for s in seeds}
    raw: dict[str, Any] = {}
    for task, inp in inputs.items():
        schema = inp["schema"] if arm.guided is not None else None
        [greedy_text] = arm.generate(inp["messages"], schema, 1, None)
        [greedy] = post(client, task, [greedy_text])
        greedy_confirmed = confirmed(task, greedy_text) if greedy.valid else None
        raw[task] = {"greedy": {"completion": greedy_text, **greedy.as_json(), "confirmed": greedy_confirmed}, "seeds": {}}
        rounds_score = None
        if args.rounds:
            rounds_score, raw[task]["rounds"] = rounds_cell(client, arm, task, inp, args.rounds, confirmed)
        for seed in seeds:
            texts = arm.generate(inp["messages"], schema, n, seed) if n else []
            outs = post(client, task, texts)
            per_seed[seed][task], picks = cell(greedy, outs, texts, args.samples, partial(confirmed, task), greedy_confirmed)
            if args.rounds:
                per_seed[seed][task]["rounds"] = rounds_score  # greedy: the same episode for every seed
            raw[task]["seeds"][str(seed)] = {
                "unchanged_share": _unchanged(outs),
                "picks": picks,
                "results": [{"completion": t, **o.as_json()} for t, o in zip(texts, outs)],
            }
        print(json.dumps({"arm": spec.name, "task": task, **{str(s): per_seed[s][task] for s in seeds}}), flush=True)
    return {
        "kind": "model",
        "model": _relative(spec.model),
        "adapter": _relative(spec.adapter),
        "guided": arm.guided is not None,
        "per_seed_tasks": per_seed,
        "raw": raw,
        "seconds": time.time() - started,
    }


def _relative(path: str | None) -> str | None:
    """A path under the working directory as relative to it, so a written report names no path of this machine."""
    if path is None or not os.path.isabs(path) or os.path.commonpath([os.getcwd(), path]) != os.getcwd():
        return path
    return os.path.relpath(path)


def run_optuna_arm(client: RrlClient, args: argparse.Namespace, seeds: list[int], inputs: dict[str, dict[str, Any]], confirmed: Confirmed) -> dict[str, Any]:
    from .space import from_description, read_descriptions
    from .study import run_study

    files = read_descriptions(args.space) if args.space else {}

    started = time.time()
    n = max(args.samples)
    per_seed: dict[int, dict[str, Metrics]] = {s: {} for s in seeds}
    raw: dict[str, Any] = {}
    for task, inp in inputs.items():
        space = from_description(files[task] if task in files else client.space(task), inp["baseline"])
        raw[task] = {"space": [p.__dict__ for p in space.params], "seeds": {}}
        for seed in seeds:
            res = run_study(client, task, space, n, seed, args.optuna_batch)
            texts = [json.dumps(t.patch) for t in res.trials]
            per_seed[seed][task], picks = cell(None, res.outcomes, texts, args.samples, partial(confirmed, task))
            raw[task]["seeds"][str(seed)] = [{**t.as_json(), "picked_for": [k for k, p in picks.items() if p["index"] == i]} for i, t in enumerate(res.trials)]
        print(json.dumps({"arm": "optuna", "task": task, **{str(s): per_seed[s][task] for s in seeds}}), flush=True)
    return {"kind": "optuna", "trials": n, "batch": args.optuna_batch, "per_seed_tasks": per_seed, "raw": raw, "seconds": time.time() - started}


def add_transfer_rows(arms: dict[str, dict[str, Any]], notes: list[str], directory: str, tasks: Sequence[str], keys: Sequence[str]) -> None:
    """The transfer experiment's rows for ``tasks`` as arms (not yet summarised), with their notes."""
    rows, absent = read_transfer(directory, tasks, transfer_keys(keys))
    if absent:
        notes.append(f"the transfer rows in {directory} have no row for: {', '.join(absent)}")
    notes.append(f"transfer rows: `rrl experiment transfer` in {directory}, over its own seeds and tasks found there (a failed job scores 0 there).")
    for name, per_seed in rows.items():
        if per_seed:
            arms[name] = {"kind": "transfer", "per_seed_tasks": per_seed, "seconds": None}


def summarise_arm(arm: dict[str, Any], tasks: Sequence[str], keys: Sequence[str]) -> None:
    """Replaces an arm's ``per_seed_tasks`` cells by its summary (means over tasks, then mean ± sd over seeds) and ``per_seed``
    (a transfer row over its own columns as well, ``transfer_keys``)."""
    per_seed_tasks = arm.pop("per_seed_tasks")
    keys = transfer_keys(keys) if arm.get("kind") == "transfer" else keys
    arm.update(summarise(per_seed_tasks, tasks, keys))
    arm["per_seed"] = {str(s): cells for s, cells in per_seed_tasks.items()}


def attach_transfer(out: str, directory: str) -> int:
    """``--add-transfer OUT --from-transfer DIR``: the transfer rows added to an evaluation already written in OUT (no job is run)."""
    path = Path(out) / "heldout.json"
    if not path.is_file():
        print(f"--add-transfer: no heldout.json in {out}", file=sys.stderr)
        return 2
    if not transfer_ready(directory):
        print(f"--from-transfer: no transfer.json or */repetition.json in {directory}", file=sys.stderr)
        return 2
    result = json.loads(path.read_text())
    tasks, keys = result["tasks"], metric_keys(result["settings"]["samples"], result["settings"].get("rounds", 0))
    arms: dict[str, dict[str, Any]] = {}
    notes = [n for n in result["notes"] if not n.startswith("transfer")]
    add_transfer_rows(arms, notes, directory, tasks, keys)
    for arm in arms.values():
        summarise_arm(arm, tasks, keys)
    result["arms"] = {**{k: v for k, v in result["arms"].items() if v.get("kind") != "transfer"}, **arms}
    result["notes"] = notes
    result["settings"]["from_transfer"] = directory
    js, md = write(out, result)
    print(md.read_text())
    print(f"wrote {js} and {md}", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.add_transfer:
        return attach_transfer(args.add_transfer, args.from_transfer)
    client = RrlClient(args.url, os.environ.get(args.token_env) or None)
    tasks = [t for t in args.tasks.split(",") if t]
    if args.from_transfer and not transfer_ready(args.from_transfer):
        warn(
            f"no transfer.json in {args.from_transfer} yet (is `rrl experiment transfer` still running?): its rows are left out unless it is there "
            f"when the models are done; add them later with --add-transfer {args.out}"
        )
    if not tasks and args.from_transfer and transfer_ready(args.from_transfer):
        served = {str(r["id"]) for r in client.tasks()}
        theirs = transfer_tasks(args.from_transfer)
        tasks = [t for t in theirs if t in served]
        if len(tasks) < len(theirs):
            warn(f"not served here (start rrl serve with the same --family draws): {', '.join(t for t in theirs if t not in served)}")
    if not tasks:
        tasks = held_out_tasks(client.tasks())
    if not tasks:
        print("no tasks: pass --tasks or start rrl serve with held-out tasks (e.g. --family acrobot:2)", file=sys.stderr)
        return 2
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    seeds = [args.seed + k for k in range(args.seeds)]
    keys = metric_keys(args.samples, args.rounds)
    notes: list[str] = []
    guided = args.guided is not False
    if guided and args.arms:
        reason = guided_unavailable(args.guided_engine)
        if reason:
            if args.guided:
                print(f"--guided: {reason}", file=sys.stderr)
                return 2
            warn(f"UNGUIDED: {reason}")
            guided = False
            notes.append(f"generation unguided: {reason}")
    inputs = {
        t: {
            "messages": client.prompt(t, "patch", args.doc_chars),
            "schema": client.schema(t, "patch"),
            "baseline": client.prompt_response(t, "compact")["example"] or {},
        }
        for t in tasks
    }

    arms: dict[str, dict[str, Any]] = {}
    started = time.time()
    confirmed = Confirmed(client)
    base = {t: post(client, t, ["{}"])[0] for t in tasks}
    base_confirmed = {t: confirmed(t, "{}") for t in tasks}
    per_seed_base: dict[int, dict[str, Metrics]] = {
        s: {
            t: {**{k: None for k in keys}, "greedy": o.normalized, "greedy_confirmed": base_confirmed[t], "valid_share": 1.0 if o.valid else 0.0}
            for t, o in base.items()
        }
        for s in seeds
    }
    arms["baseline"] = {"kind": "baseline", "per_seed_tasks": per_seed_base, "raw": {t: o.as_json() for t, o in base.items()}, "seconds": time.time() - started}
    for spec in args.arms:
        arms[spec.name] = run_model_arm(client, spec, args, seeds, inputs, guided, confirmed)
    if args.optuna:
        from .study import optuna_missing

        missing = optuna_missing()
        if missing:
            warn(f"SKIPPED LOUDLY: the Optuna arm: {missing}")
            notes.append(f"Optuna arm skipped: {missing}")
        else:
            arms["optuna"] = run_optuna_arm(client, args, seeds, inputs, confirmed)
    if args.from_transfer:
        if transfer_ready(args.from_transfer):
            add_transfer_rows(arms, notes, args.from_transfer, tasks, keys)
        else:
            warn(f"SKIPPED LOUDLY: the transfer rows: no transfer.json in {args.from_transfer}; add them later with --add-transfer {args.out}")
            notes.append(f"transfer rows left out: no transfer.json in {args.from_transfer} when the evaluation ended")

    for arm in arms.values():
        summarise_arm(arm, tasks, keys)
    result = {
        "settings": {
            "url": args.url,
            "samples": args.samples,
            "rounds": args.rounds,
            "doc_chars": args.doc_chars,
            "seeds": seeds,
            "temperature": args.temperature,
            "guided": guided,
            "guided_engine": args.guided_engine,
            "max_new_tokens": args.max_new_tokens,
            "optuna": args.optuna,
            "from_transfer": args.from_transfer,
            "confirmations": confirmed.asked,
        },
        "tasks": tasks,
        "arms": arms,
        "notes": notes,
    }
    js, md = write(args.out, result)
    print(md.read_text())
    print(f"wrote {js} and {md}", flush=True)
    return 0
