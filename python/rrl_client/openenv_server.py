"""`rrl serve` as an OpenEnv environment: an OpenEnv server (openenv-core 0.3.0) that forwards to it.

    python -m rrl_client.openenv_server --rrl-url http://127.0.0.1:8377 --port 8378 [--max-sessions 64]

An episode is one job of one task:

- ``reset(task=ID[, form=patch|compact|full])``: the observation is the task's prompt (``messages``,
  the chat messages of ``GET /v1/tasks/{id}/prompt``, and ``text``, their contents joined); reward
  None, not done.
- ``step(JobAction(spec=TEXT))``: the completion (a JSON job spec or a JSON merge patch over the
  task's baseline spec, or model text holding one) goes to `rrl serve`, which trains the job, scores it
  on the hidden evaluation and rewards it. The observation carries the harness's one line (``text``,
  as rrl_client.trl_env's tool returns it), ``status``, ``score``, ``reason``, ``job``; ``reward`` is
  the harness's reward (-1 for the job's own failure; None when the harness could not score it), and
  ``done`` once the episode has sent its ``--max-submissions`` jobs (default 1).

Routes are the library's: ``/ws`` (a session per WebSocket, each with its own environment; at most
``--max-sessions`` at once: give at least the trainer's generation batch), ``/reset``, ``/step``,
``/state`` (stateless over HTTP: a fresh environment per call, so an HTTP ``/step`` names its task in
the action), ``/health``, ``/schema``, ``/metadata``, ``/openapi.json``. The client is
:class:`rrl_client.openenv_client.HarnessEnvClient`.

It prints ``listening on http://HOST:PORT`` once ready (``--port 0`` picks a free port).
"""

from __future__ import annotations

import argparse
import functools
import os
import socket
import sys
import uuid
from typing import Any, Optional, Sequence

from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field

from .client import PROMPT_FORMS, RrlClient, RrlError
from .rewards import DEFAULT_URL
from .trl_env import Outcome, score_one


class JobAction(Action):  # type: ignore[misc]  # openenv-core ships no type information
    """One job for the harness: the model's completion."""

    spec: str = Field(description="The model's completion: a JSON job spec, or a JSON merge patch over the task's baseline spec (raw model text holding one is fine)")
    task: Optional[str] = Field(default=None, description="The task id; only needed by the stateless HTTP /step (a WebSocket session has it from reset)")


class JobObservation(Observation):  # type: ignore[misc]
    """The task's prompt (reset) or what the harness said about the job (step); ``reward`` and ``done`` are the base's."""

    task: Optional[str] = Field(default=None, description="The episode's task id")
    text: str = Field(default="", description="reset: the task's prompt as one text; step: the harness's one line (status, score, reason, reward)")
    messages: list[dict[str, str]] = Field(default_factory=list, description="reset: the task's prompt as chat messages")
    status: Optional[str] = Field(default=None, description="step: succeeded, invalid or failed (None: not scored)")
    score: Optional[dict[str, float]] = Field(default=None, description="step: the hidden evaluation's normalised score, its stderr and uncertainty")
    reason: Optional[str] = Field(default=None, description="step: why the job was invalid, failed or not scored")
    job: Optional[str] = Field(default=None, description="step: the harness's job id")
    unchanged: bool = Field(default=False, description="step: the job is the task's baseline job, seed aside")


class JobState(State):  # type: ignore[misc]
    """The episode: its task, the jobs sent and the last reward."""

    task: Optional[str] = None
    submitted: int = 0
    reward: Optional[float] = None
    status: Optional[str] = None


