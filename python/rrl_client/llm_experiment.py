"""The language model's whole experiment in one command: train on train tasks, evaluate on held-out ones.

    python -m rrl_client.llm_experiment --model models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf \\
        --out runs/llm --train-family tabular:3 --train-family synthetic:3 ... \\
        --grpo-tasks penguins-species,cars-mpg --heldout-family acrobot:2 --heldout-family vega-more:2 \\
        --heldout-family rings:2 --from-transfer runs/transfer --optuna

Stages, each in a folder of ``--out`` and skipped when its result is already there (so a stopped
experiment resumes where it stopped):

1. ``search/``: the harness's own records, ``rrl train --agent search`` on the train tasks and the
   ``--train-family`` draws (or the runs of ``--runs``);
2. ``sft.jsonl`` and ``sft/``: ``rrl export sft`` of those runs, then ``rrl_client.sft`` (LoRA) on it;
   with ``--own-samples N``, ``serve-own/``, ``sft-own.jsonl`` and ``sft-own/``: N samples per GRPO task from
   the SFT model (``rrl_client.own_samples``), the harness's confirmed best of them exported beside the
   search rows, SFT again from the base model; GRPO then starts from ``sft-own/``;
3. ``grpo/`` and ``frozen/``: GRPO from the SFT adapter (``rrl_client.grpo --adapter --prompt-form
   patch``, guided) and, side by side, its control, the SFT model frozen (``--frozen``) on the same
   prompts; each against an ``rrl serve`` of its own (``serve-grpo/``, ``serve-frozen/``, the
   ``--train-family`` draws registered), one torch thread each;
4. ``heldout/``: ``rrl_client.heldout`` against an ``rrl serve`` of the ``--heldout-family`` draws
   (``serve-heldout/``): the base model, after SFT (and after SFT on its own samples) and after GRPO, the baseline, with ``--optuna``
   Optuna's TPE, with ``--from-transfer`` the controller's and random search's rows;
5. ``summary.json``: the GRPO arms' last-5-step figures and the held-out table's path.

Every server gets the environment's ``RRL_EVAL_SECRET``; give the same one to ``rrl experiment
transfer`` when its rows are to sit beside these (the hidden evaluation's draws derive from it).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import sft
from .client import RrlClient
from .contracts import draw_task_ids
from .expert_iteration import REPO_RRL, corpus_flags, export_sft, family_flags, serve_cmd, start_serve

SFT_SAVE_STEPS = 8
"""SFT keeps a checkpoint every this many steps: a stopped experiment resumes its SFT from the last one (on 2 cores a step of
4 rows with the corpus prompt takes about a minute)."""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The experiment's flags."""
    p = argparse.ArgumentParser(prog="python -m rrl_client.llm_experiment", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="a Hugging Face model directory, or a .gguf file")
    p.add_argument("--out", required=True, help="the experiment's folder")
    p.add_argument("--rrl", default=str(REPO_RRL), help="the rrl command's bin/rrl.js (default: this repository's)")
    p.add_argument("--node", default="node", help="the Node.js executable")
    p.add_argument("--python", default=sys.executable, help="the Python that runs the trainers")
    g = p.add_argument_group("1. the harness's records")
    g.add_argument("--runs", nargs="*", default=[], help="existing rrl train / rrl serve runs to export (default: run the search below)")
    g.add_argument(
        "--train-family", action="append", default=[], metavar="NAME[:COUNT]", help="train family draws (repeatable): searched, exported and served for GRPO"
    )
    g.add_argument(
        "--train-corpus",
        action="append",
        default=[],
        metavar="SPLIT[:N][@PACKAGES]",
        help="corpus tasks to train on (repeatable, e.g. train:2): searched, exported and served for GRPO (python/fetch-corpus.sh)",
    )
    g.add_argument("--family-seed", type=int, default=1, help="seed of every family draw (train and held-out)")
    g.add_argument("--search-iterations", type=int, default=3)
    g.add_argument("--search-group", type=int, default=8)
    g = p.add_argument_group("2. warm start")
    g.add_argument("--per-task", type=int, default=4, help="rrl export sft --per-task")
    g.add_argument(
        "--doc-chars",
        type=int,
        default=None,
        help="the patch prompt's documentation budget in characters, everywhere (SFT rows, GRPO, held-out); default the server's, 0 none",
    )
    g.add_argument("--sft-epochs", type=float, default=4.0, help="SFT epochs (4 at 1e-3: the measured run, docs/llm-training.md §7)")
    g.add_argument("--sft-learning-rate", type=float, default=1e-3)
    g.add_argument(
        "--own-samples",
        type=int,
        default=0,
        help="expert iteration on the model's own samples: after SFT, this many samples per GRPO task from the SFT model (rrl_client.own_samples), "
        "the harness's confirmed best of them exported beside the search rows, SFT again from the base model, and GRPO from that (0: off)",
    )
    g = p.add_argument_group("3. GRPO")
    g.add_argument("--grpo-tasks", required=True, help="GRPO's train tasks, comma-separated (family draws by id)")
    g.add_argument("--steps", type=int, default=16)
    g.add_argument("--num-generations", type=int, default=8)
    g.add_argument("--prompts-per-step", type=int, default=1)
    g.add_argument("--max-completion-length", type=int, default=256, help="generation cap in tokens (GRPO and the held-out evaluation)")
    g.add_argument("--temperature", type=float, default=0.8, help="sampling temperature (GRPO and the held-out best-of-N)")
    g.add_argument(
        "--learning-rate",
        type=float,
        default=5e-5,
        help="GRPO's LoRA learning rate from the SFT adapter (5e-5 kept the SFT model's held-out gains; 2e-4 lost them: docs/llm-training.md §7)",
    )
    g.add_argument("--beta", type=float, default=0.1, help="GRPO's KL coefficient to the SFT model (0.1 with 5e-5, measured in §7)")
    g.add_argument("--rounds", type=int, default=1, help="jobs per GRPO episode (above 1: rounds with feedback, rrl_client.rounds)")
    g.add_argument("--no-frozen", dest="frozen", action="store_false", help="skip the frozen control arm")
    g = p.add_argument_group("4. held-out evaluation")
    g.add_argument("--heldout-family", action="append", default=[], metavar="NAME[:COUNT]", help="held-out family draws (repeatable)")
    g.add_argument(
        "--heldout-corpus",
        action="append",
        default=[],
        metavar="SPLIT[:N][@PACKAGES]",
        help="held-out corpus tasks (repeatable, e.g. held-out:4@plm,psych; validation:4 where choices are made)",
    )
    g.add_argument("--heldout-tasks", default="", help="held-out task ids (default: the tasks of the --heldout-family draws and --heldout-corpus)")
    g.add_argument("--eval-rounds", type=int, default=0, help="the held-out evaluation's best of K rounds with feedback (0: none)")
    g.add_argument("--seeds", type=int, default=2)
    g.add_argument("--samples", default="4,16")
    g.add_argument("--optuna", action="store_true")
    g.add_argument("--from-transfer", default=None, metavar="DIR")
    g.add_argument("--threads", type=int, default=2, help="torch threads of SFT and the held-out evaluation (GRPO's two arms take one each)")
    args = p.parse_args(argv)
    if not args.heldout_family and not args.heldout_corpus and not args.heldout_tasks:
        p.error("give --heldout-family NAME[:COUNT] or --heldout-corpus SPLIT[:N] (or --heldout-tasks for built-in held-out tasks)")
    return args


