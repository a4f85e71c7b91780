"""The Optuna arm: a TPE study per task over the design space the harness publishes (``space.from_description``).

Each trial's values become a JSON Merge Patch over the baseline, posted as a completion to the same
harness as the model arms; the study is told the job's hidden normalised score (``FAILED_VALUE`` for an
invalid or failed job). Trials go in rounds of ``batch`` (asked together, posted in one request so that
the executor trains them in parallel, then told): the first round is TPE's random start-up, the next
rounds learn from the earlier ones. Seeded: the sampler's seed is the evaluation seed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..client import RrlClient
from .harness import Outcome, post
from .space import SearchSpace

FAILED_VALUE = -1.0
"""What the study is told for a job without a score (a low value; best-of counts it as missing)."""


def optuna_missing() -> str | None:
    """None when optuna imports, else why not."""
    try:
        import optuna  # noqa: F401
    except ImportError as err:
        return f"optuna is not installed ({err}): pip install optuna==5.0.0 (pinned in python/requirements.txt)"
    return None


@dataclass
class Trial:
    """One trial: its values, the patch posted, and what the harness said."""

    values: dict[str, Any]
    patch: dict[str, Any]
    outcome: Outcome

    def as_json(self) -> dict[str, Any]:
        return {"values": self.values, "patch": self.patch, **self.outcome.as_json()}


@dataclass
class StudyResult:
    trials: list[Trial] = field(default_factory=list)

    @property
    def outcomes(self) -> list[Outcome]:
        return [t.outcome for t in self.trials]


def _suggest(trial: Any, space: SearchSpace) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for p in space.params:
        if p.kind == "float":
            values[p.name] = trial.suggest_float(p.name, p.low, p.high, log=p.log)
        elif p.kind == "int":
            values[p.name] = trial.suggest_int(p.name, int(p.low), int(p.high), log=p.log)
        else:
            values[p.name] = trial.suggest_categorical(p.name, list(p.choices))
    return values


def run_study(client: RrlClient, task: str, space: SearchSpace, trials: int, seed: int, batch: int = 4) -> StudyResult:
    """``trials`` trials of a seeded TPE study on ``task``, in rounds of ``batch``; every job a real one."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=max(1, min(batch, trials)))
    study = optuna.create_study(direction="maximize", sampler=sampler, study_name=f"{task}-seed-{seed}")
    result = StudyResult()
    while len(result.trials) < trials:
        asked = [study.ask() for _ in range(min(batch, trials - len(result.trials)))]
        values = [_suggest(t, space) for t in asked]
        patches = [space.to_patch(v) for v in values]
        outcomes = post(client, task, [json.dumps(p) for p in patches])
        for t, v, p, o in zip(asked, values, patches, outcomes):
            study.tell(t, o.normalized if o.normalized is not None else FAILED_VALUE)
            result.trials.append(Trial(v, p, o))
    return result
