"""`rrl serve` as an OpenEnv environment: an OpenEnv server (openenv-core 0.3.0) that forwards to it.

    python -m rrl_client.openenv_server --rrl-url http://127.0.0.1:8377 --port 8378 [--max-sessions 64]

A session's episode is an episode of `rrl serve` (``POST /v1/episodes``): up to ``--max-submissions``
jobs (default 1, at most 8) of one task, whose reward `rrl serve` computes (the mean of its jobs'
rewards; -1 when it sent none; None only for the harness's own failures):

- ``reset(task=ID[, form=patch|compact|full])``: the observation is the task's prompt (``messages``,
  the chat messages of ``GET /v1/tasks/{id}/prompt``, and ``text``, their contents joined); reward
  None, not done. An episode of the session left open is closed first.
- ``step(JobAction(spec=TEXT))``: the completion (a JSON job spec or a JSON merge patch over the
  task's baseline spec, or model text holding one) is the episode's next submission: `rrl serve`
  trains the job and answers with feedback only. The observation carries it (``text``, the one line
  rrl_client.trl_env's tool returns; ``status``, ``reason``, ``job``, ``unchanged``, ``cost``,
  ``validation`` — the job's own figure on its training pool — and ``submissions_left``), never a
  hidden score; ``reward`` is None and ``done`` false while submissions are left.
- The last allowed submission, or ``step(JobAction(finish=True))`` at any time, closes the episode:
  that observation is ``done`` and its ``reward`` is the episode's (an episode finished with no job
  is paid -1). The reward is never in ``text``. A session that ends with its episode open closes it.

Routes are the library's: ``/ws`` (a session per WebSocket, each with its own environment; at most
``--max-sessions`` at once: give at least the trainer's generation batch), ``/reset``, ``/step``,
``/state`` (stateless over HTTP: a fresh environment per call, so an HTTP ``/step`` names its task in
the action and is an episode of one job), ``/health``, ``/schema``, ``/metadata``,
``/openapi.json``. The client is :class:`rrl_client.openenv_client.HarnessEnvClient`.

It forwards with `rrl serve`'s token (``--token-env``), so it keeps `rrl serve`'s front door
(rrl_client.openenv_door): it listens on loopback only unless given ``--allow-remote`` and a token
of its own (``--own-token-env VAR``; every request must then carry ``Authorization: Bearer TOKEN``);
without a token it answers only for a loopback ``Host`` with its port, and a request or WebSocket
handshake with a foreign ``Origin`` is refused (403).

It prints ``listening on http://HOST:PORT`` once ready (``--port 0`` picks a free port).
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import socket
import sys
import uuid
from collections.abc import Sequence
from typing import Any

from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field

from .client import MAX_EPISODE_SUBMISSIONS, PROMPT_FORMS, RrlClient, RrlError
from .contracts import DEFAULT_URL
from .openenv_door import FrontDoor, is_loopback
from .trl_env import MAX_REASON_CHARS, feedback_line

log = logging.getLogger(__name__)


class JobAction(Action):  # type: ignore[misc]  # openenv-core ships no type information
    """One step of the episode: a job for the harness (the model's completion), or ``finish`` to end the episode."""

    spec: str | None = Field(
        default=None,
        description="The model's completion: a JSON job spec, or a JSON merge patch over the task's baseline spec (raw model text holding one is fine); none with finish",
    )
    task: str | None = Field(default=None, description="The task id; only needed by the stateless HTTP /step (a WebSocket session has it from reset)")
    finish: bool = Field(default=False, description="End the episode now (no job): the observation is done and carries the episode's reward")


class JobObservation(Observation):  # type: ignore[misc]
    """The task's prompt (reset) or the harness's feedback on a job (step): never a hidden score; ``reward``
    (the base's) is None until the episode is done, then the episode's reward."""

    task: str | None = Field(default=None, description="The episode's task id")
    text: str = Field(
        default="", description="reset: the task's prompt as one text; step: the feedback as one line (status, reason, validation, cost, submissions left)"
    )
    messages: list[dict[str, str]] = Field(default_factory=list, description="reset: the task's prompt as chat messages")
    status: str | None = Field(default=None, description="step: succeeded, invalid, failed or unscorable (None: no job)")
    reason: str | None = Field(default=None, description="step: why the job was invalid, failed or not scored")
    job: str | None = Field(default=None, description="step: the harness's job id")
    unchanged: bool = Field(default=False, description="step: the job is the task's baseline job, seed aside")
    cost: dict[str, float | None] | None = Field(default=None, description="step: the job's envSteps, examples and wallSeconds")
    validation: dict[str, Any] | None = Field(
        default=None, description="step: the job's own figure on its training pool ({name, value}), not the hidden evaluation"
    )
    submissions_left: int | None = Field(default=None, description="step: jobs the episode may still send")
    next_turn: str | None = Field(
        default=None,
        description="step: the harness's next round's user turn: this job in one line, then the episode's last valid job (which the next patch applies to) and the request",
    )


class JobState(State):  # type: ignore[misc]
    """The episode: its task, its id on `rrl serve`, the jobs sent; ``reward`` only once it is closed."""

    task: str | None = None
    episode: int | None = None
    submitted: int = 0
    closed: bool = False
    reward: float | None = None
    status: str | None = None


class HarnessEnvironment(Environment[JobAction, JobObservation, JobState]):  # type: ignore[misc]
    """One session's environment: an episode of `rrl serve` (``POST /v1/episodes``), opened at its first
    step; each step is a submission answered with feedback; the last allowed one, a ``finish`` step or
    the session's end closes it, and the done observation carries the reward `rrl serve` computed."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # no shared mutable state; the harness serves concurrent requests

    def __init__(self, client: RrlClient, form: str = "patch", max_submissions: int = 1) -> None:
        super().__init__()
        self._client = client
        self._form = form
        self._max_submissions = max_submissions
        self._state = JobState(episode_id=str(uuid.uuid4()))

    def reset(self, seed: int | None = None, episode_id: str | None = None, task: str | None = None, form: str | None = None, **kwargs: Any) -> JobObservation:
        """Start an episode of ``task`` (an episode of the session left open is closed first); the observation
        is its prompt (``form``: patch, compact or full)."""
        if not task:
            raise ValueError("reset needs task=ID (one of GET /v1/tasks of rrl serve)")
        form = form or self._form
        if form not in PROMPT_FORMS:
            raise ValueError(f"form: expected one of {', '.join(PROMPT_FORMS)}, got {form!r}")
        self.close()
        messages = self._client.prompt(task, form)
        self._state = JobState(episode_id=episode_id or str(uuid.uuid4()), task=task)
        return JobObservation(
            task=task, messages=[dict(m) for m in messages], text="\n\n".join(m["content"] for m in messages if m.get("content")), reward=None, done=False
        )

    def step(self, action: JobAction, timeout_s: float | None = None, **kwargs: Any) -> JobObservation:
        """Send the job (feedback only, not done) or, with ``finish`` or after the last allowed job, close the
        episode (done, with its reward). A stateless HTTP step (no reset, the task in the action) is an
        episode of one job."""
        st = self._state
        task = st.task or action.task
        if not task:
            return JobObservation(text="not submitted: no task (reset(task=...) first, or name it in the action)", done=True)
        if st.closed:
            return JobObservation(task=task, done=True, reward=None, text="not submitted: the episode is over")
        if action.finish or action.spec is None:
            return self._finish(task)
        stateless = st.task is None
        st.task = task
        episode = self._open(task, 1 if stateless else self._max_submissions)
        if episode is None:
            return JobObservation(task=task, done=False, reward=None, text="unscorable: the harness did not open the episode; try again")
        st.step_count += 1
        try:
            feedback = self._client.submit_to_episode(episode, action.spec, idempotency_key=f"openenv-{uuid.uuid4()}")
        except RrlError as err:
            why = " ".join(str(err).split())[:MAX_REASON_CHARS]
            if err.status == 409:
                return self._finish(task, f"not submitted: {why}")
            log.warning("rrl serve did not answer a submission of %s: %s", task, err)
            return JobObservation(task=task, done=False, reward=None, text=f"unscorable: the harness did not answer ({why})")
        st.submitted = feedback["submission"]
        st.status = feedback["status"]
        line = feedback_line(feedback)
        fields = {
            "status": feedback["status"],
            "reason": feedback.get("reason"),
            "job": str(feedback["job"]),
            "unchanged": bool(feedback.get("unchanged")),
            "cost": dict(feedback["cost"]),
            "validation": None if feedback.get("validation") is None else dict(feedback["validation"]),  # type: ignore[arg-type]
            "submissions_left": feedback["submissionsLeft"],
            "next_turn": feedback["next"],
        }
        if feedback["submissionsLeft"] <= 0:
            return self._finish(task, line, fields)
        return JobObservation(task=task, text=line, reward=None, done=False, **fields)

    def _open(self, task: str, max_submissions: int) -> int | None:
        """The episode's id on `rrl serve`, opened now if it is not yet (None: the harness did not answer)."""
        if self._state.episode is None:
            try:
                opened = self._client.open_episode(task, max_submissions, idempotency_key=f"openenv-{uuid.uuid4()}")
            except RrlError as err:
                log.warning("rrl serve did not open an episode of %s: %s", task, err)
                return None
            self._state.episode = opened["episode"]
        return self._state.episode

    def _finish(self, task: str, text: str | None = None, fields: dict[str, Any] | None = None) -> JobObservation:
        """Close the episode (opening it first when no job was sent: the harness pays that -1) and answer done
        with its reward. The reward is in ``reward`` only, never in the text the agent reads."""
        reward: float | None = None
        reason: str | None = None
        episode = self._open(task, self._max_submissions)
        if episode is not None:
            try:
                closed = self._client.close_episode(episode)
                reward, reason = closed["reward"], closed.get("reason")
            except RrlError as err:
                log.warning("rrl serve did not close the episode %s of %s: %s", episode, task, err)
                reason = "unscorable: the harness did not close the episode"
        self._state.closed = True
        self._state.reward = reward
        if text is None:
            n = self._state.submitted
            text = "episode over: " + (reason or f"{n} job{'' if n == 1 else 's'} submitted")
        return JobObservation(task=task, text=text, reward=reward, done=True, **(fields or {}))

    def close(self) -> None:
        """Settles an episode left open (a session that ends, a new reset): its reward is recorded by `rrl serve`."""
        st = self._state
        if st.episode is not None and not st.closed:
            st.closed = True
            try:
                self._client.close_episode(st.episode)
            except RrlError as err:
                log.warning("rrl serve did not close the episode %s: %s", st.episode, err)

    @property
    def state(self) -> JobState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="rrl-harness",
            description="recursive-rl's harness as an environment: reset(task) gives the task's prompt; each step(spec) trains a "
            "job and answers with feedback only (status, reason, cost, the job's own validation figure); the done step "
            "carries the episode's reward (the mean of its jobs' rewards; -1 with no job; None: the harness's failure)",
            version="2.0.0",
        )


