"""`rrl serve` as a TRL environment: ``GRPOTrainer(environment_factory=RrlEnvironment)``.

TRL 1.13's ``environment_factory`` contract: the class is built with no arguments (one instance per
rollout, reused across batches); ``reset(**row)`` gets the dataset row's columns and may return text
that TRL appends to the row's last user message; every public method but ``reset`` is a tool the
model may call; reward functions get the rollouts' instances as ``environments``.

Here a row names its task (column ``task``); the one tool, ``submit_job(spec)``, sends the model's job
(a full JSON job spec, or a JSON merge patch over the task's baseline spec) to the harness, which
trains it, scores it on the hidden evaluation, and answers with one line: status, normalised score,
reason, reward. :func:`environment_reward` is the reward function that reads each rollout's reward:

- the harness's reward for the job (``-1`` for the job's own failure: invalid spec, error, timeout, ...);
- ``None`` when there is nothing to score: the model never called the tool, or the harness could
  not score for its own reasons (a null reward, or no answer at all). TRL leaves ``None`` out of the
  group's baseline and gives the rollout no advantage, as the Open Reward Standard means it.

The server comes from ``RRL_URL`` (default ``http://127.0.0.1:8377``) and ``RRL_TOKEN``, read when an
instance is made, or from a class made by :func:`rrl_environment` (``rrl_environment(url, token)``).

    from rrl_client.trl_env import environment_dataset, environment_reward, rrl_environment
    env_cls = rrl_environment("http://127.0.0.1:8377")
    trainer = GRPOTrainer(model=..., reward_funcs=[environment_reward], environment_factory=env_cls,
                          train_dataset=environment_dataset(RrlClient(url), ["cartpole-short"], rows=64), ...)

One job per episode by default (``max_submissions``): a later call is answered without a job and the
reward stands; with more allowed, the episode's reward is its last scored job's. TRL 1.13 runs the
tool calls of a batch one rollout after another, so a step waits for its jobs in turn (a spec
trained before is answered from the harness's cache).
"""

from __future__ import annotations

import logging
import os
import uuid
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Optional, Sequence

from .client import RrlClient, RrlError, RrlTimeout
from .rewards import DEFAULT_URL

log = logging.getLogger(__name__)

TOOL_HINT = "\n\nAnswer by calling the submit_job tool once, with that JSON as its spec argument."
"""Appended to a row's prompt by ``reset``: the server's prompts ask for a JSON reply, the episode for a tool call."""

MAX_REASON_CHARS = 300


@dataclass
class Outcome:
    """What one submission came to: the reward (None: unscored), the line the agent reads, the harness's result."""

    reward: Optional[float]
    message: str
    result: Optional[dict[str, Any]] = None


def outcome_line(reward: Optional[float], result: Optional[Mapping[str, Any]]) -> str:
    """The one line the agent reads about its job: ``succeeded: score 0.412 +/- 0.031; reward +0.120``,
    ``invalid: <reason>; reward -1``, ``... ; reward none (not scored)``. ASCII only, no newline."""
    status = str(result.get("status", "unknown")) if result else "unknown"
    parts = [status]
    score = result.get("score") if result else None
    if isinstance(score, Mapping) and isinstance(score.get("normalized"), (int, float)):
        spread = score.get("uncertainty", score.get("stderr"))
        text = f"score {float(score['normalized']):.3f}"
        if isinstance(spread, (int, float)):
            text += f" +/- {float(spread):.3f}"
        parts.append(text)
    if result and result.get("unchanged"):
        parts.append("unchanged: this is the baseline's job, seed aside")
    reason = result.get("reason") if result else None
    if isinstance(reason, str) and reason:
        reason = " ".join(reason.split())
        parts.append(reason if len(reason) <= MAX_REASON_CHARS else reason[: MAX_REASON_CHARS - 3] + "...")
    parts.append("reward none (not scored)" if reward is None else f"reward {_fmt_reward(reward)}")
    line = parts[0] + ": " + "; ".join(parts[1:])
    return line.encode("ascii", "replace").decode("ascii")


def _fmt_reward(r: float) -> str:
    return "-1" if r == -1 else "0" if r == 0 else f"{r:+.3f}"


def spec_text(spec: Any) -> str:
    """The tool's argument as completion text: a string as is; an object a model wrote in place of a
    JSON string (``{"spec": {"algorithm": ...}}``) serialised back to JSON."""
    if isinstance(spec, str):
        return spec
    import json

    return json.dumps(spec)


