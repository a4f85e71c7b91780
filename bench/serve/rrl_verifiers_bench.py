"""The verifiers arm of `npm run bench -- serve`: one completion per trace, scored by the rrl-jobs
environment's own reward path (``Task.score``, as a verifiers rollout scores)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, Callable, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python" / "environments" / "rrl_jobs"))


def verifiers_runner(url: str, task: str) -> Callable[[str], Optional[float]]:
    """A function scoring one completion of ``task`` through the environment; returns the trace's reward."""
    from rrl_jobs import load_environment
    from rrl_jobs.bridge import score_completion, tasks_of, trace_reward

    env = load_environment(url=url, tasks=[task])
    row: Any = tasks_of(env)[0]

    def run(text: str) -> Optional[float]:
        return trace_reward(asyncio.run(score_completion(row, text)))

    return run
