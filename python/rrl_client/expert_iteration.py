"""Expert iteration in one command: rounds of export → SFT → GRPO from the SFT adapter.

    python -m rrl_client.expert_iteration --rounds 2 --runs runs/search runs/serve \\
        --model models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf --tasks penguins-species,cars-mpg \\
        --output-dir runs/expert

Each round ``k`` (in ``OUTPUT_DIR/round-k/``):

1. ``rrl export sft`` over ``--runs`` and the serve runs of the earlier rounds (``sft.jsonl``);
2. ``rrl_client.sft`` on those rows, starting from the base model (``sft/adapter``); a round whose
   export kept no row skips it and starts GRPO from the previous round's adapter (or a new one);
3. ``rrl_client.grpo --adapter`` against ``--url``, or, without ``--url``, against an ``rrl serve``
   it starts itself with a run directory of its own (``serve/``; ``--family`` draws are served
   there), which the next round exports. GRPO sees the prompt SFT trained on: the patch form
   (``--prompt-form patch``, guided by each task's patch schema: xgrammar, installed by setup-venv.sh);
4. a summary line appended to ``OUTPUT_DIR/rounds.jsonl``.

The ``rrl`` command is ``node bin/rrl.js`` of the repository this package sits in (``--rrl`` to name
another ``bin/rrl.js``).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import grpo, sft

REPO_RRL = Path(__file__).resolve().parents[2] / "bin" / "rrl.js"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command's flags."""
    p = argparse.ArgumentParser(prog="python -m rrl_client.expert_iteration", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--runs", nargs="+", required=True, help="run directories to export the first round from (rrl train or rrl serve runs)")
    p.add_argument("--model", required=True, help="a Hugging Face model directory, or a .gguf file")
    p.add_argument("--tasks", default="", help="GRPO's tasks, comma-separated (default: every train task of the server)")
    p.add_argument("--output-dir", required=True)
    p.add_argument("--url", default=None, help="an rrl serve to train against (default: start one per round, with its own run directory)")
    p.add_argument("--rrl", default=str(REPO_RRL), help="the rrl command's bin/rrl.js (default: this repository's)")
    p.add_argument("--node", default="node", help="the Node.js executable")
    p.add_argument("--per-task", type=int, default=4, help="rrl export sft --per-task")
    p.add_argument("--sft-epochs", type=float, default=3.0)
    p.add_argument("--sft-learning-rate", type=float, default=2e-4)
    p.add_argument("--sft-max-length", type=int, default=1024, help="rrl_client.sft --max-length")
    p.add_argument("--steps", type=int, default=16, help="GRPO steps per round")
    p.add_argument("--num-generations", type=int, default=4)
    p.add_argument("--prompts-per-step", type=int, default=2)
    p.add_argument("--max-completion-length", type=int, default=256)
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--learning-rate", type=float, default=5e-5, help="GRPO's LoRA learning rate from the round's SFT adapter (docs/llm-training.md §7)")
    p.add_argument("--beta", type=float, default=0.1, help="GRPO's KL coefficient (the reference is the round's SFT adapter)")
    p.add_argument("--lora-r", type=int, default=16)
    p.add_argument("--lora-alpha", type=int, default=32)
    p.add_argument(
        "--prompt-form", default="patch", choices=["compact", "full", "patch"], help="GRPO's prompt form (patch: the form rrl export sft writes its rows in)"
    )
    p.add_argument(
        "--guided", action=argparse.BooleanOptionalAction, default=None, help="GRPO's guided decoding (default: rrl_client.grpo's, on for --prompt-form patch)"
    )
    p.add_argument("--format-weight", type=float, default=None, help="GRPO's format reward weight (default: rrl_client.grpo's for the prompt form)")
    p.add_argument(
        "--family",
        action="append",
        default=[],
        metavar="NAME[:COUNT]",
        help="family draws the rounds' own rrl serve registers (repeatable; as rrl serve --family); not with --url",
    )
    p.add_argument("--family-seed", type=int, default=1, help="seed of the --family draws")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=0)
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error("--rounds must be at least 1")
    if args.family and args.url:
        p.error("--family is for the rrl serve each round starts; with --url, start that server with --family yourself")
    return args


def export_sft(args: argparse.Namespace, runs: Sequence[str], out: Path) -> int:
    """``rrl export sft RUNS --out OUT``; the number of rows it wrote (its summary lines go to stderr)."""
    cmd = [args.node, args.rrl, "export", "sft", *runs, "--out", str(out), "--per-task", str(args.per_task)]
    if getattr(args, "doc_chars", None) is not None:
        cmd += ["--doc-chars", str(args.doc_chars)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    sys.stderr.write(done.stderr)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"rrl export sft failed ({done.returncode}): {last}")
    return sum(1 for line in out.read_text().splitlines() if line.strip())


