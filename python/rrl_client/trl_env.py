"""`rrl serve` as a TRL environment: ``GRPOTrainer(environment_factory=RrlEnvironment)``.

TRL 1.13's ``environment_factory`` contract: the class is built with no arguments (one instance per
rollout, reused across batches); ``reset(**row)`` gets the dataset row's columns and may return text
that TRL appends to the row's last user message; every public method but ``reset`` is a tool the
model may call; reward functions get the rollouts' instances as ``environments``.

Here a row names its task (column ``task``) and a rollout is one **episode** of `rrl serve`
(``POST /v1/episodes``, opened by ``reset``): up to ``max_submissions`` jobs of the task. The one
tool, ``submit_job(spec)``, sends the model's job (a full JSON job spec, or a JSON merge patch over
the task's baseline spec) as the episode's next submission; the harness trains it and answers with
what a practitioner would see, as one line: the job's status, its failure reason, its cost, its own
validation figure on its training pool and the submissions left — never the hidden score or a
reward, so the model cannot select among its jobs on the hidden evaluation.

:func:`environment_reward`, the reward function, closes each rollout's episode and reads its reward,
which `rrl serve` computes (the Python side never re-implements the rule):

- the mean of the episode's submissions' rewards (``-1`` for a job's own failure: invalid spec,
  error, timeout, ...); an episode that never submitted is paid ``-1`` (as the same prose sent as a
  completion would be);
- ``None`` only for the harness's own failures: every submission unscorable, or no answer at all.
  TRL leaves ``None`` out of the group's baseline and gives the rollout no advantage;
  :class:`rrl_client.grpo_trainer.RrlGRPOTrainer` also masks it out of the loss (no KL, no normaliser share).

The server comes from ``RRL_URL`` (default ``http://127.0.0.1:8377``) and ``RRL_TOKEN``, read when an
instance is made, or from a class made by :func:`rrl_environment` (``rrl_environment(url, token)``).

    from rrl_client.grpo_trainer import RrlGRPOTrainer
    from rrl_client.trl_env import environment_dataset, environment_reward, rrl_environment
    env_cls = rrl_environment("http://127.0.0.1:8377")
    trainer = RrlGRPOTrainer(model=..., reward_funcs=[environment_reward], environment_factory=env_cls,
                             train_dataset=environment_dataset(RrlClient(url), ["cartpole-short"], rows=64), ...)

One job per episode by default (``max_submissions``, 1 to 8); a call past them is answered without a
job. TRL 1.13 runs the tool calls of a batch one rollout after another, so a step waits for its jobs
in turn (a spec trained before is answered from the harness's cache).

:func:`score_one` (one completion through ``POST /v1/jobs``, its reward and :func:`outcome_line`) is
for adapters that pay each completion on its own (the verifiers environment); episodes never show it.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .client import MAX_EPISODE_SUBMISSIONS, RrlClient, RrlError, RrlTimeout, SubmissionFeedback
from .contracts import DEFAULT_URL
from .prompts import prompt_dataset

log = logging.getLogger(__name__)

TOOL_HINT = "\n\nAnswer by calling the submit_job tool once, with that JSON as its spec argument."
"""Appended to a row's prompt by ``reset``: the server's prompts ask for a JSON reply, the episode for a tool call."""

MAX_REASON_CHARS = 300


@dataclass
class Outcome:
    """What one submission came to: the reward (None: unscored), the line the agent reads, the harness's result."""

    reward: float | None
    message: str
    result: dict[str, Any] | None = None


def outcome_line(reward: float | None, result: Mapping[str, Any] | None) -> str:
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


def score_one(client: RrlClient, task: str, text: str, timeout: float | None = None) -> Outcome:
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


@dataclass
class Reply:
    """What one ``submit_job`` call came to: the line the agent reads and the harness's feedback (None when
    the submission got no answer). Never a score or a reward."""

    message: str
    feedback: SubmissionFeedback | None = None


def feedback_line(feedback: Mapping[str, Any]) -> str:
    """The one line the agent reads about one submission, from the harness's feedback only:
    ``succeeded: validation meanReturn 187.2; cost 500 env steps, 1.4 s; 0 submissions left``, or
    ``invalid: <reason>; ...``. ASCII only, no newline; no hidden score and no reward (the feedback has none)."""
    parts = [str(feedback.get("status", "unknown"))]
    if feedback.get("unchanged"):
        parts.append("unchanged: this is the baseline's job, seed aside")
    reason = feedback.get("reason")
    if isinstance(reason, str) and reason:
        parts.append(_clip(reason))
    validation = feedback.get("validation")
    if isinstance(validation, Mapping) and isinstance(validation.get("value"), (int, float)):
        parts.append(f"validation {validation.get('name', 'value')} {float(validation['value']):.4g}")
    cost = _cost_text(feedback.get("cost"))
    if cost:
        parts.append(f"cost {cost}")
    left = feedback.get("submissionsLeft")
    if isinstance(left, int):
        parts.append(f"{left} submission{'' if left == 1 else 's'} left")
    line = parts[0] + ": " + "; ".join(parts[1:]) if len(parts) > 1 else parts[0]
    return line.encode("ascii", "replace").decode("ascii")


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 3] + "..."


