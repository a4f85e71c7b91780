"""Measure guided decoding on the CPU path: per engine and task, the share of sampled completions that
parse as JSON and satisfy the task's patch schema, tokens/s against unconstrained sampling in the
same run, and the grammar compile time.

    cd python && PYTHONPATH=$PWD ../.venv/bin/python -m rrl_client.bench_guided \\
        --model ../models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf --inputs ../bench/guided/inputs.json

``--inputs`` is what ``bench/guided/make-inputs.mjs`` writes: per task the patch schema
(``GET /v1/tasks/{id}/schema?form=patch``) and the compact prompt, whose last line this script
replaces with a request for a JSON Merge Patch. Unconstrained completions count as valid when their
first JSON object satisfies the schema (what the harness would extract); guided ones must be JSON
as a whole.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any, cast

from .extract import extract_json_object
from .guided import ENGINES, GuidedDecoding, schema_errors

PATCH_REQUEST = (
    "Reply with a JSON merge patch of this spec: a JSON object holding only the fields you change, "
    'nested as in the spec, for example {"algorithm":{"learningRate":0.003}}. Reply with the JSON only.'
)


def patch_messages(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """The compact prompt with its closing request replaced by the patch request."""
    out = [dict(m) for m in messages]
    lines = out[-1]["content"].rstrip().split("\n")
    out[-1]["content"] = "\n".join(lines[:-1] + [PATCH_REQUEST])
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m rrl_client.bench_guided", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True)
    p.add_argument("--inputs", required=True, help="bench/guided/inputs.json")
    p.add_argument("--tasks", default="", help="comma list (default: every task in --inputs)")
    p.add_argument("--engines", default="none," + ",".join(ENGINES), help="'none' is unconstrained sampling")
    p.add_argument("--samples", type=int, default=16)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--max-new-tokens", type=int, default=96)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json-out", default=None, help="also write the rows as JSON here")
    args = p.parse_args(argv)

    import torch

    from .grpo import load_model

    torch.set_num_threads(args.threads)
    with open(args.inputs) as f:
        inputs = cast(dict[str, Any], json.load(f))
    tasks = [t for t in args.tasks.split(",") if t] or list(inputs)
    model, tok = load_model(args.model, dtype=torch.float32)
    model.eval()
    rows: list[dict[str, Any]] = []
    for engine in [e for e in args.engines.split(",") if e]:
        guided = None if engine == "none" else GuidedDecoding(tok, vocab_size=model.config.vocab_size, engine=cast(Any, engine))
        for task in tasks:
            schema = inputs[task]["patchSchema"]
            procs: list[Any] = []
            compile_s = None
            if guided is not None:
                began = time.perf_counter()
                guided.compile(schema)
                compile_s = time.perf_counter() - began
                procs = [guided.processor(schema)]
            ids = tok.apply_chat_template(patch_messages(inputs[task]["messages"]), add_generation_prompt=True, return_tensors="pt", return_dict=True)
            torch.manual_seed(args.seed)
            began = time.perf_counter()
            with torch.no_grad():
                out = model.generate(
                    **ids,
                    do_sample=True,
                    temperature=args.temperature,
                    top_p=1.0,
                    top_k=0,
                    max_new_tokens=args.max_new_tokens,
                    num_return_sequences=args.samples,
                    pad_token_id=tok.pad_token_id,
                    eos_token_id=tok.eos_token_id,
                    logits_processor=procs or None,
                )
            gen_s = time.perf_counter() - began
            gen = out[:, ids["input_ids"].shape[1] :]
            tokens = 0
            parsed = valid = 0
            distinct: set[str] = set()
            example = ""
            for seq in gen:
                n = len(seq)
                hits = (seq == tok.eos_token_id).nonzero()
                if len(hits):
                    n = int(hits[0]) + 1
                tokens += n
                text = tok.decode(seq[:n], skip_special_tokens=True)
                if guided is None:
                    value = extract_json_object(text)
                else:
                    try:
                        value = json.loads(text)
                    except ValueError:
                        value = None
                if isinstance(value, dict):
                    parsed += 1
                    if not schema_errors(value, schema):
                        valid += 1
                        distinct.add(json.dumps(value, sort_keys=True))
                        example = example or json.dumps(value)
            row = {
                "engine": engine,
                "task": task,
                "samples": args.samples,
                "json": parsed / args.samples,
                "schema_valid": valid / args.samples,
                "distinct_valid": len(distinct),
                "mean_tokens": tokens / args.samples,
                "tokens_per_s": tokens / gen_s,
                "gen_s": gen_s,
                "compile_s": compile_s,
                "tokenizer_s": guided.tokenizer_seconds if guided else None,
                "mask_s": procs[0].mask_seconds if procs else None,
                "example": example[:160],
            }
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    print("| engine | task | JSON | schema-valid | distinct valid | mean tokens | tokens/s | mask s | compile s (tokenizer s) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        comp = "–" if r["compile_s"] is None else f"{r['compile_s']:.2f} ({r['tokenizer_s']:.2f})"
        mask = "–" if r["mask_s"] is None else f"{r['mask_s']:.1f}"
        print(
            f"| {r['engine']} | {r['task']} | {r['json']:.2f} | {r['schema_valid']:.2f} | {r['distinct_valid']} | "
            f"{r['mean_tokens']:.1f} | {r['tokens_per_s']:.1f} | {mask} | {comp} |"
        )
    for r in rows:
        print(f"{r['engine']} {r['task']}: {r['example']}")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
