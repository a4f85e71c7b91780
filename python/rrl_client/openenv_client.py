"""The client of rrl_client.openenv_server, and a TRL environment that trains through it.

:class:`HarnessEnvClient` is openenv-core's ``EnvClient`` for the server (a WebSocket session each):

    async with HarnessEnvClient("http://127.0.0.1:8378") as env:
        first = await env.reset(task="cartpole-short")       # first.observation.text: the task's prompt
        result = await env.step(JobAction(spec='{"seed": 2}'))
        result.observation.text        # the feedback line; with one job allowed the step is done:
        result.reward, result.done     # the episode's reward (with more allowed: JobAction(finish=True))

(``HarnessEnvClient(url).sync()`` for plain calls; ``token=`` when the server has a token of its
own). :func:`openenv_environment` makes a TRL ``environment_factory`` class with the same tool as
rrl_client.trl_env's (``submit_job(spec)``, answered with feedback only) that goes through the
OpenEnv server, one session per rollout; ``rrl_client.trl_env.environment_reward`` finishes each
rollout's episode and reads its reward. The server's address comes from the factory's argument or
``RRL_OPENENV_URL`` (default ``http://127.0.0.1:8378``), its token from the argument or
``RRL_OPENENV_TOKEN``.
"""

from __future__ import annotations

import logging
import os
from typing import Any, ClassVar

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from websockets.asyncio.client import connect as ws_connect

from .client import MAX_EPISODE_SUBMISSIONS
from .openenv_server import JobAction, JobObservation, JobState
from .trl_env import MAX_REASON_CHARS, JobEpisode, Reply

log = logging.getLogger(__name__)

DEFAULT_OPENENV_URL = "http://127.0.0.1:8378"


class HarnessEnvClient(EnvClient[JobAction, JobObservation, JobState]):  # type: ignore[misc]  # openenv-core ships no type information
    """openenv-core's WebSocket client for rrl_client.openenv_server. A step waits for its job to train
    and be scored, so ``message_timeout_s`` is long by default (30 min). ``token``: the server's own
    bearer token, sent on the WebSocket handshake."""

    def __init__(self, base_url: str, message_timeout_s: float = 1800.0, token: str | None = None, **kwargs: Any) -> None:
        super().__init__(base_url, message_timeout_s=message_timeout_s, **kwargs)
        self._token = token

    async def connect(self) -> HarnessEnvClient:
        """Opens the WebSocket, with the bearer token when there is one (the library's own connect sends no headers)."""
        if self._token is None:
            await super().connect()
            return self
        if getattr(self, "_ws", None) is None:
            try:
                self._ws = await ws_connect(
                    self._ws_url,
                    open_timeout=self._connect_timeout,
                    max_size=self._max_message_size,
                    additional_headers={"Authorization": f"Bearer {self._token}"},
                    proxy=None,
                )
            except Exception as e:
                raise ConnectionError(f"Failed to connect to {self._ws_url}: {e}") from e
        return self

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
    WebSocket session per instance, opened on the first ``reset``); the episode is the server's, and
    ``environment_reward`` finishes it. Make one bound to a server with :func:`openenv_environment`."""

    base_url: ClassVar[str | None] = None
    token: ClassVar[str | None] = None

    def __init__(self) -> None:
        super().__init__()
        self._url = self.base_url or os.environ.get("RRL_OPENENV_URL") or DEFAULT_OPENENV_URL
        self._token = self.token or os.environ.get("RRL_OPENENV_TOKEN") or None
        self._env: Any = None
        self._prompt = ""
        self._done_reward: float | None = None
        self._done = False

    def _session(self) -> Any:
        if self._env is None:
            self._env = HarnessEnvClient(self._url, token=self._token).sync()
            self._env.connect()
        return self._env

    def _drop_session(self) -> None:
        env, self._env = self._env, None
        if env is not None:
            try:
                env.close()
            except Exception:  # noqa: BLE001, S110  (the connection is already gone, however it ended; a new one opens on the next reset)
                pass

    def _start(self, task: str) -> None:
        self._done, self._done_reward = False, None
        try:
            first = self._session().reset(task=task, form=self.prompt_form)
        except Exception:  # noqa: BLE001  (whatever the failure, one retry on a fresh session: the server may have closed an idle one)
            self._drop_session()
            first = self._session().reset(task=task, form=self.prompt_form)
        self._prompt = first.observation.text

    def _task_prompt(self, task: str) -> str:
        return self._prompt

    def _submit(self, task: str, text: str) -> Reply:
        try:
            result = self._session().step(JobAction(spec=text))
        except Exception as err:  # noqa: BLE001  (the environment server, not the job, failed, however: its episode is lost)
            log.warning("the OpenEnv server did not answer a job of %s: %s", task, err)
            self._drop_session()
            detail = " ".join(str(err).split())[:MAX_REASON_CHARS]
            return Reply(f"unscorable: the environment server did not answer ({detail})")
        obs: JobObservation = result.observation
        if result.done:  # the last allowed job closed the episode: keep its reward for environment_reward
            self._done, self._done_reward = True, result.reward
        if obs.status is None:
            return Reply(obs.text)
        feedback = {
            "episode": 0,
            "submission": self.submitted,
            "job": obs.job,
            "status": obs.status,
            "reason": obs.reason,
            "unchanged": obs.unchanged,
            "cost": obs.cost or {},
            "validation": obs.validation,
            "submissionsLeft": obs.submissions_left if obs.submissions_left is not None else 0,
            "next": obs.next_turn or "",
        }
        return Reply(obs.text, feedback)  # type: ignore[arg-type]

    def _close(self, task: str) -> float | None:
        if self._done:
            return self._done_reward
        if self._env is None:  # the session was lost with its episode: nothing to read
            return None
        result = self._session().step(JobAction(finish=True))
        self._done = True
        return None if not result.done else result.reward

    def __del__(self) -> None:
        self._drop_session()


def openenv_environment(
    base_url: str | None = None, *, max_submissions: int = 1, prompt_form: str = "patch", token: str | None = None
) -> type[OpenEnvEnvironment]:
    """An :class:`OpenEnvEnvironment` class bound to one OpenEnv server (None: ``RRL_OPENENV_URL``). Its
    ``max_submissions`` is only what the tool accepts: the server's ``--max-submissions`` bounds the episode."""
    if not 1 <= max_submissions <= MAX_EPISODE_SUBMISSIONS:
        raise ValueError(f"max_submissions must be 1 to {MAX_EPISODE_SUBMISSIONS}")
    attrs = {"base_url": base_url, "token": token, "max_submissions": max_submissions, "prompt_form": prompt_form}
    return type("OpenEnvEnvironment", (OpenEnvEnvironment,), attrs)


__all__ = ["DEFAULT_OPENENV_URL", "HarnessEnvClient", "JobAction", "JobObservation", "JobState", "OpenEnvEnvironment", "openenv_environment"]