def start_serve(cmd: Sequence[str], timeout_s: float = 120.0) -> tuple[subprocess.Popen[str], str]:
    """Start ``cmd`` (an ``rrl serve``) and wait for its ``listening on URL`` line; the process and the URL."""
    proc = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=None, text=True)
    began = time.time()
    assert proc.stdout is not None
    while time.time() - began < timeout_s:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            return proc, m.group(1)
    proc.terminate()
    proc.wait()
    raise RuntimeError(f"{' '.join(cmd)}: no 'listening on' line (exit {proc.returncode})")


def family_flags(draws: Sequence[str], seed: int) -> list[str]:
    """``--family D ... --family-seed S`` for rrl train / serve (nothing without draws)."""
    out: list[str] = []
    for d in draws:
        out += ["--family", d]
    return [*out, "--family-seed", str(seed)] if out else out


def corpus_flags(selections: Sequence[str]) -> list[str]:
    """``--corpus SPLIT[:N][@PACKAGES] ...`` for rrl train / serve (nothing without selections)."""
    return [flag for sel in selections for flag in ("--corpus", sel)]


def serve_cmd(node: str, rrl: str, run: Path, draws: Sequence[str] = (), seed: int = 1, corpus: Sequence[str] = ()) -> list[str]:
    """An ``rrl serve`` on a port of its own, with its run directory, family draws and corpus tasks."""
    return [node, rrl, "serve", "--port", "0", "--run", str(run), *family_flags(draws, seed), *corpus_flags(corpus)]


def grpo_argv(args: argparse.Namespace, url: str, out: Path, adapter: str | None) -> list[str]:
    """The flags of ``rrl_client.grpo`` for one round."""
    argv = [
        "--url",
        url,
        "--model",
        args.model,
        "--output-dir",
        str(out),
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
        "--lora-r",
        str(args.lora_r),
        "--lora-alpha",
        str(args.lora_alpha),
        "--prompt-form",
        args.prompt_form,
        "--seed",
        str(args.seed),
        "--threads",
        str(args.threads),
    ]
    if args.format_weight is not None:
        argv += ["--format-weight", str(args.format_weight)]
    if args.guided is not None:
        argv.append("--guided" if args.guided else "--no-guided")
    if args.tasks:
        argv += ["--tasks", args.tasks]
    if adapter:
        argv += ["--adapter", adapter]
    return argv


def last_line(path: Path) -> dict[str, Any]:
    """The last JSON line of a log (empty when there is none)."""
    lines = [line for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    return dict(json.loads(lines[-1])) if lines else {}


def run_round(args: argparse.Namespace, k: int, serve_runs: list[str], adapter: str | None) -> dict[str, Any]:
    """Round ``k``: export, SFT, GRPO; the round's summary (``adapter``: the one the next round may start from)."""
    began = time.time()
    here = Path(args.output_dir) / f"round-{k}"
    here.mkdir(parents=True, exist_ok=True)
    runs = [*args.runs, *serve_runs]
    rows = export_sft(args, runs, here / "sft.jsonl")
    summary: dict[str, Any] = {"round": k, "runs": runs, "sft_rows": rows, "sft": None}
    if rows:
        sft_args = sft.parse_args(
            [
                "--model",
                args.model,
                "--data",
                str(here / "sft.jsonl"),
                "--output-dir",
                str(here / "sft"),
                "--epochs",
                str(args.sft_epochs),
                "--learning-rate",
                str(args.sft_learning_rate),
                "--max-length",
                str(args.sft_max_length),
                "--lora-r",
                str(args.lora_r),
                "--lora-alpha",
                str(args.lora_alpha),
                "--seed",
                str(args.seed),
                "--threads",
                str(args.threads),
            ]
        )
        summary["sft"] = sft.run(sft_args)
        adapter = summary["sft"]["adapter"]
    proc = None
    url = args.url
    if url is None:
        serve_run = here / "serve"
        proc, url = start_serve(serve_cmd(args.node, args.rrl, serve_run, args.family, args.family_seed))
        summary["serve_run"] = str(serve_run)
    try:
        code = grpo.main(grpo_argv(args, url, here / "grpo", adapter))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait()
    if code != 0:
        raise RuntimeError(f"round {k}: GRPO exited {code}")
    summary.update(
        grpo_start=adapter, adapter=str(here / "grpo" / "adapter"), grpo=last_line(here / "grpo" / "log.jsonl"), seconds=round(time.time() - began, 1)
    )
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    """Run the rounds; each appends its summary to ``OUTPUT_DIR/rounds.jsonl``."""
    args = parse_args(argv)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    serve_runs: list[str] = []
    adapter: str | None = None
    for k in range(1, args.rounds + 1):
        try:
            summary = run_round(args, k, serve_runs, adapter)
        except RuntimeError as e:
            print(f"expert iteration: {e}", file=sys.stderr)
            return 1
        adapter = summary["adapter"]
        if "serve_run" in summary:
            serve_runs.append(summary["serve_run"])
        with (out / "rounds.jsonl").open("a") as f:
            f.write(json.dumps(summary) + "\n")
        print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
