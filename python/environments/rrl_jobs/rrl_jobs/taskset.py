"""rrl-jobs: the recursive-rl harness (`rrl serve`) as a verifiers v1 taskset.

One task per harness task: its prompt is ``GET /v1/tasks/{id}/prompt?form=...`` (the brief that asks
for a training job, as a JSON spec or a JSON merge patch over the task's baseline spec). With
``rounds = 1`` (the default) the model answers once (single turn); the reward posts that answer to the
harness, which trains the job, scores it on its hidden evaluation and answers with the outer reward.
With ``rounds = K > 1`` the taskset's own env (:class:`rrl_jobs.env.RrlJobsEnv`) plays an episode of up
to K jobs over the harness's episode resource and the reward is the episode's (see there).

- a reward (a number): returned, so the trace's reward is it; the job's status, reason, id, score,
  patch and ``unchanged`` go to ``trace.info["rrl"]``. A job's own failure (invalid spec, its own
  error, timeout, out of memory, NaN) is -1 with its reason there, as in `rrl serve`.
- no reward (``null``, reason ``unscorable: ...``, the harness could not score for its own reasons), a
  harness that cannot be reached or a request that fails: the reward raises :class:`RrlUnscorable`
  (or the client's error). verifiers records a raising reward as the trace's error: the reward stays
  ``None`` ("scoring didn't run"), the trace is not ok, and a trainer drops it (prime-rl keeps no
  failed trace). It is never turned into a -1.

Loaded by id like any v1 taskset (``vf.load_taskset(vf.TasksetConfig(id="rrl-jobs", ...))``, prime-rl's
``[...env.taskset] id = "rrl-jobs"``) or with :func:`load_environment`.
"""

from __future__ import annotations

import asyncio
import os
import threading
from typing import Any, Literal, cast

import verifiers.v1 as vf
from pydantic import Field
from verifiers.v1.types import content_text

from rrl_client.client import MAX_EPISODE_SUBMISSIONS, RewardResult, RrlClient
from rrl_client.contracts import DEFAULT_URL
from rrl_client.trl_env import score_one

TASKSET_ID = "rrl-jobs"
REWARD = "outer_reward"
"""The name of the reward on the trace (``trace.rewards["outer_reward"]``)."""


class RrlUnscorable(RuntimeError):
    """The harness answered without a reward for a completion (``null``: it could not score it for its own reasons)."""


class RrlTaskConfig(vf.TaskConfig):
    """Where the rewards come from: used by every task while scoring (``[env.taskset.task]``), and by the taskset to load the prompts."""

    url: str = Field(default_factory=lambda: os.environ.get("RRL_URL") or DEFAULT_URL)
    """The `rrl serve` to post completions to (default ``$RRL_URL``, else loopback:8377)."""
    token_env: str = "RRL_TOKEN"
    """The environment variable that holds the server's bearer token, if it has one (the token stays out of configs and traces)."""
    timeout: float = 1800.0
    """Seconds to wait for a job's reward (training and scoring included); past it the reward is None. Keep it
    well above the tasks' job time limits: a job the model made slow must get its real reward."""
    rounds: int = Field(default=1, ge=1, le=MAX_EPISODE_SUBMISSIONS)
    """Jobs per episode. 1: single turn, the one reply is one job. K > 1 (at most 8, the harness's limit): the
    multi-turn form, which runs in the taskset's own env (``RrlJobsEnv``): each reply is submitted to one harness
    episode, the next user turn is the harness's feedback text, up to K replies; the reward is the episode's."""


class RrlJobData(vf.TaskData):
    """One harness task: its prompt (``system_prompt`` + ``prompt``), ``id`` the harness task id."""

    family: str = ""
    split: str = ""
    form: str = "patch"
    example: dict[str, Any] | None = None
    """The example answer the compact and patch prompts show (None for the full form)."""


_clients: dict[tuple[str, str | None, float], RrlClient] = {}
_clients_lock = threading.Lock()


def client_for(config: RrlTaskConfig) -> RrlClient:
    """One client per (url, token, timeout), shared by the tasks of a process."""
    token = os.environ.get(config.token_env) or None
    key = (str(config.url), token, float(config.timeout))
    with _clients_lock:
        if key not in _clients:
            _clients[key] = RrlClient(key[0], token, timeout=key[2], max_wait=key[2])
        return _clients[key]


