"""Posting completions to `rrl serve` and reading back what the hidden evaluation said.

Every posted completion is a real job. The evaluation reads ``score.normalized`` (the hidden
normalised score), never the reward: the reward carries the bonus against the best so far, so a
later post of the same spec can be paid differently. A completion that is ``invalid`` or whose job
``failed`` has no score: it is missing from every best-of, and counts against the valid share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ..client import RrlClient

NOT_SCORED = ("invalid", "failed", "pending")


@dataclass(frozen=True)
class Outcome:
    """One completion's result: its status, hidden normalised score (None when not scored), and more."""

    status: str
    normalized: Optional[float]
    unchanged: Optional[bool] = None
    job: Optional[str] = None
    reason: Optional[str] = None

    @property
    def valid(self) -> bool:
        return self.normalized is not None

    def as_json(self) -> dict[str, Any]:
        return {"status": self.status, "normalized": self.normalized, "unchanged": self.unchanged, "job": self.job, "reason": self.reason}


def outcome(result: Any) -> Outcome:
    """An ``Outcome`` from one entry of ``results`` of ``POST /v1/rewards``."""
    r = result if isinstance(result, dict) else {}
    status = str(r.get("status", "invalid"))
    score = r.get("score")
    norm = score.get("normalized") if isinstance(score, dict) else None
    ok = status not in NOT_SCORED and isinstance(norm, (int, float)) and not isinstance(norm, bool) and math.isfinite(norm)
    unchanged = r.get("unchanged")
    job = r.get("job")
    reason = r.get("reason")
    return Outcome(
        status=status,
        normalized=float(norm) if ok and norm is not None else None,
        unchanged=unchanged if isinstance(unchanged, bool) else None,
        job=None if job is None else str(job),
        reason=None if reason is None else str(reason)[:300],
    )


def post(client: RrlClient, task: str, completions: Sequence[str]) -> list[Outcome]:
    """Score ``completions`` for ``task`` in one request; one outcome each, in order."""
    if not completions:
        return []
    answer = client.rewards(task, list(completions))
    return [outcome(r) for r in answer["results"]]


def best_of(outcomes: Sequence[Outcome], n: int) -> Optional[float]:
    """The best hidden score among the first ``n`` outcomes that were scored; None when none was."""
    xs = [o.normalized for o in outcomes[:n] if o.normalized is not None]
    return max(xs) if xs else None


def valid_share(outcomes: Sequence[Outcome]) -> Optional[float]:
    """The share of outcomes that were scored (None for none)."""
    return sum(o.valid for o in outcomes) / len(outcomes) if outcomes else None