CONTENT_REFUSALS = (400, 413, 415)
"""HTTP statuses the harness refuses a completion with for what it holds (malformed, over the size limit):
the job's own failure, -1, like an invalid spec. Anything else that stops an answer is the harness's: None."""


def score_one(client: RrlClient, task: str, text: str, timeout: Optional[float] = None) -> Outcome:
    """One completion through the harness (``POST /v1/jobs``, then its event stream, under one idempotency
    key so a retry is the same job): its reward and result. ``None`` with the reason when the harness
    could not answer for its own reasons (unreachable, busy past the wait, a null reward, ``timeout``);
    -1 when it refused the completion for what it holds (a body too large or malformed)."""
    try:
        answer = client.score(task, [text], idempotency_key=f"rrl-env-{uuid.uuid4()}", timeout=timeout)
    except RrlError as err:
        why = " ".join(str(err).split())[:MAX_REASON_CHARS]
        if err.status in CONTENT_REFUSALS:
            return Outcome(-1.0, f"invalid: the harness refused the job ({why}); reward -1", {"status": "invalid", "reason": why})
        log.warning("rrl serve did not score a job of %s: %s", task, err)
        return Outcome(None, f"unscorable: the harness did not answer ({why}); reward none (not scored)")
    except RrlTimeout as err:
        log.warning("rrl serve did not score a job of %s in time: %s", task, err)
        return Outcome(None, f"unscorable: {err}; reward none (not scored)")
    reward = answer["rewards"][0]
    result: dict[str, Any] = dict(answer["results"][0])
    value = None if reward is None else float(reward)
    return Outcome(value, outcome_line(value, result), result)


class JobEpisode:
    """One episode of one task: ``reset(task=...)``, then the ``submit_job`` tool. Subclasses say how a
    job reaches the harness (:meth:`_submit`) and where the task's prompt comes from (:meth:`_task_prompt`).

    Public state, for reward functions and logs (attributes, not methods: TRL makes every public
    method a tool): ``task``, ``reward``, ``submitted`` (the number of jobs sent this episode),
    ``result`` (the harness's result of the last job), ``message`` (the last line the agent read)."""

    max_submissions: ClassVar[int] = 1
    """Jobs one episode may send; a later call is answered without a job (the reward stands)."""
    prompt_form: ClassVar[str] = "patch"
    """The form of the task prompt that ``reset`` returns for a row without a ``prompt`` column."""

    def __init__(self) -> None:
        self.task: Optional[str] = None
        self.reward: Optional[float] = None
        self.submitted = 0
        self.result: Optional[dict[str, Any]] = None
        self.message: Optional[str] = None

    def reset(self, task: Optional[str] = None, prompt: Any = None, **row: Any) -> Optional[str]:
        """Start an episode of ``task`` (the row's ``task`` column). Returns the text TRL appends to the
        row's last user message: the hint to answer with the tool when the row has a prompt, else the
        task's own prompt and the hint."""
        if not isinstance(task, str) or not task:
            raise ValueError(f"reset: each row needs a 'task' column with the task id, got {task!r}")
        self.task = task
        self.reward = None
        self.submitted = 0
        self.result = None
        self.message = None
        self._start(task)
        if prompt:
            return TOOL_HINT
        return self._task_prompt(task) + TOOL_HINT

    def submit_job(self, spec: str) -> str:
        """Submit a training job for the task: the harness trains it, scores it on a hidden evaluation and
        answers with the outcome. One job per episode.

        Args:
            spec: The job as JSON text: a JSON merge patch over the task's current job naming only the fields to change, or a full job spec.

        Returns:
            One line: the job's status (succeeded, invalid or failed), its normalised score, the reason when it did not succeed, and the reward.
        """
        if self.task is None:
            return "not submitted: no task (the episode was not reset)"
        if self.submitted >= self.max_submissions:
            return f"not submitted: this episode already sent its job ({self.max_submissions} allowed); the reward stays {'none' if self.reward is None else _fmt_reward(self.reward)}"
        self.submitted += 1
        outcome = self._submit(self.task, spec_text(spec))
        if outcome.reward is not None or self.submitted == 1:
            self.reward = outcome.reward  # the last scored job's; an unscored later one leaves it
        self.result = outcome.result
        self.message = outcome.message
        return outcome.message

    # -- what a subclass provides -----------------------------------------------------------

    def _start(self, task: str) -> None:
        """Called by ``reset`` once the state is cleared (the OpenEnv adapter resets its session here)."""

    def _task_prompt(self, task: str) -> str:
        raise NotImplementedError

    def _submit(self, task: str, text: str) -> Outcome:
        raise NotImplementedError