def _record(trace: Any, reward: float | None, result: RewardResult) -> None:
    info = {k: result.get(k) for k in ("status", "reason", "job", "score", "patch", "unchanged")}
    info["reward"] = reward
    trace.info["rrl"] = info
    trace.record_metric("rrl_invalid", float(result.get("status") == "invalid"))
    trace.record_metric("rrl_unchanged", float(bool(result.get("unchanged"))))
    score = result.get("score")
    if isinstance(score, dict) and isinstance(score.get("normalized"), (int, float)):
        trace.record_metric("rrl_score", float(score["normalized"]))


class RrlJobTask(vf.Task[RrlJobData, vf.State, RrlTaskConfig]):
    """Single turn (``rounds = 1``): the harness's outer reward for the one answer. Multi-turn (``rounds > 1``): the
    reward of the harness episode ``RrlJobsEnv`` played, read when it is closed."""

    @property
    def key(self) -> str:
        # durable across runs (idx is run-local): the harness task and the prompt form
        return f"{self.data.id}/{self.data.form}"

    @vf.stop
    async def single_turn(self, trace: vf.Trace) -> bool:
        """Ends a one-round task after its first reply."""
        return cast(bool, self.config.rounds == 1 and trace.num_turns >= 1)

    @vf.stop
    async def last_round(self, trace: vf.Trace) -> bool:
        """Ends a multi-round task after its K-th reply (the env stops feeding turns there too; this is the backstop)."""
        return cast(bool, self.config.rounds > 1 and trace.num_turns >= self.config.rounds)

    @vf.reward(weight=1.0)
    async def outer_reward(self, trace: vf.Trace) -> float:
        """Posts the answer to the harness; its outer reward (-1 for the job's own failure). Raises when there is none.

        With ``rounds > 1`` it closes the trace's harness episode instead and returns the episode's reward (the
        server's rule: the mean of its jobs' rewards)."""
        client = client_for(self.config)
        if self.config.rounds > 1:
            return await self._episode_reward(client, trace)
        # The job API (POST /v1/jobs, then its event stream), one idempotency key per answer; a refusal
        # of the completion for what it holds is -1, the harness's own failures come back as None.
        outcome = await asyncio.to_thread(score_one, client, str(self.data.id), str(trace.last_reply), self.config.timeout)
        result = cast(RewardResult, outcome.result or {"status": None, "reason": outcome.message})
        _record(trace, outcome.reward, result)
        if outcome.reward is None:
            raise RrlUnscorable(f"{self.data.id}: {result.get('reason') or outcome.message}")
        return float(outcome.reward)

    async def _episode_reward(self, client: RrlClient, trace: Any) -> float:
        info = trace.info.get("rrl")
        episode = info.get("episode") if isinstance(info, dict) else None
        if episode is None:
            # Only the env holds the conversation open between replies; a trace made elsewhere (the TRL bridge, a plain
            # SingleAgentEnv) has no episode, and scoring its one reply as a K-round episode would be a different game.
            raise RuntimeError(f"{self.data.id}: rounds={self.config.rounds} needs the harness episode RrlJobsEnv opens; this trace has none")
        closed = await asyncio.to_thread(client.close_episode, int(episode))
        submissions = [s for s in info.get("submissions", []) if isinstance(s, dict)]
        info["reward"] = closed["reward"]
        info["reason"] = closed.get("reason")
        count = max(len(submissions), 1)
        trace.record_metric("rrl_rounds", float(closed["submitted"]))
        trace.record_metric("rrl_invalid", sum(s.get("status") == "invalid" for s in submissions) / count)
        trace.record_metric("rrl_unchanged", sum(bool(s.get("unchanged")) for s in submissions) / count)
        if closed["reward"] is None:
            raise RrlUnscorable(f"{self.data.id}: episode {episode}: {closed.get('reason') or 'no reward'}")
        return float(closed["reward"])


class RrlJobsConfig(vf.TasksetConfig):
    """Which harness tasks, and which prompt form (``[env.taskset]``)."""

    task: RrlTaskConfig = Field(default_factory=RrlTaskConfig)
    tasks: list[str] | None = None
    """Task ids, in order; None: every task of ``family`` / ``split``."""
    family: str | None = None
    """Only the tasks of this family."""
    split: str | None = None
    """Only the tasks of this split (``train``, ``held-out``, ``example``); when neither it nor ``tasks`` is given, ``train``."""
    form: Literal["full", "compact", "patch"] = "patch"
    """The prompt form: ``patch`` asks for a JSON merge patch over the baseline spec (about 350 tokens), ``compact`` for the
    edited baseline spec, ``full`` the whole brief."""