def _cost_text(cost: Any) -> str:
    if not isinstance(cost, Mapping):
        return ""
    parts = []
    for key, unit in (("envSteps", "env steps"), ("examples", "examples")):
        if isinstance(cost.get(key), int) and cost[key] > 0:  # a control job reports 0 examples, a supervised one 0 env steps
            parts.append(f"{cost[key]} {unit}")
    if isinstance(cost.get("wallSeconds"), (int, float)):
        parts.append(f"{float(cost['wallSeconds']):.1f} s")
    return ", ".join(parts)


class JobEpisode:
    """One episode of one task: ``reset(task=...)``, then the ``submit_job`` tool; the reward is read by
    closing the episode (:func:`environment_reward`). Subclasses say how the episode reaches the harness
    (:meth:`_start`, :meth:`_submit`, :meth:`_close`) and where the task's prompt comes from (:meth:`_task_prompt`).

    Public state, for reward functions and logs (attributes, not methods: TRL makes every public
    method a tool): ``task``, ``submitted`` (the number of jobs sent this episode), ``feedback`` (the
    harness's feedback on the last job), ``message`` (the last line the agent read), ``reward`` (None
    until the episode is closed, then its reward)."""

    max_submissions: ClassVar[int] = 1
    """Jobs one episode may send (1 to 8); a later call is answered without a job."""
    prompt_form: ClassVar[str] = "patch"
    """The form of the task prompt that ``reset`` returns for a row without a ``prompt`` column."""

    def __init__(self) -> None:
        self.task: str | None = None
        self.reward: float | None = None
        self.submitted = 0
        self.feedback: SubmissionFeedback | None = None
        self.message: str | None = None
        self._settled = False

    def reset(self, task: str | None = None, prompt: Any = None, **row: Any) -> str | None:
        """Start an episode of ``task`` (the row's ``task`` column). Returns the text TRL appends to the
        row's last user message: the hint to answer with the tool when the row has a prompt, else the
        task's own prompt and the hint."""
        if not isinstance(task, str) or not task:
            raise ValueError(f"reset: each row needs a 'task' column with the task id, got {task!r}")
        if self.task is not None and not self._settled:
            self._close_reward()  # an episode nobody read is settled, not left open on the server
        self.task = task
        self.reward = None
        self.submitted = 0
        self.feedback = None
        self.message = None
        self._settled = False
        self._start(task)
        if prompt:
            return TOOL_HINT
        return self._task_prompt(task) + TOOL_HINT

    def submit_job(self, spec: str) -> str:
        """Submit a training job for the task: the harness trains it and answers with what a practitioner
        would see of it (not the hidden evaluation it is rewarded on).

        Args:
            spec: The job as JSON text: a JSON merge patch over the task's current job naming only the fields to change, or a full job spec.

        Returns:
            One line: the job's status (succeeded, invalid or failed), the reason when it did not succeed, its own validation figure, its cost and the submissions left.
        """
        if self.task is None:
            return "not submitted: no task (the episode was not reset)"
        if self._settled:
            return "not submitted: the episode is over"
        if self.submitted >= self.max_submissions:
            return f"not submitted: this episode has sent its {self.max_submissions} job{'' if self.max_submissions == 1 else 's'}"
        self.submitted += 1
        reply = self._submit(self.task, spec_text(spec))
        self.feedback = reply.feedback
        self.message = reply.message
        return reply.message

    def _close_reward(self) -> float | None:
        """Closes the episode (once) and returns its reward, the harness's (None: its own failure). Private:
        TRL would make a public method a tool."""
        if self.task is None:
            return None
        if not self._settled:
            self._settled = True
            try:
                self.reward = self._close(self.task)
            except Exception as err:  # noqa: BLE001  (the reward function must not crash a training step: no answer is no signal)
                log.warning("could not close the episode of %s: %s", self.task, err)
                self.reward = None
        return self.reward

    # -- what a subclass provides -----------------------------------------------------------

    def _start(self, task: str) -> None:
        """Called by ``reset`` once the state is cleared: open the episode."""

    def _task_prompt(self, task: str) -> str:
        raise NotImplementedError

    def _submit(self, task: str, text: str) -> Reply:
        raise NotImplementedError

    def _close(self, task: str) -> float | None:
        """Close the episode and return its reward."""
        raise NotImplementedError