def say(msg: str) -> None:
    """A progress line on stderr."""
    print(f"llm experiment: {msg}", file=sys.stderr, flush=True)


def stage_search(args: argparse.Namespace, out: Path) -> list[str]:
    """The runs to export: ``--runs``, else a search run on the train tasks and draws (resumed if stopped)."""
    if args.runs:
        return list(args.runs)
    run = out / "search"
    cmd = [
        args.node,
        args.rrl,
        "train",
        "--agent",
        "search",
        "--tasks",
        "train",
        *family_flags(args.train_family, args.family_seed),
        *corpus_flags(args.train_corpus),
        "--iterations",
        str(args.search_iterations),
        "--group",
        str(args.search_group),
        "--seed",
        "1",
    ]
    cmd += ["--resume", str(run)] if (run / "store.db").exists() else ["--run", str(run)]
    say(f"search on the train tasks: {' '.join(cmd[1:])}")
    subprocess.run(cmd, check=True)
    return [str(run)]


def stage_sft(args: argparse.Namespace, out: Path, runs: Sequence[str]) -> dict[str, Any]:
    """Export and fine-tune, unless ``sft/summary.json`` says it was done; the SFT summary."""
    done = out / "sft" / "summary.json"
    if done.exists():
        say(f"SFT: {done.parent} exists, kept")
        return dict(json.loads(done.read_text()))
    data = out / "sft.jsonl"
    ns = argparse.Namespace(node=args.node, rrl=args.rrl, per_task=args.per_task, doc_chars=args.doc_chars)
    rows = export_sft(ns, runs, data)
    if rows == 0:
        raise RuntimeError("rrl export sft kept no row: no job of the runs beat its task's reference (run a longer search)")
    say(f"SFT on {rows} rows")
    summary = sft.run(
        sft.parse_args(
            [
                "--model",
                args.model,
                "--data",
                str(data),
                "--output-dir",
                str(out / "sft"),
                "--epochs",
                str(args.sft_epochs),
                "--learning-rate",
                str(args.sft_learning_rate),
                "--threads",
                str(args.threads),
                "--save-steps",
                str(SFT_SAVE_STEPS),
            ]
        )
    )
    done.write_text(json.dumps(summary))
    return summary