def create_app(
    client: RrlClient,
    *,
    max_sessions: int = 64,
    form: str = "patch",
    max_submissions: int = 1,
    session_timeout: float | None = None,
    token: str | None = None,
    listen_host: str | None = None,
) -> Any:
    """The FastAPI app of the OpenEnv server (the library's routes), forwarding to ``client``'s `rrl serve`,
    behind the front door (rrl_client.openenv_door): loopback Host only without ``token``, the bearer
    ``token`` on every request with one, and no foreign Origin."""
    from openenv.core.env_server.types import ConcurrencyConfig

    factory = functools.partial(HarnessEnvironment, client=client, form=form, max_submissions=max_submissions)
    config = ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=session_timeout)
    app = create_fastapi_app(factory, JobAction, JobObservation, concurrency_config=config)
    app.add_middleware(FrontDoor, token=token, listen_host=listen_host)
    return app


def exposure_refusal(host: str, allow_remote: bool, own_token: str | None) -> str | None:
    """Why the server may not listen on ``host``, in one line, or None: beyond loopback it needs both the
    explicit ``--allow-remote`` and a token of its own (the harness's token it forwards with is not one)."""
    if is_loopback(host):
        return None
    if allow_remote and own_token:
        return None
    missing = [w for w, ok in (("--allow-remote", allow_remote), ("--own-token-env VAR (a token of its own)", own_token)) if not ok]
    return (
        f"openenv_server: --host {host} is not loopback: it needs {' and '.join(missing)}; "
        "else any page or host that reaches it drives the harness with rrl serve's token"
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m rrl_client.openenv_server", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rrl-url", default=os.environ.get("RRL_URL", DEFAULT_URL), help="rrl serve's address (env RRL_URL)")
    p.add_argument("--token-env", default="RRL_TOKEN", help="environment variable holding rrl serve's bearer token, if any")
    p.add_argument("--host", default="127.0.0.1", help="loopback by default; any other host needs --allow-remote and --own-token-env")
    p.add_argument("--allow-remote", action="store_true", help="allow a --host beyond loopback (with --own-token-env)")
    p.add_argument(
        "--own-token-env", default=None, metavar="VAR", help="environment variable holding this server's own bearer token: every request must then carry it"
    )
    p.add_argument("--port", type=int, default=8378, help="0: a free port")
    p.add_argument("--max-sessions", type=int, default=64, help="concurrent WebSocket sessions (environments) allowed; at least the trainer's generation batch")
    p.add_argument("--session-timeout", type=float, default=None, help="seconds after which an idle session is closed (default: never)")
    p.add_argument("--max-submissions", type=int, default=1, help="jobs one episode may send (the episode is done after them)")
    p.add_argument("--form", default="patch", choices=PROMPT_FORMS, help="the prompt form reset returns by default")
    p.add_argument("--job-timeout", type=float, default=1800.0, help="seconds one job may take to answer")
    args = p.parse_args(argv)
    if args.max_sessions < 1 or not 1 <= args.max_submissions <= MAX_EPISODE_SUBMISSIONS:
        p.error(f"--max-sessions must be at least 1 and --max-submissions 1 to {MAX_EPISODE_SUBMISSIONS}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    import uvicorn

    args = parse_args(argv)
    own_token = os.environ.get(args.own_token_env) or None if args.own_token_env else None
    if args.own_token_env and not own_token:
        print(f"openenv_server: --own-token-env {args.own_token_env}: the variable is empty or unset", file=sys.stderr)
        return 2
    refused = exposure_refusal(args.host, args.allow_remote, own_token)
    if refused:
        print(refused, file=sys.stderr)
        return 2
    client = RrlClient(args.rrl_url, os.environ.get(args.token_env) or None, timeout=args.job_timeout)
    try:
        tasks = client.tasks()
    except RrlError as err:
        print(f"openenv_server: rrl serve at {args.rrl_url} does not answer: {err}", file=sys.stderr)
        return 1
    app = create_app(
        client,
        max_sessions=args.max_sessions,
        form=args.form,
        max_submissions=args.max_submissions,
        session_timeout=args.session_timeout,
        token=own_token,
        listen_host=args.host,
    )
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
