"""The answers of `rrl serve` as the client hands them on: their shapes, and the checks that an answer has
its shape before anything reads it (an ``RrlError`` naming the first field that does not)."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict, cast


class Message(TypedDict):
    """One chat message of a task's prompt."""

    role: str
    content: str


class Score(TypedDict):
    """The hidden evaluation's normalised score of one job and its standard error."""

    normalized: float
    stderr: float


class RewardResult(TypedDict):
    """What the harness did with one completion."""

    status: str
    score: Score | None
    reason: str | None
    job: str | None
    unchanged: NotRequired[bool]
    """True when the completion, applied to the task's baseline, changes nothing but the seed (a no-op patch)."""


class RewardsResponse(TypedDict):
    """The answer to ``POST /v1/rewards``: one reward and one result per completion, in order.

    A reward is ``None`` when the harness could not score its completion (its result's reason says why)."""

    rewards: list[float | None]
    results: list[RewardResult]


class JobsAccepted(TypedDict):
    """The answer to ``POST /v1/jobs``: the request and its job ids, given before any job runs."""

    request: int
    replayed: bool
    status: str
    jobs: list[int]
    links: dict[str, str]


class PromptResponse(TypedDict):
    """``GET /v1/tasks/{id}/prompt``: chat messages and the example spec of the compact and patch forms (else None)."""

    messages: list[Message]
    example: dict[str, Any] | None


class Cost(TypedDict):
    """What a job spent: environment steps (control), examples (supervised), wall-clock seconds; None when not known."""

    envSteps: int | None
    examples: int | None
    wallSeconds: float | None


class Validation(TypedDict):
    """The job's own figure on its training pool (control: the mean return of its last training episodes;
    supervised: its validation metric on its own validation split), never the hidden evaluation."""

    name: str
    value: float


class EpisodeOpened(TypedDict):
    """``POST /v1/episodes``: the new episode."""

    episode: int
    task: str
    maxSubmissions: int
    submitted: int
    status: str


class SubmissionFeedback(TypedDict):
    """``POST /v1/episodes/{id}/submissions``: what a practitioner would see of a finished job. Never a
    hidden score, its uncertainty or a reward."""

    episode: int
    submission: int
    job: int
    status: str
    """``succeeded``, ``invalid``, ``failed`` or ``unscorable`` (the harness's own failure)."""
    reason: str | None
    unchanged: bool
    cost: Cost
    validation: Validation | None
    submissionsLeft: int
    next: str
    """The next round's user turn: this job in one line, then (while jobs are left) the episode's last valid job and the request for a patch."""


class EpisodeState(TypedDict):
    """``GET /v1/episodes/{id}``: the episode, its submissions' feedback and, once closed, its reward."""

    episode: int
    task: str
    maxSubmissions: int
    submitted: int
    status: str
    submissions: list[SubmissionFeedback]
    reward: float | None
    reason: str | None


class EpisodeClosed(TypedDict):
    """``POST /v1/episodes/{id}/close``: the episode's reward (None: no submission could be scored, the
    harness's failure) and why, when that is not plain."""

    episode: int
    reward: float | None
    submitted: int
    reason: str | None


class ConfirmedScore(TypedDict):
    """A spec's score over the harness's confirmation seeds (which are never shown)."""

    normalized: float | None
    """The mean normalised hidden score over the seeds, a failed seed counted as a failure; None when the harness lost every seed."""
    uncertainty: float | None
    complete: bool
    scored: int
    seeds: int
    failed: int
    unscorable: int


class Confirmation(TypedDict):
    """``POST /v1/tasks/{id}/confirmations``: a completion's spec trained again on the harness's confirmation
    seeds, for reports (never a reward). ``confirmed`` is None when the completion holds no valid spec."""

    confirmed: ConfirmedScore | None
    status: str
    """``succeeded`` (every seed scored), ``failed`` (some did not) or ``invalid`` (nothing trained)."""
    reason: str | None


ANSWER_SCHEMAS: dict[str, Any] = {
    "RewardsResponse": RewardsResponse,
    "RewardResult": RewardResult,
    "Score": Score,
    "JobsAccepted": JobsAccepted,
    "PromptResponse": PromptResponse,
    "EpisodeCreated": EpisodeOpened,
    "Feedback": SubmissionFeedback,
    "Feedback.cost": Cost,
    "Feedback.validation": Validation,
    "EpisodeStatus": EpisodeState,
    "EpisodeClosed": EpisodeClosed,
    "ConfirmationResponse": Confirmation,
    "ConfirmationResponse.confirmed": ConfirmedScore,
}
"""Each answer type here by the server's schema it reads (``contracts.ANSWER_FIELDS``, from the OpenAPI document)."""


class RrlError(RuntimeError):
    """A request to `rrl serve` that failed: an HTTP error, a bad answer, or the retry budget spent."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def rewards_response(what: str, body: Any, expected: int | None) -> RewardsResponse:
    """Checks an answer's shape: one reward (a number or None) and one result per completion."""
    if not isinstance(body, dict):
        raise RrlError(f"{what}: expected a JSON object")
    rewards = body.get("rewards")
    results = body.get("results")
    n = len(rewards) if expected is None and isinstance(rewards, list) else expected
    if not isinstance(rewards, list) or len(rewards) != n:
        raise RrlError(f"{what}: expected {n} rewards, got {rewards!r:.200}")
    if not isinstance(results, list) or len(results) != n:
        raise RrlError(f"{what}: expected {n} results")
    if not all(r is None or (isinstance(r, (int, float)) and not isinstance(r, bool)) for r in rewards):
        raise RrlError(f"{what}: a reward is neither a number nor null")
    return {"rewards": [None if r is None else float(r) for r in rewards], "results": cast(list[RewardResult], results)}


def is_kind(value: Any, kind: type) -> bool:
    """``value`` is a ``kind`` (a bool is no number)."""
    return isinstance(value, kind) and not (kind in (int, float) and isinstance(value, bool))


def expect_fields(body: Any, what: str, **fields: type) -> None:
    """Checks that an answer is an object with these fields of these types (RrlError naming the first that is not)."""
    if not isinstance(body, dict):
        raise RrlError(f"{what}: expected a JSON object")
    for name, kind in fields.items():
        if not is_kind(body.get(name), kind):
            raise RrlError(f"{what}: expected {name!r} to be {kind.__name__}, got {body.get(name)!r:.100}")


def reward_value(what: str, value: Any) -> float | None:
    """A reward: a number, or None where the harness could not score (anything else is an RrlError)."""
    if value is None:
        return None
    if not is_kind(value, int) and not is_kind(value, float):
        raise RrlError(f"{what}: a reward is neither a number nor null: {value!r:.100}")
    return float(value)


def submission_feedback(what: str, body: Any) -> SubmissionFeedback:
    """Checks one submission's feedback: its fields and types, and that it carries nothing hidden (a ``score``
    or ``reward`` in it is an error of the server, refused here rather than shown to an agent)."""
    expect_fields(body, what, episode=int, submission=int, job=int, status=str, unchanged=bool, cost=dict, submissionsLeft=int, next=str)
    leaked = sorted({"score", "reward", "rewards", "uncertainty", "stderr", "normalized"} & set(body))
    if leaked:
        raise RrlError(f"{what}: the feedback carries hidden fields ({', '.join(leaked)}); refusing to pass it on")
    validation = body.get("validation")
    if validation is not None:
        expect_fields(validation, f"{what}: validation", name=str)
        if not (is_kind(validation.get("value"), int) or is_kind(validation.get("value"), float)):
            raise RrlError(f"{what}: validation.value is not a number")
    return cast(SubmissionFeedback, body)