def stage_own(args: argparse.Namespace, out: Path, runs: Sequence[str], adapter: str) -> dict[str, Any]:
    """Expert iteration on the model's own samples, unless ``sft-own/summary.json`` says it was done: samples from the
    SFT model on the GRPO tasks against a server of their own (``serve-own/``), then ``rrl export sft`` over the
    search runs and that server's run (``sft-own.jsonl``), then SFT from the base model (``sft-own/``); its summary."""
    done = out / "sft-own" / "summary.json"
    if done.exists():
        say(f"own samples: {done.parent} exists, kept")
        return dict(json.loads(done.read_text()))
    if (out / "serve-own").exists():  # a stopped attempt's samples would count twice
        shutil.rmtree(out / "serve-own")
    proc, url = start_serve(serve_cmd(args.node, args.rrl, out / "serve-own", args.train_family, args.family_seed, args.train_corpus))
    try:
        from .own_samples import main as own_main

        argv = ["--url", url, "--model", args.model, "--adapter", adapter, "--tasks", args.grpo_tasks, "--samples", str(args.own_samples)]
        argv += ["--temperature", str(args.temperature), "--max-new-tokens", str(args.max_completion_length), "--threads", str(args.threads)]
        argv += ["--doc-chars", str(args.doc_chars)] if args.doc_chars is not None else []
        say(f"own samples: {' '.join(argv)}")
        if own_main(argv) != 0:
            raise RuntimeError("sampling the model's own jobs failed (see its output above)")
    finally:
        proc.terminate()
        proc.wait()
    data = out / "sft-own.jsonl"
    ns = argparse.Namespace(node=args.node, rrl=args.rrl, per_task=args.per_task, doc_chars=args.doc_chars)
    rows = export_sft(ns, [*runs, str(out / "serve-own")], data)
    say(f"SFT on {rows} rows (the search's and the model's own confirmed best)")
    summary = sft.run(
        sft.parse_args(
            [
                *("--model", args.model, "--data", str(data), "--output-dir", str(out / "sft-own")),
                *("--epochs", str(args.sft_epochs), "--learning-rate", str(args.sft_learning_rate), "--threads", str(args.threads)),
                *("--save-steps", str(SFT_SAVE_STEPS)),
            ]
        )
    )
    done.write_text(json.dumps(summary))
    return summary


def stage_grpo(args: argparse.Namespace, out: Path, adapter: str) -> None:
    """GRPO from the SFT adapter and its frozen control, side by side, each against a server of its own."""
    arms = [a for a in ("grpo", "frozen") if a == "grpo" or args.frozen]
    todo = [a for a in arms if not ((out / a / "log.jsonl").exists() and len((out / a / "log.jsonl").read_text().splitlines()) >= args.steps)]
    if not todo:
        say("GRPO: both arms' logs are complete, kept")
        return
    for a in todo:  # an arm stopped part way starts again from scratch, its server's history with it
        for d in (out / a, out / f"serve-{a}"):
            if d.exists():
                say(f"{a}: {d} is from a stopped attempt, removed")
                shutil.rmtree(d)
    serves = {a: start_serve(serve_cmd(args.node, args.rrl, out / f"serve-{a}", args.train_family, args.family_seed, args.train_corpus)) for a in todo}
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for a in todo:
            cmd = [
                args.python,
                "-m",
                "rrl_client.grpo",
                "--url",
                serves[a][1],
                "--model",
                args.model,
                "--adapter",
                adapter,
                "--tasks",
                args.grpo_tasks,
                "--steps",
                str(args.steps),
                "--num-generations",
                str(args.num_generations),
                "--prompts-per-step",
                str(args.prompts_per_step),
                "--max-completion-length",
                str(args.max_completion_length),
                "--temperature",
                str(args.temperature),
                "--learning-rate",
                str(args.learning_rate),
                "--beta",
                str(args.beta),
                "--prompt-form",
                "patch",
                "--guided",
                "--rounds",
                str(args.rounds),
                *(["--doc-chars", str(args.doc_chars)] if args.doc_chars is not None else []),
                "--threads",
                "1",
                "--seed",
                "0",
                "--output-dir",
                str(out / a),
                *(["--frozen"] if a == "frozen" else []),
            ]
            say(f"{a}: {' '.join(cmd[1:])}")
            procs[a] = subprocess.Popen(cmd, cwd=Path(__file__).resolve().parents[1])
        failed = [a for a, proc in procs.items() if proc.wait() != 0]
        if failed:
            raise RuntimeError(f"the {', '.join(failed)} arm(s) failed (see their output above)")
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.terminate()
        for s, _ in serves.values():
            s.terminate()
            s.wait()


