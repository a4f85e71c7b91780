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
   prompts; with ``--grpo-seeds N`` also ``grpo-1/`` ... ``grpo-{N-1}/`` (seeds 1 .. N-1), two at a time;
   each against an ``rrl serve`` of its own (``serve-grpo/``, ...), one torch thread each
   (``--sft-adapter DIR`` skips stages 1 and 2 and starts here from that adapter);
4. ``heldout/``: ``rrl_client.heldout`` against an ``rrl serve`` of the held-out tasks
   (``serve-heldout/``): the base model, after SFT (and after SFT on its own samples) and after GRPO (each
   seed an arm), the baseline, with ``--optuna`` Optuna's TPE, with ``--from-transfer`` the controller's and
   random search's rows; with ``--ablate-doc`` ``heldout-nodoc/``, the first GRPO model with the
   documentation removed (its greedy job); with ``--eval-rounds K`` ``heldout-rounds/``, the first GRPO model's best of K
   rounds with feedback;
5. ``summary.json``: the GRPO runs' last-5-step figures and the held-out tables' paths.

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
    g.add_argument(
        "--sft-adapter",
        default=None,
        metavar="DIR",
        help="start from this SFT adapter (rrl_client.sft's, or one of its checkpoints): no search, no SFT (--own-samples then needs --runs)",
    )
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
    g.add_argument(
        "--grpo-seeds",
        type=int,
        default=1,
        help="GRPO runs from the same start with seeds 0..N-1 (grpo/, grpo-1/, ...; the frozen arm beside seed 0), two at a time, each a held-out arm",
    )
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
    g.add_argument(
        "--eval-rounds", type=int, default=0, help="also heldout-rounds/: the first GRPO model's best of K rounds with feedback on the same tasks (0: none)"
    )
    g.add_argument(
        "--ablate-doc",
        action="store_true",
        help="also heldout-nodoc/: the first GRPO model with the documentation removed (--doc-chars 0) on the same tasks",
    )
    g.add_argument("--seeds", type=int, default=2)
    g.add_argument("--samples", default="4,16")
    g.add_argument("--optuna", action="store_true")
    g.add_argument("--from-transfer", default=None, metavar="DIR")
    g.add_argument("--threads", type=int, default=2, help="torch threads of SFT and the held-out evaluation (GRPO's two arms take one each)")
    args = p.parse_args(argv)
    if not args.heldout_family and not args.heldout_corpus and not args.heldout_tasks:
        p.error("give --heldout-family NAME[:COUNT] or --heldout-corpus SPLIT[:N] (or --heldout-tasks for built-in held-out tasks)")
    if args.grpo_seeds < 1:
        p.error("--grpo-seeds must be at least 1")
    if args.seeds < 2:  # refused here, not by the held-out stage after SFT and GRPO have run
        p.error("--seeds must be at least 2 (the held-out evaluation's repetitions; greedy jobs are one per task either way)")
    if args.sft_adapter and args.own_samples and not args.runs:
        p.error("--own-samples with --sft-adapter needs --runs (the records its own samples are exported beside)")
    return args


def grpo_arms(args: argparse.Namespace) -> list[tuple[str, int]]:
    """The GRPO runs as (folder, seed): ``grpo`` (seed 0), the frozen control beside it, then ``grpo-K`` (seed K)."""
    return [("grpo", 0), *([("frozen", 0)] if args.frozen else []), *((f"grpo-{k}", k) for k in range(1, args.grpo_seeds))]


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
    """The GRPO runs from the SFT adapter (``grpo_arms``), two side by side at a time (one torch thread each), each
    against a server of its own; a run whose log has every step is kept."""
    arms = grpo_arms(args)
    todo = [(a, seed) for a, seed in arms if not ((out / a / "log.jsonl").exists() and len((out / a / "log.jsonl").read_text().splitlines()) >= args.steps)]
    if not todo:
        say("GRPO: every run's log is complete, kept")
        return
    for a, _ in todo:  # a run stopped part way starts again from scratch, its server's history with it
        for d in (out / a, out / f"serve-{a}"):
            if d.exists():
                say(f"{a}: {d} is from a stopped attempt, removed")
                shutil.rmtree(d)
    for wave in (todo[i : i + 2] for i in range(0, len(todo), 2)):
        run_grpo_wave(args, out, adapter, wave)


