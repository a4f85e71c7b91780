"""A small client for `rrl serve`, the harness as the environment and reward of an RL framework.

Standard library only (urllib), so the reward functions import nothing heavy. The server's API:

- ``GET /v1/tasks`` -> the rows of ``rrl tasks --json``
- ``GET /v1/tasks/{id}/prompt`` -> ``{"messages": [...]}`` (``?form=compact|patch`` for small models)
- ``GET /v1/tasks/{id}/schema?form=patch|spec`` -> the JSON Schema of a valid answer (plain features, for guided decoding)
- ``POST /v1/rewards`` with ``{"task": ID, "completions": [TEXT, ...]}`` ->
  ``{"rewards": [...], "results": [{"status", "score", "reason", "job"}]}`` once the jobs are done
- ``POST /v1/jobs`` (the same body) -> 202 ``{"request", "jobs", ...}`` at once; ``GET /v1/requests/{id}``
  and its server-sent events ``GET /v1/requests/{id}/events`` give the same answer once the jobs are done
- ``GET /v1/jobs/{id}``
- ``POST /v1/episodes`` / ``POST /v1/episodes/{id}/submissions`` / ``GET /v1/episodes/{id}`` /
  ``POST /v1/episodes/{id}/close``: an agent's episode of up to ``maxSubmissions`` jobs of one task.
  A submission is answered with feedback only (status, reason, cost, the job's own validation figure,
  submissions left); the episode's reward (the server's rule: the mean of its submissions' rewards,
  -1 when it sent none) is known only once it is closed
- 429 with ``Retry-After`` when its queue is full; an optional bearer token.

A reward is ``None`` when the harness could not score the completion for its own reasons (a lost
worker, its scorer's failure, no reference for the task): its result's ``reason`` starts with
``unscorable:``. Trainers read ``None`` as "no signal" (zero advantage), never as a failure.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any, cast

from .answers import (
    Confirmation,
    EpisodeClosed,
    EpisodeOpened,
    EpisodeState,
    JobsAccepted,
    Message,
    PromptResponse,
    RewardResult,
    RewardsResponse,
    RrlError,
    SubmissionFeedback,
    expect_fields,
    reward_value,
    rewards_response,
    submission_feedback,
)

# The answer types are part of the client's API: it hands them on.
__all__ = [
    "MAX_EPISODE_SUBMISSIONS",
    "PROMPT_FORMS",
    "SCHEMA_FORMS",
    "Confirmation",
    "EpisodeClosed",
    "EpisodeOpened",
    "EpisodeState",
    "JobsAccepted",
    "Message",
    "PromptResponse",
    "RewardResult",
    "RewardsResponse",
    "RrlClient",
    "RrlError",
    "RrlTimeout",
    "SubmissionFeedback",
    "parse_retry_after",
]

PROMPT_FORMS = ("full", "compact", "patch")
"""``full``: the whole brief; ``compact``: a short prompt showing the baseline spec to send back edited;
``patch``: the same, asking for a JSON Merge Patch (RFC 7396) over the baseline instead."""
SCHEMA_FORMS = ("patch", "spec")
MAX_EPISODE_SUBMISSIONS = 8
"""The most jobs one episode may send (``maxSubmissions`` of ``POST /v1/episodes``)."""


class RrlTimeout(RuntimeError):
    """The rewards of a request did not come within the caller's wait."""


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date); None if absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class RrlClient:
    """Client of one `rrl serve` instance.

    ``timeout`` bounds each HTTP request in seconds (a ``/v1/rewards`` call waits for its jobs, so
    it is long by default); ``max_wait`` bounds the total time spent waiting on 429s for one call.
    ``sleep`` is injectable so callers can observe the waits.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = 1800.0,
        max_wait: float = 1800.0,
        default_retry_after: float = 1.0,
        max_retry_after: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.max_wait = max_wait
        self.default_retry_after = default_retry_after
        self.max_retry_after = max_retry_after
        self._sleep = sleep
        self.waits: list[float] = []
        """Every 429 wait taken, in seconds (for logs and tests)."""

    # -- the API -----------------------------------------------------------------------------

    def tasks(self) -> list[dict[str, Any]]:
        """The task rows (``id``, ``family``, ``kind``, ``split``, ``data``)."""
        body = self._request("GET", "/v1/tasks")
        if not isinstance(body, list):
            raise RrlError(f"GET /v1/tasks: expected a JSON array, got {type(body).__name__}")
        return cast(list[dict[str, Any]], body)

    def prompt(self, task_id: str, form: str = "full", doc_chars: int | None = None) -> list[Message]:
        """The chat messages the agent sees for one task (``form``: ``full``, or ``compact`` / ``patch`` for small models;
        ``doc_chars``: the patch form's documentation budget, None the server's default, 0 none)."""
        return self.prompt_response(task_id, form, doc_chars)["messages"]

    def prompt_response(self, task_id: str, form: str = "full", doc_chars: int | None = None) -> PromptResponse:
        """``GET /v1/tasks/{id}/prompt``: the messages and, in the compact form, the valid example spec they show."""
        if form not in PROMPT_FORMS:
            raise ValueError(f"form: expected one of {', '.join(PROMPT_FORMS)}, got {form!r}")
        query = {k: v for k, v in (("form", None if form == "full" else form), ("doc", doc_chars)) if v is not None}
        body = self._request("GET", f"/v1/tasks/{urllib.parse.quote(task_id, safe='')}/prompt" + (f"?{urllib.parse.urlencode(query)}" if query else ""))
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list):
            raise RrlError(f'GET /v1/tasks/{task_id}/prompt: expected {{"messages": [...]}}')
        example = body.get("example")
        return {"messages": cast(list[Message], messages), "example": example if isinstance(example, dict) else None}

    def schema(self, task_id: str, form: str = "patch") -> dict[str, Any]:
        """``GET /v1/tasks/{id}/schema?form=...``: the JSON Schema of a valid answer for the task, in plain
        features (for a grammar engine): ``patch``, a JSON Merge Patch over the task's baseline spec (no
        required fields), or ``spec``, the whole spec."""
        if form not in SCHEMA_FORMS:
            raise ValueError(f"form: expected one of {', '.join(SCHEMA_FORMS)}, got {form!r}")
        body = self._request("GET", f"/v1/tasks/{urllib.parse.quote(task_id, safe='')}/schema?form={form}")
        if not isinstance(body, dict):
            raise RrlError(f"GET /v1/tasks/{task_id}/schema: expected a JSON Schema object")
        return cast(dict[str, Any], body)

    def space(self, task_id: str) -> dict[str, Any]:
        """``GET /v1/tasks/{id}/space``: the task's design space as the harness declares it (each head's spec path,
        options, kind, range and log scale; ``rrl space --task ID`` prints the same)."""
        body = self._request("GET", f"/v1/tasks/{urllib.parse.quote(task_id, safe='')}/space")
        if not isinstance(body, dict) or not isinstance(body.get("heads"), list):
            raise RrlError(f'GET /v1/tasks/{task_id}/space: expected {{"heads": [...]}}')
        return cast(dict[str, Any], body)

    def rewards(self, task_id: str, completions: list[str]) -> RewardsResponse:
        """Score a group of completions for one task in one call; waits until the jobs are done."""
        if not all(isinstance(c, str) for c in completions):
            raise TypeError("completions must be a list of str")
        body = self._request("POST", "/v1/rewards", {"task": task_id, "completions": completions})
        return rewards_response("POST /v1/rewards", body, len(completions))

    def submit(self, task_id: str, completions: list[str], idempotency_key: str | None = None) -> JobsAccepted:
        """``POST /v1/jobs``: record completions as jobs; answers at once with the request and job ids.

        The same ``idempotency_key`` again is the same request (its jobs are not trained twice)."""
        if not all(isinstance(c, str) for c in completions):
            raise TypeError("completions must be a list of str")
        payload: dict[str, Any] = {"task": task_id, "completions": completions}
        if idempotency_key is not None:
            payload["idempotencyKey"] = idempotency_key
        body = self._request("POST", "/v1/jobs", payload)
        if not isinstance(body, dict) or not isinstance(body.get("request"), int) or not isinstance(body.get("jobs"), list):
            raise RrlError('POST /v1/jobs: expected {"request": N, "jobs": [...]}')
        return cast(JobsAccepted, body)

    def request(self, request_id: int) -> dict[str, Any]:
        """``GET /v1/requests/{id}``: status, job ids, jobs finished and, once done, the answer."""
        body = self._request("GET", f"/v1/requests/{int(request_id)}")
        if not isinstance(body, dict):
            raise RrlError(f"GET /v1/requests/{request_id}: expected a JSON object")
        return body

    def events(self, request_id: int, read_timeout: float = 60.0) -> Iterator[tuple[str, Any]]:
        """The request's server-sent events as ``(event, data)``: ``job`` rows, then ``rewards`` (or ``interrupted``).

        ``read_timeout`` bounds the silence between two lines; the server sends a keepalive comment
        every 15 s by default (``rrl serve --keepalive``), so a live stream never reaches it."""
        headers = {"Accept": "text/event-stream"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(f"{self.base_url}/v1/requests/{int(request_id)}/events", headers=headers)
        try:
            resp = urllib.request.urlopen(req, timeout=read_timeout)
        except urllib.error.HTTPError as err:
            raise RrlError(f"GET /v1/requests/{request_id}/events: HTTP {err.code}: {_error_detail(err)}", err.code) from None
        with resp:
            event, data = "message", cast(list[str], [])
            for raw in resp:
                line = raw.decode("utf-8").rstrip("\r\n")
                if line == "":
                    if data:
                        yield event, json.loads("\n".join(data))
                    event, data = "message", []
                elif line.startswith(":"):
                    continue  # a keepalive comment
                elif line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].lstrip(" "))

    def wait(self, request_id: int, timeout: float | None = None, expected: int | None = None) -> RewardsResponse:
        """The answer of a request once its jobs are done, read from its event stream.

        A stream cut (a proxy, a restarting server: ``interrupted``) is opened again after a pause,
        until the answer comes or ``timeout`` seconds have passed (None: no limit; then RrlTimeout).
        An ``error`` event (the harness failed on the request for a reason of its own) raises RrlError."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = 0.5
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise RrlTimeout(f"request {request_id}: no rewards within {timeout:.0f}s")
            try:
                for event, data in self.events(request_id, read_timeout=60.0 if left is None else max(1.0, min(60.0, left))):
                    if event == "rewards":
                        return rewards_response(f"request {request_id}", data, expected)
                    if event == "interrupted":
                        break
                    if event == "error":
                        detail = data.get("error") if isinstance(data, dict) else data
                        raise RrlError(f"request {request_id}: {detail}", 500)
            except RrlError as err:
                if err.status not in (None, 502, 503, 504) or str(err).startswith(f"request {request_id}: "):
                    raise
            except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError, ValueError):
                pass  # a cut stream or a server not back yet: open it again
            self._sleep(pause)
            pause = min(pause * 2, 10.0)

    def score(self, task_id: str, completions: list[str], idempotency_key: str | None = None, timeout: float | None = None) -> RewardsResponse:
        """Submit completions as jobs and wait for their rewards (``submit`` then ``wait``).

        Unlike ``rewards`` no connection stays silent while the jobs train; give an ``idempotency_key``
        so that a retry after a lost answer is the same request."""
        accepted = self.submit(task_id, completions, idempotency_key)
        return self.wait(accepted["request"], timeout=timeout, expected=len(completions))

    def open_episode(self, task_id: str, max_submissions: int = 1, idempotency_key: str | None = None) -> EpisodeOpened:
        """``POST /v1/episodes``: open an episode of up to ``max_submissions`` jobs (1..8) of ``task_id``.
        The same ``idempotency_key`` again is the same episode."""
        body = self._request("POST", "/v1/episodes", {"task": task_id, "maxSubmissions": int(max_submissions)}, _key_header(idempotency_key))
        expect_fields(body, "POST /v1/episodes", episode=int, task=str, maxSubmissions=int, submitted=int, status=str)
        return cast(EpisodeOpened, body)

    def submit_to_episode(self, episode_id: int, completion: str, idempotency_key: str | None = None) -> SubmissionFeedback:
        """``POST /v1/episodes/{id}/submissions``: one completion as the episode's next job; answers once the
        job is finished, with feedback only. The same ``idempotency_key`` again is the same submission.
        RrlError with status 409 when the episode is closed or has no submissions left."""
        if not isinstance(completion, str):
            raise TypeError("completion must be a str")
        what = f"POST /v1/episodes/{int(episode_id)}/submissions"
        body = self._request("POST", f"/v1/episodes/{int(episode_id)}/submissions", {"completion": completion}, _key_header(idempotency_key))
        return submission_feedback(what, body)

    def episode(self, episode_id: int) -> EpisodeState:
        """``GET /v1/episodes/{id}``: the episode, its feedback so far and, once closed, its reward."""
        what = f"GET /v1/episodes/{int(episode_id)}"
        body = self._request("GET", f"/v1/episodes/{int(episode_id)}")
        expect_fields(body, what, episode=int, task=str, maxSubmissions=int, submitted=int, status=str, submissions=list)
        body["submissions"] = [submission_feedback(what, f) for f in body["submissions"]]
        body["reward"] = reward_value(what, body.get("reward"))
        return cast(EpisodeState, body)

    def close_episode(self, episode_id: int) -> EpisodeClosed:
        """``POST /v1/episodes/{id}/close``: settle the episode and read its reward (the server's rule; None:
        nothing in it could be scored, the harness's failure). Closing again gives the same answer."""
        what = f"POST /v1/episodes/{int(episode_id)}/close"
        body = self._request("POST", f"/v1/episodes/{int(episode_id)}/close", {})
        expect_fields(body, what, episode=int, submitted=int)
        body["reward"] = reward_value(what, body.get("reward"))
        return cast(EpisodeClosed, body)

    def confirm(self, task_id: str, completion: str) -> Confirmation:
        """``POST /v1/tasks/{id}/confirmations``: train the completion's spec on the harness's confirmation seeds
        (its own seed ignored) and read its confirmed score; waits until the jobs are done. For reports: it
        pays nothing."""
        if not isinstance(completion, str):
            raise TypeError("completion must be a str")
        what = f"POST /v1/tasks/{task_id}/confirmations"
        body = self._request("POST", f"/v1/tasks/{urllib.parse.quote(task_id, safe='')}/confirmations", {"completion": completion})
        expect_fields(body, what, status=str)
        confirmed = body.get("confirmed")
        if confirmed is not None:
            expect_fields(confirmed, f"{what}: confirmed", complete=bool, scored=int, seeds=int, failed=int, unscorable=int)
            confirmed["normalized"] = reward_value(what, confirmed.get("normalized"))
        return cast(Confirmation, body)

    def job(self, job_id: str) -> dict[str, Any]:
        """One job's record."""
        body = self._request("GET", f"/v1/jobs/{urllib.parse.quote(job_id, safe='')}")
        if not isinstance(body, dict):
            raise RrlError(f"GET /v1/jobs/{job_id}: expected a JSON object")
        return body

    # -- transport ---------------------------------------------------------------------------

    def _request(self, method: str, path: str, payload: Any = None, extra_headers: dict[str, str] | None = None) -> Any:
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        headers = {"Accept": "application/json", **(extra_headers or {})}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        waited = 0.0
        while True:
            req = urllib.request.Request(self.base_url + path, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    raw = resp.read()
            except urllib.error.HTTPError as err:
                detail = _error_detail(err)
                if err.code in (429, 503):
                    wait = parse_retry_after(err.headers.get("Retry-After"))
                    wait = self.default_retry_after if wait is None else min(wait, self.max_retry_after)
                    if waited + wait > self.max_wait:
                        raise RrlError(
                            f"{method} {path}: server busy ({err.code}) for {waited:.0f}s, over max_wait={self.max_wait:.0f}s",
                            err.code,
                        ) from None
                    self.waits.append(wait)
                    self._sleep(wait)
                    waited += wait
                    continue
                raise RrlError(f"{method} {path}: HTTP {err.code}: {detail}", err.code) from None
            except urllib.error.URLError as err:
                raise RrlError(f"{method} {path}: cannot reach {self.base_url}: {err.reason}") from None
            except TimeoutError:
                raise RrlError(f"{method} {path}: no answer within timeout={self.timeout:.0f}s") from None
            try:
                return json.loads(raw)
            except ValueError:
                raise RrlError(f"{method} {path}: the answer is not JSON: {raw[:200]!r}") from None


def _key_header(key: str | None) -> dict[str, str] | None:
    return None if key is None else {"Idempotency-Key": key}


def _error_detail(err: urllib.error.HTTPError) -> str:
    try:
        raw = err.read()
    except Exception:  # noqa: BLE001  (the body is only for the message: whatever fails reading it, the status stands)
        return err.reason if isinstance(err.reason, str) else ""
    try:
        body = json.loads(raw)
        if isinstance(body, dict) and "error" in body:
            return str(body["error"])[:500]
    except ValueError:
        pass
    return raw[:500].decode("utf-8", "replace")