def last_five(path: Path) -> dict[str, float | None]:
    """One GRPO arm's figures over its last 5 steps (and its median seconds per step over all)."""
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []

    def mean(key: str, rows: Sequence[dict[str, Any]]) -> float | None:
        xs = [r[key] for r in rows if isinstance(r.get(key), (int, float))]
        return sum(xs) / len(xs) if xs else None

    steps = sorted(r["step_s"] for r in lines if isinstance(r.get("step_s"), (int, float)))
    last = lines[-5:]
    return {
        "steps": len(lines),
        "reward_last5": mean("outer/reward", last),
        "valid_last5": mean("outer/valid_share", last),
        "distinct_last5": mean("outer/distinct_specs", last),
        "score_mean_last5": mean("outer/score_mean_step", last),
        "reward_first5": mean("outer/reward", lines[:5]),
        "tokens_per_s": mean("tokens_per_s", lines),
        "step_s_median": steps[len(steps) // 2] if steps else None,
    }


def stage_heldout(args: argparse.Namespace, out: Path, sft_adapter: str, grpo_adapter: str, own_adapter: str | None = None) -> None:
    """The held-out evaluation against a server of the held-out draws, unless ``heldout/heldout.json`` exists."""
    if (out / "heldout" / "heldout.json").exists():
        say("held-out evaluation: heldout/heldout.json exists, kept")
        return
    if (out / "serve-heldout").exists():  # a stopped evaluation starts again from scratch
        say(f"held-out evaluation: {out / 'serve-heldout'} is from a stopped attempt, removed")
        shutil.rmtree(out / "serve-heldout")
    proc, url = start_serve(serve_cmd(args.node, args.rrl, out / "serve-heldout", args.heldout_family, args.family_seed, args.heldout_corpus))
    try:
        from .heldout.cli import main as heldout_main

        argv = [
            "--url",
            url,
            "--arm",
            f"base={args.model}",
            "--arm",
            f"sft={args.model}:{sft_adapter}",
            *(["--arm", f"sft-own={args.model}:{own_adapter}"] if own_adapter else []),
            "--arm",
            f"grpo={args.model}:{grpo_adapter}",
            "--seeds",
            str(args.seeds),
            "--samples",
            args.samples,
            "--threads",
            str(args.threads),
            "--out",
            str(out / "heldout"),
            "--max-new-tokens",
            str(args.max_completion_length),
            "--temperature",
            str(args.temperature),
        ]
        # the held-out draws and corpus tasks alone by default (the server also lists its built-in held-out tasks)
        corpus = [str(r["id"]) for r in RrlClient(url).tasks() if str(r["id"]).startswith("corpus-")] if args.heldout_corpus else []
        argv += ["--tasks", args.heldout_tasks or ",".join([*draw_task_ids(args.heldout_family, args.family_seed), *corpus])]
        argv += ["--rounds", str(args.eval_rounds)] if args.eval_rounds else []
        argv += ["--doc-chars", str(args.doc_chars)] if args.doc_chars is not None else []
        argv += ["--optuna"] if args.optuna else []
        argv += ["--from-transfer", args.from_transfer] if args.from_transfer else []
        say(f"held-out evaluation: {' '.join(argv)}")
        if heldout_main(argv) != 0:
            raise RuntimeError("the held-out evaluation failed (see its output above)")
    finally:
        proc.terminate()
        proc.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the stages (see the module comment); prints the summary as one JSON line."""
    args = parse_args(argv)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    args.model = str(Path(args.model).resolve())
    began = time.time()
    seconds: dict[str, float] = {}
    try:
        t = time.time()
        runs = [str(Path(r).resolve()) for r in stage_search(args, out)]
        seconds["search"] = time.time() - t
        t = time.time()
        sft_summary = stage_sft(args, out, runs)
        seconds["sft"] = time.time() - t
        own_summary = None
        if args.own_samples:
            t = time.time()
            own_summary = stage_own(args, out, runs, sft_summary["adapter"])
            seconds["own"] = time.time() - t
        start = own_summary or sft_summary  # GRPO starts from the last SFT
        t = time.time()
        stage_grpo(args, out, start["adapter"])
        seconds["grpo"] = time.time() - t
        t = time.time()
        stage_heldout(args, out, sft_summary["adapter"], str(out / "grpo" / "adapter"), own_summary["adapter"] if own_summary else None)
        seconds["heldout"] = time.time() - t
    except (RuntimeError, subprocess.CalledProcessError) as e:
        say(f"stopped: {e}")
        return 1
    summary = {
        "runs": runs,
        "sft": sft_summary,
        "sft_own": own_summary,
        "grpo": last_five(out / "grpo" / "log.jsonl"),
        "frozen": last_five(out / "frozen" / "log.jsonl"),
        "heldout": str(out / "heldout" / "heldout.md"),
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
        "total_s": round(time.time() - began, 1),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
