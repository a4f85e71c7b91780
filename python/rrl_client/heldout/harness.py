"""Posting completions to `rrl serve` and reading back what the hidden evaluation said.

Every posted completion is a real job. The evaluation reads ``score.normalized`` (the hidden
normalised score), never the reward: the reward carries the bonus against the best so far, so a
later post of the same spec can be paid differently. A completion that is ``invalid`` or whose job
``failed`` has no score: it is missing from every best-of, and counts against the valid share.

Best of N is not the largest of N single scores (seeds of one spec alone make that look good: best of
5 0.535 where their mean is 0.169). It is the **confirmed** score of the completion a practitioner
would keep: the one with the best single score among the first N, trained again on the harness's
confirmation seeds (``POST /v1/tasks/{id}/confirmations``, which never reveals them), every seed
counted under the harness's confirmation rule. Only the pick is confirmed, not each of the N (that
would train 5 jobs per sample; the pick costs 5 jobs per N, fewer when two N pick the same).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..client import RrlClient

NOT_SCORED = ("invalid", "failed", "pending")


@dataclass(frozen=True)
class Outcome:
    """One completion's result: its status, hidden normalised score (None when not scored), and more."""

    status: str
    normalized: float | None
    unchanged: bool | None = None
    job: str | None = None
    reason: str | None = None

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


def pick(outcomes: Sequence[Outcome], n: int) -> int | None:
    """The index of the best single score among the first ``n`` outcomes (the first on a tie); None when none was scored."""
    scored = [(o.normalized, -i) for i, o in enumerate(outcomes[:n]) if o.normalized is not None]
    return -max(scored)[1] if scored else None


class Confirmed:
    """Confirmed scores of one server's completions, each (task, completion) asked once: the mean normalised
    score over the harness's confirmation seeds (None when the harness could not give one)."""

    def __init__(self, client: RrlClient) -> None:
        self._client = client
        self._known: dict[tuple[str, str], float | None] = {}
        self.asked = 0
        """Confirmations requested from the server (for the report's cost)."""

    def __call__(self, task: str, completion: str) -> float | None:
        key = (task, completion)
        if key not in self._known:
            self.asked += 1
            confirmed = self._client.confirm(task, completion)["confirmed"]
            self._known[key] = None if confirmed is None else confirmed["normalized"]
        return self._known[key]


def best_of(outcomes: Sequence[Outcome], texts: Sequence[str], n: int, confirmed: Callable[[str], float | None]) -> tuple[float | None, int | None]:
    """Best of the first ``n``: the confirmed score of the completion with the best single score among
    them, and its index; (None, None) when none was scored."""
    i = pick(outcomes, n)
    return (None, None) if i is None else (confirmed(texts[i]), i)


def valid_share(outcomes: Sequence[Outcome]) -> float | None:
    """The share of outcomes that were scored (None for none)."""
    return sum(o.valid for o in outcomes) / len(outcomes) if outcomes else None