def select_tasks(rows: list[dict[str, Any]], tasks: list[str] | None, family: str | None, split: str | None) -> list[dict[str, Any]]:
    """The task rows of ``GET /v1/tasks`` chosen by ids (in their order) and/or family and split; raises when none is left."""
    by_id = {str(r.get("id")): r for r in rows}
    if tasks is not None:
        unknown = [t for t in tasks if t not in by_id]
        if unknown:
            raise ValueError(f"unknown task id(s) {unknown}; the server has {sorted(by_id)}")
        chosen = [by_id[t] for t in tasks]
    else:
        chosen = list(rows)
        if split is None:
            split = "train"
    if family is not None:
        chosen = [r for r in chosen if r.get("family") == family]
    if split is not None:
        chosen = [r for r in chosen if r.get("split") == split]
    if not chosen:
        raise ValueError(f"no task matches tasks={tasks} family={family} split={split}")
    return chosen


class RrlJobsTaskset(vf.Taskset[RrlJobTask, RrlJobsConfig]):
    """The harness's tasks, one row each, with the prompt the server gives for ``form``."""

    def load(self) -> list[RrlJobTask]:
        cfg = self.config
        client = client_for(cfg.task)
        out: list[RrlJobTask] = []
        for i, row in enumerate(select_tasks(client.tasks(), cfg.tasks, cfg.family, cfg.split)):
            task_id = str(row["id"])
            answer = client.prompt_response(task_id, cfg.form)
            messages = answer["messages"]
            system = [m["content"] for m in messages if m["role"] == "system"]
            rest = [m for m in messages if m["role"] != "system"]
            prompt: Any = rest[0]["content"] if len(rest) == 1 and rest[0]["role"] == "user" else [dict(m) for m in rest]
            data = RrlJobData(
                idx=i,
                id=task_id,
                name=task_id,
                prompt=prompt,
                system_prompt="\n\n".join(system) if system else None,
                family=str(row.get("family") or ""),
                split=str(row.get("split") or ""),
                form=cfg.form,
                example=answer["example"],
            )
            out.append(RrlJobTask(data, cfg.task))
        return out


def prompt_messages(data: Any) -> list[dict[str, str]]:
    """A task's prompt as chat messages (``[{"role", "content"}]``): its system prompt, then its prompt."""
    out: list[dict[str, str]] = []
    if data.system_prompt:
        out.append({"role": "system", "content": str(data.system_prompt)})
    if isinstance(data.prompt, str):
        out.append({"role": "user", "content": data.prompt})
    else:
        out.extend({"role": str(m.role), "content": str(content_text(m.content))} for m in data.prompt or [])
    return out


def load_environment(
    url: str | None = None,
    tasks: list[str] | None = None,
    family: str | None = None,
    split: str | None = None,
    form: str = "patch",
    *,
    token_env: str = "RRL_TOKEN",
    timeout: float = 1800.0,
    harness: str = "null",
    runtime: str = "subprocess",
    rounds: int = 1,
) -> Any:
    """The verifiers environment (a ``vf.SingleAgentEnv``) over the harness's tasks.

    Equivalent to ``vf.load_environment(vf.SingleAgentEnvConfig(taskset={"id": "rrl-jobs", ...}))``: the taskset
    ``rrl-jobs`` with ``url`` (default ``$RRL_URL``, else loopback:8377), the tasks chosen by ``tasks`` or
    ``family``/``split``, the prompt ``form``; its agent runs the ``null`` harness (a plain chat loop, no tools)
    in the ``subprocess`` runtime, as prime-rl's single-turn examples do. ``env.taskset`` iterates the rows.
    ``rounds`` > 1 is the multi-turn form (``[env.taskset.task] rounds``); the env is then ``RrlJobsEnv`` either way
    (a ``vf.SingleAgentEnv`` that plays rounds = 1 exactly as its base does).
    """
    task_cfg: dict[str, Any] = {"token_env": token_env, "timeout": timeout, "rounds": rounds}
    if url is not None:
        task_cfg["url"] = url
    config = vf.SingleAgentEnvConfig.model_validate(
        {
            "taskset": {"id": TASKSET_ID, "task": task_cfg, "tasks": tasks, "family": family, "split": split, "form": form},
            "agent": {"harness": {"id": harness}, "runtime": {"type": runtime}},
        }
    )
    return vf.load_environment(config)