_prompts: dict[tuple[str, Optional[str], str, str], str] = {}


def prompt_text(client: RrlClient, task: str, form: str) -> str:
    """A task's prompt messages as one text (their contents, a blank line apart), fetched once per process."""
    key = (client.base_url, client.token, task, form)
    if key not in _prompts:
        _prompts[key] = "\n\n".join(m["content"] for m in client.prompt(task, form) if m.get("content"))
    return _prompts[key]


class RrlEnvironment(JobEpisode):
    """A TRL ``environment_factory`` class backed by `rrl serve` (see the module's doc).

    ``url`` / ``token``: the server and its bearer token; None reads ``RRL_URL`` / ``RRL_TOKEN`` when an
    instance is made.
    Make a class with other settings with :func:`rrl_environment`."""

    url: ClassVar[Optional[str]] = None
    token: ClassVar[Optional[str]] = None
    timeout: ClassVar[float] = 1800.0
    """Seconds to wait for a job's reward; past it the reward is None. Keep it well above the tasks' job
    time limits and the queue's wait: a job the agent made slow must get its real reward, not None."""

    def __init__(self) -> None:
        super().__init__()
        url = self.url or os.environ.get("RRL_URL") or DEFAULT_URL
        token = self.token or os.environ.get("RRL_TOKEN") or None
        self._client = RrlClient(url, token, timeout=self.timeout)

    def _task_prompt(self, task: str) -> str:
        return prompt_text(self._client, task, self.prompt_form)

    def _submit(self, task: str, text: str) -> Outcome:
        return score_one(self._client, task, text, timeout=self.timeout)


def rrl_environment(
    url: Optional[str] = None,
    token: Optional[str] = None,
    *,
    max_submissions: int = 1,
    prompt_form: str = "patch",
    timeout: float = 1800.0,
) -> type[RrlEnvironment]:
    """An :class:`RrlEnvironment` class bound to one server (``url``; None: ``RRL_URL`` at instantiation)
    and settings, to pass as ``GRPOTrainer(environment_factory=...)``."""
    if max_submissions < 1:
        raise ValueError("max_submissions must be at least 1")
    attrs = {"url": url, "token": token, "max_submissions": max_submissions, "prompt_form": prompt_form, "timeout": timeout}
    return type("RrlEnvironment", (RrlEnvironment,), attrs)


def environment_reward(environments: Optional[Sequence[Any]] = None, **kwargs: Any) -> list[Optional[float]]:
    """TRL reward function: each rollout's environment reward (``None``: never submitted or unscorable).

    ``GRPOTrainer(reward_funcs=[environment_reward], environment_factory=...)``; works with any
    environment object that has a ``reward`` attribute (this module's and the OpenEnv adapter's)."""
    if environments is None:
        raise ValueError("environment_reward needs GRPOTrainer(environment_factory=...): TRL passes the rollouts' environments")
    return [_reward_of(env) for env in environments]


def _reward_of(env: Any) -> Optional[float]:
    reward = getattr(env, "reward", None)
    return None if reward is None else float(reward)


def environment_dataset(client: RrlClient, task_ids: Sequence[str], rows: int, form: str = "patch") -> Any:
    """A ``datasets.Dataset`` of ``rows`` rows cycling over the tasks: ``prompt`` (the task's chat messages
    from the server) and ``task``. ``reset`` adds the hint to answer with the tool."""
    from datasets import Dataset

    if not task_ids:
        raise ValueError("environment_dataset: no task ids")
    prompts = {t: client.prompt(t, form) for t in task_ids}
    return Dataset.from_list([{"prompt": prompts[task_ids[i % len(task_ids)]], "task": task_ids[i % len(task_ids)]} for i in range(rows)])


__all__ = [
    "JobEpisode",
    "Outcome",
    "RrlEnvironment",
    "environment_dataset",
    "environment_reward",
    "outcome_line",
    "rrl_environment",
    "score_one",
]
