"""The model's own samples as jobs of the harness: expert iteration on what the model itself writes.

    python -m rrl_client.own_samples --url http://127.0.0.1:8377 --model MODEL [--adapter DIR] \\
        --tasks corpus-…,corpus-… --samples 8 [--doc-chars N]

Per task: ``--samples`` completions of the task's patch prompt, sampled from the model (guided by the
task's patch schema when the grammar engine is installed), posted to `rrl serve` in one
``POST /v1/rewards``. The harness trains and scores every one and confirms the candidates that seem to
beat the reference on its own seeds, so the serve run then holds the model's jobs as any run does:
``rrl export sft RUN`` keeps the confirmed best ones (its rule: succeeded at full budget, above the
run's reference by the reward's noise rule, the confirmed mean where confirmed) as SFT rows, and SFT
then GRPO start from them (``rrl_client.llm_experiment --own-samples N`` runs the whole chain). The
model sees nothing of the hidden evaluation; the selection is the harness's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from .client import RrlClient
from .contracts import DEFAULT_URL


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command's flags."""
    p = argparse.ArgumentParser(prog="python -m rrl_client.own_samples", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", default=os.environ.get("RRL_URL", DEFAULT_URL), help="rrl serve's address (env RRL_URL)")
    p.add_argument("--token-env", default="RRL_TOKEN", help="environment variable holding the bearer token, if any")
    p.add_argument("--model", required=True, help="a Hugging Face model directory, or a .gguf file")
    p.add_argument("--adapter", default=None, help="a PEFT adapter directory (e.g. rrl_client.sft's OUTPUT_DIR/adapter)")
    p.add_argument("--tasks", required=True, help="comma-separated task ids (train tasks: the rows are for training)")
    p.add_argument("--samples", type=int, default=8, help="completions per task")
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--max-new-tokens", type=int, default=256)
    p.add_argument("--doc-chars", type=int, default=None, help="the patch prompt's documentation budget (default: the server's; 0 none)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    p.add_argument("--guided", action=argparse.BooleanOptionalAction, default=True, help="constrain sampling to each task's patch schema")
    p.add_argument("--guided-engine", default="xgrammar", choices=["xgrammar", "llguidance"])
    args = p.parse_args(argv)
    if args.samples < 1 or args.max_new_tokens < 1:
        p.error("--samples and --max-new-tokens must be at least 1")
    return args


def sample_task(client: RrlClient, arm: Any, task: str, samples: int, seed: int, doc_chars: int | None) -> dict[str, Any]:
    """``samples`` completions of ``task`` from ``arm`` (a ``heldout.models.ModelArm``) posted as one request; what came of them."""
    messages = client.prompt(task, "patch", doc_chars)
    schema = client.schema(task, "patch") if arm.guided is not None else None
    texts = arm.generate(messages, schema, samples, seed)
    answer = client.rewards(task, texts)
    results = answer["results"]
    scores = [score["normalized"] for r in results if (score := r.get("score")) is not None]
    return {
        "task": task,
        "valid": sum(r["status"] != "invalid" for r in results),
        "samples": len(texts),
        "best_single": max(scores, default=None),
        "rewards": answer["rewards"],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Samples and posts; one JSON line per task, then a summary line."""
    args = parse_args(argv)
    from .heldout.models import ArmSpec, ModelArm, load_arm

    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    client = RrlClient(args.url, os.environ.get(args.token_env) or None)
    model, tok = load_arm(ArmSpec("own", args.model, args.adapter))
    arm = ModelArm(model, tok, guided=args.guided, engine=args.guided_engine, max_new_tokens=args.max_new_tokens, temperature=args.temperature)
    started = time.time()
    tasks = [t for t in args.tasks.split(",") if t]
    lines = []
    for i, task in enumerate(tasks):
        line = sample_task(client, arm, task, args.samples, args.seed + i, args.doc_chars)
        lines.append(line)
        print(json.dumps(line), flush=True)
    valid = sum(x["valid"] for x in lines)
    total = sum(x["samples"] for x in lines)
    print(json.dumps({"tasks": len(tasks), "samples": total, "valid_share": valid / total if total else None, "seconds": round(time.time() - started, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
