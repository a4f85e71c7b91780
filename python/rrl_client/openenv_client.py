"""The client of rrl_client.openenv_server, and a TRL environment that trains through it.

:class:`HarnessEnvClient` is openenv-core's ``EnvClient`` for the server (a WebSocket session each):

    async with HarnessEnvClient("http://127.0.0.1:8378") as env:
        first = await env.reset(task="cartpole-short")       # first.observation.text: the task's prompt
        result = await env.step(JobAction(spec='{"seed": 2}'))
        result.reward, result.done, result.observation.text   # the harness's reward and its one line

(``HarnessEnvClient(url).sync()`` for plain calls). :func:`openenv_environment` makes a TRL
``environment_factory`` class with the same tool as rrl_client.trl_env's (``submit_job(spec)``) that
goes through the OpenEnv server, one session per rollout; read its rewards with
``rrl_client.trl_env.environment_reward``. The server's address comes from the factory's argument
or ``RRL_OPENENV_URL`` (default ``http://127.0.0.1:8378``).
"""

from __future__ import annotations

import logging
import os
from typing import Any, ClassVar, Optional

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from .openenv_server import JobAction, JobObservation, JobState
from .trl_env import MAX_REASON_CHARS, JobEpisode, Outcome

log = logging.getLogger(__name__)

DEFAULT_OPENENV_URL = "http://127.0.0.1:8378"


class HarnessEnvClient(EnvClient[JobAction, JobObservation, JobState]):  # type: ignore[misc]  # openenv-core ships no type information
    """openenv-core's WebSocket client for rrl_client.openenv_server. A step waits for its job to train
    and be scored, so ``message_timeout_s`` is long by default (30 min)."""

    def __init__(self, base_url: str, message_timeout_s: float = 1800.0, **kwargs: Any) -> None:
        super().__init__(base_url, message_timeout_s=message_timeout_s, **kwargs)

    def _step_payload(self, action: JobAction) -> dict[str, Any]:
        payload: dict[str, Any] = action.model_dump(exclude={"metadata"}, exclude_none=True)
        return payload

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[JobObservation]:
        reward = payload.get("reward")
        done = bool(payload.get("done", False))
        observation = JobObservation(**payload.get("observation", {}), reward=reward, done=done)
        return StepResult(observation=observation, reward=None if reward is None else float(reward), done=done)

    def _parse_state(self, payload: dict[str, Any]) -> JobState:
        return JobState(**payload)


class OpenEnvEnvironment(JobEpisode):
    """A TRL ``environment_factory`` class whose ``submit_job`` goes through the OpenEnv server (one
    WebSocket session per instance, opened on the first ``reset``). Make one bound to a server with
    :func:`openenv_environment`."""

    base_url: ClassVar[Optional[str]] = None

    def __init__(self) -> None:
        super().__init__()
        self._url = self.base_url or os.environ.get("RRL_OPENENV_URL") or DEFAULT_OPENENV_URL
        self._env: Any = None
        self._prompt = ""

    def _session(self) -> Any:
        if self._env is None:
            self._env = HarnessEnvClient(self._url).sync()
            self._env.connect()
        return self._env

    def _drop_session(self) -> None:
        env, self._env = self._env, None
        if env is not None:
            try:
                env.close()
            except Exception:  # the connection is already gone; a new one opens on the next reset
                pass

    def _start(self, task: str) -> None:
        try:
            first = self._session().reset(task=task, form=self.prompt_form)
        except Exception:
            self._drop_session()  # one retry on a fresh session (the server may have closed an idle one)
            first = self._session().reset(task=task, form=self.prompt_form)
        self._prompt = first.observation.text

    def _task_prompt(self, task: str) -> str:
        return self._prompt

    def _submit(self, task: str, text: str) -> Outcome:
        try:
            result = self._session().step(JobAction(spec=text))
        except Exception as err:  # the environment server, not the job, failed: nothing to score
            log.warning("the OpenEnv server did not score a job of %s: %s", task, err)
            self._drop_session()
            detail = " ".join(str(err).split())[:MAX_REASON_CHARS]
            return Outcome(None, f"unscorable: the environment server did not answer ({detail}); reward none (not scored)")
        obs: JobObservation = result.observation
        found = {"status": obs.status, "score": obs.score, "reason": obs.reason, "job": obs.job, "unchanged": obs.unchanged}
        return Outcome(result.reward, obs.text, found if obs.status is not None else None)

    def __del__(self) -> None:
        self._drop_session()


def openenv_environment(base_url: Optional[str] = None, *, max_submissions: int = 1, prompt_form: str = "patch") -> type[OpenEnvEnvironment]:
    """An :class:`OpenEnvEnvironment` class bound to one OpenEnv server (None: ``RRL_OPENENV_URL``)."""
    if max_submissions < 1:
        raise ValueError("max_submissions must be at least 1")
    attrs = {"base_url": base_url, "max_submissions": max_submissions, "prompt_form": prompt_form}
    return type("OpenEnvEnvironment", (OpenEnvEnvironment,), attrs)


__all__ = ["DEFAULT_OPENENV_URL", "HarnessEnvClient", "JobAction", "JobObservation", "JobState", "OpenEnvEnvironment", "openenv_environment"]