def run_grpo_wave(args: argparse.Namespace, out: Path, adapter: str, wave: Sequence[tuple[str, int]]) -> None:
    """GRPO runs side by side (one torch thread each; a run alone gets ``--threads``), each against an ``rrl serve`` of
    its own; raises naming the runs that failed."""
    serves = {a: start_serve(serve_cmd(args.node, args.rrl, out / f"serve-{a}", args.train_family, args.family_seed, args.train_corpus)) for a, _ in wave}
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for a, seed in wave:
            cmd = [
                *(args.python, "-m", "rrl_client.grpo", "--url", serves[a][1], "--model", args.model, "--adapter", adapter),
                *("--tasks", args.grpo_tasks, "--steps", str(args.steps), "--num-generations", str(args.num_generations)),
                *("--prompts-per-step", str(args.prompts_per_step), "--max-completion-length", str(args.max_completion_length)),
                *("--temperature", str(args.temperature), "--learning-rate", str(args.learning_rate), "--beta", str(args.beta)),
                *("--prompt-form", "patch", "--guided", "--rounds", str(args.rounds)),
                *(["--doc-chars", str(args.doc_chars)] if args.doc_chars is not None else []),
                *("--threads", "1" if len(wave) > 1 else str(args.threads), "--seed", str(seed), "--output-dir", str(out / a)),
                *(["--frozen"] if a == "frozen" else []),
            ]
            say(f"{a}: {' '.join(cmd[1:])}")
            procs[a] = subprocess.Popen(cmd, cwd=Path(__file__).resolve().parents[1])
        failed = [a for a, proc in procs.items() if proc.wait() != 0]
        if failed:
            raise RuntimeError(f"the {', '.join(failed)} run(s) failed (see their output above)")
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


def stage_heldout(args: argparse.Namespace, out: Path, sft_adapter: str, own_adapter: str | None = None) -> None:
    """The held-out evaluations, each against a server of the held-out draws and skipped when its ``heldout.json``
    exists: ``heldout/`` (base, SFT, own-sample SFT, every GRPO seed; the baseline, Optuna, the transfer rows),
    with ``--ablate-doc`` ``heldout-nodoc/`` (the first GRPO model without the documentation), with ``--eval-rounds K``
    ``heldout-rounds/`` (the first GRPO model's best of K rounds)."""
    grpo = [f"{a}={args.model}:{out / a / 'adapter'}" for a, _ in grpo_arms(args) if a != "frozen"]
    sft_arm = f"sft={args.model}:{sft_adapter}"
    own = [f"sft-own={args.model}:{own_adapter}"] if own_adapter else []
    extra = [*(["--doc-chars", str(args.doc_chars)] if args.doc_chars is not None else []), *(["--optuna"] if args.optuna else [])]
    extra += ["--from-transfer", args.from_transfer] if args.from_transfer else []
    run_heldout(args, out, "heldout", [f"base={args.model}", sft_arm, *own, *grpo], ["--samples", args.samples, *extra])
    if args.ablate_doc:
        run_heldout(args, out, "heldout-nodoc", grpo[:1], ["--samples", "0", "--doc-chars", "0"])
    if args.eval_rounds:
        doc = ["--doc-chars", str(args.doc_chars)] if args.doc_chars is not None else []
        run_heldout(args, out, "heldout-rounds", grpo[:1], ["--samples", "0", "--rounds", str(args.eval_rounds), *doc])


def run_heldout(args: argparse.Namespace, out: Path, folder: str, arms: Sequence[str], extra: Sequence[str]) -> None:
    """One ``rrl_client.heldout`` evaluation of ``arms`` into ``out/folder`` against ``out/serve-folder``, unless its
    ``heldout.json`` exists."""
    if (out / folder / "heldout.json").exists():
        say(f"{folder}: heldout.json exists, kept")
        return
    serve = out / f"serve-{folder}"
    if serve.exists():  # a stopped evaluation starts again from scratch
        say(f"{folder}: {serve} is from a stopped attempt, removed")
        shutil.rmtree(serve)
    proc, url = start_serve(serve_cmd(args.node, args.rrl, serve, args.heldout_family, args.family_seed, args.heldout_corpus))
    try:
        from .heldout.cli import main as heldout_main

        argv = [*(a for arm in arms for a in ("--arm", arm)), "--url", url, "--seeds", str(args.seeds), "--threads", str(args.threads)]
        argv += ["--out", str(out / folder), "--max-new-tokens", str(args.max_completion_length), "--temperature", str(args.temperature)]
        # the held-out draws and corpus tasks alone by default (the server also lists its built-in held-out tasks)
        corpus = [str(r["id"]) for r in RrlClient(url).tasks() if str(r["id"]).startswith("corpus-")] if args.heldout_corpus else []
        argv += ["--tasks", args.heldout_tasks or ",".join([*draw_task_ids(args.heldout_family, args.family_seed), *corpus]), *extra]
        say(f"{folder}: {' '.join(argv)}")
        if heldout_main(argv) != 0:
            raise RuntimeError(f"the {folder} evaluation failed (see its output above)")
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
        if args.sft_adapter:
            runs = [str(Path(r).resolve()) for r in args.runs]
            sft_summary: dict[str, Any] = {"adapter": str(Path(args.sft_adapter).resolve()), "given": True}
        else:
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
        stage_heldout(args, out, sft_summary["adapter"], own_summary["adapter"] if own_summary else None)
        seconds["heldout"] = time.time() - t
    except (RuntimeError, subprocess.CalledProcessError) as e:
        say(f"stopped: {e}")
        return 1
    summary = {
        "runs": runs,
        "sft": sft_summary,
        "sft_own": own_summary,
        **{a: last_five(out / a / "log.jsonl") for a, _ in grpo_arms(args)},
        "heldout": [str(out / f / "heldout.md") for f in ("heldout", "heldout-nodoc", "heldout-rounds") if (out / f / "heldout.md").exists()],
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
        "total_s": round(time.time() - began, 1),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