class HarnessEnvironment(Environment[JobAction, JobObservation, JobState]):  # type: ignore[misc]
    """One session's environment: forwards reset and step to `rrl serve` through ``client``."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # no shared mutable state; the harness serves concurrent requests

    def __init__(self, client: RrlClient, form: str = "patch", max_submissions: int = 1) -> None:
        super().__init__()
        self._client = client
        self._form = form
        self._max_submissions = max_submissions
        self._state = JobState(episode_id=str(uuid.uuid4()))

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, task: Optional[str] = None,
              form: Optional[str] = None, **kwargs: Any) -> JobObservation:
        """Start an episode of ``task``; the observation is its prompt (``form``: patch, compact or full)."""
        if not task:
            raise ValueError("reset needs task=ID (one of GET /v1/tasks of rrl serve)")
        form = form or self._form
        if form not in PROMPT_FORMS:
            raise ValueError(f"form: expected one of {', '.join(PROMPT_FORMS)}, got {form!r}")
        messages = self._client.prompt(task, form)
        self._state = JobState(episode_id=episode_id or str(uuid.uuid4()), task=task)
        return JobObservation(task=task, messages=[dict(m) for m in messages],
                              text="\n\n".join(m["content"] for m in messages if m.get("content")), reward=None, done=False)

    def step(self, action: JobAction, timeout_s: Optional[float] = None, **kwargs: Any) -> JobObservation:
        """Send the job; the observation is what the harness said, with its reward."""
        task = action.task or self._state.task
        if not task:
            return JobObservation(text="not submitted: no task (reset(task=...) first, or name it in the action)", done=True)
        if self._state.submitted >= self._max_submissions:
            return JobObservation(task=task, done=True, reward=None,
                                  text=f"not submitted: this episode already sent its job ({self._max_submissions} allowed)")
        self._state.task = task
        self._state.submitted += 1
        self._state.step_count += 1
        outcome: Outcome = score_one(self._client, task, action.spec, timeout=self._client.timeout)
        result = outcome.result or {}
        self._state.reward = outcome.reward
        self._state.status = result.get("status")
        score = result.get("score")
        return JobObservation(
            task=task,
            text=outcome.message,
            status=result.get("status"),
            score={k: float(v) for k, v in score.items() if isinstance(v, (int, float))} if isinstance(score, dict) else None,
            reason=result.get("reason") if result else outcome.message,
            job=None if result.get("job") is None else str(result["job"]),
            unchanged=bool(result.get("unchanged")),
            reward=outcome.reward,
            done=self._state.submitted >= self._max_submissions,
        )

    @property
    def state(self) -> JobState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="rrl-harness",
            description="recursive-rl's harness as an environment: reset(task) gives the task's prompt; step(spec) trains the "
                        "job, scores it on a hidden evaluation and returns the reward (-1 for the job's own failure, None unscored)",
            version="1.0.0",
        )


def create_app(client: RrlClient, *, max_sessions: int = 64, form: str = "patch", max_submissions: int = 1,
               session_timeout: Optional[float] = None) -> Any:
    """The FastAPI app of the OpenEnv server (the library's routes), forwarding to ``client``'s `rrl serve`."""
    from openenv.core.env_server.types import ConcurrencyConfig

    factory = functools.partial(HarnessEnvironment, client=client, form=form, max_submissions=max_submissions)
    config = ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=session_timeout)
    return create_fastapi_app(factory, JobAction, JobObservation, concurrency_config=config)


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m rrl_client.openenv_server", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rrl-url", default=os.environ.get("RRL_URL", DEFAULT_URL), help="rrl serve's address (env RRL_URL)")
    p.add_argument("--token-env", default="RRL_TOKEN", help="environment variable holding rrl serve's bearer token, if any")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8378, help="0: a free port")
    p.add_argument("--max-sessions", type=int, default=64, help="concurrent WebSocket sessions (environments) allowed; at least the trainer's generation batch")
    p.add_argument("--session-timeout", type=float, default=None, help="seconds after which an idle session is closed (default: never)")
    p.add_argument("--max-submissions", type=int, default=1, help="jobs one episode may send (the episode is done after them)")
    p.add_argument("--form", default="patch", choices=PROMPT_FORMS, help="the prompt form reset returns by default")
    p.add_argument("--job-timeout", type=float, default=1800.0, help="seconds one job may take to answer")
    args = p.parse_args(argv)
    if args.max_sessions < 1 or args.max_submissions < 1:
        p.error("--max-sessions and --max-submissions must be at least 1")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    import uvicorn

    args = parse_args(argv)
    client = RrlClient(args.rrl_url, os.environ.get(args.token_env) or None, timeout=args.job_timeout)
    try:
        tasks = client.tasks()
    except RrlError as err:
        print(f"openenv_server: rrl serve at {args.rrl_url} does not answer: {err}", file=sys.stderr)
        return 1
    app = create_app(client, max_sessions=args.max_sessions, form=args.form, max_submissions=args.max_submissions,
                     session_timeout=args.session_timeout)
    sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(2048)  # connections queue from here on, before uvicorn accepts them
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"forwarding to {args.rrl_url} ({len(tasks)} tasks), at most {args.max_sessions} sessions", flush=True)
    print(f"listening on http://{shown}:{port}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", ws_ping_interval=20.0, ws_ping_timeout=60.0))
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