_prompts: dict[tuple[str, str | None, str, str], str] = {}


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

    url: ClassVar[str | None] = None
    token: ClassVar[str | None] = None
    timeout: ClassVar[float] = 1800.0
    """Seconds to wait for a job's reward; past it the reward is None. Keep it well above the tasks' job
    time limits and the queue's wait: a job the agent made slow must get its real reward, not None."""

    def __init__(self) -> None:
        super().__init__()
        url = self.url or os.environ.get("RRL_URL") or DEFAULT_URL
        token = self.token or os.environ.get("RRL_TOKEN") or None
        self._client = RrlClient(url, token, timeout=self.timeout)

        self._episode: int | None = None

    def _task_prompt(self, task: str) -> str:
        return prompt_text(self._client, task, self.prompt_form)

    def _start(self, task: str) -> None:
        self._episode = None
        self._open(task)

    def _open(self, task: str) -> int | None:
        """The episode's id on the server, opened now if it is not yet (None: the harness did not answer)."""
        if self._episode is None:
            try:
                opened = self._client.open_episode(task, self.max_submissions, idempotency_key=f"rrl-env-{uuid.uuid4()}")
                self._episode = opened["episode"]
            except RrlError as err:
                log.warning("rrl serve did not open an episode of %s: %s", task, err)
        return self._episode

    def _submit(self, task: str, text: str) -> Reply:
        episode = self._open(task)
        if episode is None:
            return Reply("unscorable: the harness did not open the episode; try again")
        try:
            feedback = self._client.submit_to_episode(episode, text, idempotency_key=f"rrl-sub-{uuid.uuid4()}")
        except RrlError as err:
            why = _clip(str(err))
            if err.status == 409:
                return Reply(f"not submitted: {why}")
            if err.status in CONTENT_REFUSALS:
                return Reply(f"invalid: the harness refused the job ({why}); it is not part of the episode")
            log.warning("rrl serve did not answer a submission of %s: %s", task, err)
            return Reply(f"unscorable: the harness did not answer ({why})")
        return Reply(feedback_line(feedback), feedback)

    def _close(self, task: str) -> float | None:
        episode = self._open(task)  # an episode that never opened is opened and closed: no job submitted
        if episode is None:
            return None
        return self._client.close_episode(episode)["reward"]


def rrl_environment(
    url: str | None = None,
    token: str | None = None,
    *,
    max_submissions: int = 1,
    prompt_form: str = "patch",
    timeout: float = 1800.0,
) -> type[RrlEnvironment]:
    """An :class:`RrlEnvironment` class bound to one server (``url``; None: ``RRL_URL`` at instantiation)
    and settings, to pass as ``GRPOTrainer(environment_factory=...)``."""
    if not 1 <= max_submissions <= MAX_EPISODE_SUBMISSIONS:
        raise ValueError(f"max_submissions must be 1 to {MAX_EPISODE_SUBMISSIONS}")
    attrs = {"url": url, "token": token, "max_submissions": max_submissions, "prompt_form": prompt_form, "timeout": timeout}
    return type("RrlEnvironment", (RrlEnvironment,), attrs)


def environment_reward(environments: Sequence[Any] | None = None, **kwargs: Any) -> list[float | None]:
    """TRL reward function: closes each rollout's episode and reads its reward, the harness's (the mean of
    its submissions' rewards; -1 when it sent none; ``None`` only for the harness's own failures).

    ``GRPOTrainer(reward_funcs=[environment_reward], environment_factory=...)``; works with this module's
    and the OpenEnv adapter's classes, and with any environment object that has a ``reward`` attribute."""
    if environments is None:
        raise ValueError("environment_reward needs GRPOTrainer(environment_factory=...): TRL passes the rollouts' environments")
    return [_reward_of(env) for env in environments]


def _reward_of(env: Any) -> float | None:
    close = getattr(env, "_close_reward", None)
    reward = close() if callable(close) else getattr(env, "reward", None)
    return None if reward is None else float(reward)


def environment_dataset(client: RrlClient, task_ids: Sequence[str], rows: int, form: str = "patch") -> Any:
    """A ``datasets.Dataset`` of ``rows`` rows cycling over the tasks: ``prompt`` (the task's chat messages
    from the server) and ``task``. ``reset`` adds the hint to answer with the tool."""
    return prompt_dataset(client, task_ids, rows, form)[0]


__all__ = [
    "JobEpisode",
    "Outcome",
    "Reply",
    "RrlEnvironment",
    "environment_dataset",
    "environment_reward",
    "feedback_line",
    "outcome_line",
    "rrl_environment",
    "score_one",
]
