"""Write verl's RL data (parquet) from `rrl serve`: one row per task and repeat.

    python -m rrl_client.verl_data --url http://127.0.0.1:8377 --out data/rrl-train.parquet --repeat 64

Columns follow verl's convention: ``data_source`` ("rrl"), ``prompt`` (the chat messages from
``/v1/tasks/{id}/prompt``), ``ability``, ``reward_model`` (``{"style": "rule", "ground_truth": TASK}``)
and ``extra_info`` (``{"task": TASK, "index": i}``); the reward module reads the task id from them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from .client import RrlClient
from .contracts import DEFAULT_URL
from .prompts import prompt_rows


def rows(client: RrlClient, task_ids: Sequence[str], repeat: int) -> list[dict[str, Any]]:
    """The rows for ``task_ids``, each task ``repeat`` times, interleaved (the prompt rows in verl's columns)."""
    prompts, _ = prompt_rows(client, task_ids, repeat * len(task_ids))
    return [
        {
            "data_source": "rrl",
            "prompt": [dict(m) for m in row["prompt"]],
            "ability": "job-design",
            "reward_model": {"style": "rule", "ground_truth": row["task"]},
            "extra_info": {"task": row["task"], "index": i},
        }
        for i, row in enumerate(prompts)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Write the parquet file."""
    p = argparse.ArgumentParser(prog="python -m rrl_client.verl_data", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", default=os.environ.get("RRL_URL", DEFAULT_URL))
    p.add_argument("--token-env", default="RRL_TOKEN")
    p.add_argument("--tasks", default="", help="comma-separated task ids (default: the train split)")
    p.add_argument("--split", default="train", help="split to take when --tasks is empty")
    p.add_argument("--repeat", type=int, default=64)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    client = RrlClient(a.url, os.environ.get(a.token_env) or None)
    task_ids = [t for t in a.tasks.split(",") if t] or [t["id"] for t in client.tasks() if t.get("split") == a.split]
    if not task_ids:
        print(f"no tasks of split {a.split!r}", file=sys.stderr)
        return 2
    from datasets import Dataset

    Dataset.from_list(rows(client, task_ids, a.repeat)).to_parquet(a.out)
    print(f"{a.out}: {len(task_ids) * a.repeat} rows over {len(task_ids)} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
