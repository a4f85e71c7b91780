"""STAND-IN for `rrl serve` (built in parallel in TypeScript): a real HTTP server on a real socket
that speaks the issue-11 API, so the client, the reward functions and the GRPO smoke test can run
before `rrl serve` exists. SWITCH TO THE REAL SERVER when it is merged: set ``RRL_TEST_SERVE_CMD``
(see conftest.py) and the tests marked ``fake_only`` stay on this stand-in because they inspect
its internals (the calls it received, a forced 429).

Its scoring is deliberately simple and NOT the harness's: a completion's first JSON object (found
inside prose or a code fence) that is a JSON object with an integer ``seed`` is a "valid spec" with
normalised score ``1 / (1 + |seed - 3|)`` (divided by ``1 + |log10(lr) + 2|`` when the spec sets
``algorithm.learningRate`` to ``lr``) and that as its reward; anything else is ``invalid`` with
reward -1 and a one-line reason. An object without ``task`` is read as a JSON Merge Patch over the
baseline the compact and patch prompts show (``{"task", "model": {"hidden": [8]}, "seed": 1}``).
``GET /v1/tasks/{id}/schema?form=patch|spec`` serves a small schema in the harness's plain features,
``GET /v1/tasks/{id}/space`` a small design space in the shape the harness publishes.
``POST /v1/tasks/{id}/confirmations`` scores a completion's spec with each of ``CONFIRM_SEEDS`` in place
of its own seed and answers their mean (so a seed fished to 3 scores 1 alone and about 0.2 confirmed).
A valid completion whose spec (merged, for a patch) equals that baseline but for its seed is marked
``unchanged: true``.
"""

from __future__ import annotations

import json
import math
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rrl_client.extract import extract_json_object

TASKS = [
    {"id": "cartpole-balance", "family": "cartpole", "kind": "control", "split": "train", "data": None},
    {"id": "iris-classify", "family": "iris", "kind": "supervised", "split": "train", "data": "iris"},
    {"id": "acrobot-swingup", "family": "acrobot", "kind": "control", "split": "test", "data": None},
]
PENALTY = -1.0
CONFIRM_SEEDS = (5, 6, 7, 8, 9)
"""The stand-in's confirmation seeds (a completion's own seed is replaced by each in turn)."""

# The stand-in's answer schemas: small, in the plain features the harness's grammar schemas use
# (GET /v1/tasks/{id}/schema); the patch form has no required field, the spec form requires seed.
PATCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "model": {
            "type": "object",
            "properties": {
                "hidden": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 64}, "minItems": 1, "maxItems": 2},
                "activation": {"type": "string", "enum": ["relu", "tanh"]},
            },
            "additionalProperties": False,
        },
        "algorithm": {
            "type": "object",
            "properties": {
                "name": {"const": "ppo"},
                "learningRate": {"type": "number", "minimum": 0.0001, "maximum": 0.1},
            },
            "additionalProperties": False,
        },
        "seed": {"type": "integer", "minimum": 0, "maximum": 9},
    },
    "additionalProperties": False,
}


# The stand-in's design space (GET /v1/tasks/{id}/space), in the shape `rrl space --task ID` prints and
# within PATCH_SCHEMA: two heads a patch sets as they are, and two written through a rule (left out of the Optuna arm).
SPACE_HEADS: list[dict[str, Any]] = [
    {"name": "algorithm", "slot": "algorithm", "path": "algorithm.name", "algorithm": None, "writes": "option", "options": ["ppo"], "param": None},
    {
        "name": "hidden",
        "slot": "control.hidden",
        "path": "model.hidden",
        "algorithm": None,
        "writes": "option",
        "options": [[16], [32, 32], [64, 64]],
        "param": {"name": "hidden", "kind": "categorical", "choices": ["[16]", "[32,32]", "[64,64]"]},
    },
    {
        "name": "rewardTerm",
        "slot": "rewardTerm",
        "path": "reward.expression",
        "algorithm": None,
        "writes": "derived",
        "options": ["none", "x"],
        "param": {"name": "rewardTerm", "kind": "categorical", "choices": ["none", "x"]},
    },
    {
        "name": "envSteps",
        "slot": "envSteps",
        "path": "budget.envSteps",
        "algorithm": None,
        "writes": "derived",
        "options": [2500, 50000],
        "param": {"name": "envSteps", "kind": "int", "low": 2500, "high": 50000, "log": True},
    },
    {
        "name": "ppo.learningRate",
        "slot": "ppo.learningRate",
        "path": "algorithm.learningRate",
        "algorithm": "ppo",
        "writes": "option",
        "options": [1e-4, 3e-4, 1e-3, 3e-3, 1e-2],
        "param": {"name": "ppo.learningRate", "kind": "float", "low": 1e-4, "high": 1e-2, "log": True},
    },
]


def space(task: str) -> dict[str, Any]:
    return {"task": task, "kind": "control", "logSpan": 4, "heads": SPACE_HEADS, "baseline": {"hidden": "[16]", "rewardTerm": "none", "envSteps": 2500}}


def spec_schema(task: str) -> dict[str, Any]:
    props = dict(PATCH_SCHEMA["properties"])
    props["task"] = {"const": task}
    return {**PATCH_SCHEMA, "properties": props, "required": ["task", "seed"]}


def baseline(task: str) -> dict[str, Any]:
    """The example spec the compact and patch prompts show."""
    return {"task": task, "model": {"hidden": [8]}, "seed": 1}


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396: objects merge key by key, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


class FakeRrl:
    """The stand-in's state: calls received, jobs, an optional token, a bounded number of requests in flight."""

    def __init__(self, token: str | None = None, capacity: int = 64, retry_after: str = "1") -> None:
        self.token = token
        self.capacity = capacity
        self.retry_after = retry_after
        self.force_busy = 0  # answer this many next /v1/rewards calls with 429
        self.in_flight = 0
        self.reward_calls: list[dict[str, Any]] = []
        self.jobs: dict[str, dict[str, Any]] = {}
        self.prompt_forms: list[str] = []
        self.schema_calls: list[tuple[str, str]] = []
        self.confirm_calls: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.release = threading.Event()  # rewards calls wait on this when hold is set
        self.hold = False
        self.release.set()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeRrl:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def score(self, task: str, text: str) -> dict[str, Any]:
        obj = extract_json_object(text)
        with self.lock:
            job = f"job-{len(self.jobs) + 1}"
        if not isinstance(obj, dict):
            result = {"status": "invalid", "score": None, "reason": "no JSON object in the completion", "job": None}
            return {"reward": PENALTY, "result": result}
        # an object without task: the patch form, a JSON Merge Patch over the baseline the prompt shows
        spec = obj if "task" in obj else merge_patch(baseline(task), obj)
        seed = spec.get("seed")
        if not isinstance(seed, int) or isinstance(seed, bool):
            result = {"status": "invalid", "score": None, "reason": "seed: expected an integer", "job": None}
            return {"reward": PENALTY, "result": result}
        normalized = 1.0 / (1.0 + abs(seed - 3))
        unchanged = {k: v for k, v in spec.items() if k != "seed"} == {k: v for k, v in baseline(task).items() if k != "seed"}
        lr = spec.get("algorithm", {}).get("learningRate") if isinstance(spec.get("algorithm"), dict) else None
        if isinstance(lr, (int, float)) and not isinstance(lr, bool) and lr > 0:  # a learning rate, when given, matters too: best at 0.01
            normalized /= 1.0 + abs(math.log10(lr) + 2)
        with self.lock:
            self.jobs[job] = {"id": job, "task": task, "status": "ok", "spec": obj, "score": {"normalized": normalized, "stderr": 0.01}}
        result = {"status": "ok", "score": {"normalized": normalized, "stderr": 0.01}, "reason": None, "job": job, "unchanged": unchanged}
        return {"reward": normalized, "result": result}

    def confirm(self, task: str, body: Any) -> tuple[int, dict[str, Any]]:
        """The stand-in's confirmation: the completion's spec scored with each of CONFIRM_SEEDS in place of its
        own seed (as the harness trains a candidate again on its seeds), their mean; an invalid one is not confirmed."""
        if task not in {t["id"] for t in TASKS}:
            return 404, {"error": f"task: unknown task {task!r}"}
        if not isinstance(body, dict) or not isinstance(body.get("completion"), str):
            return 400, {"error": "body: expected {completion}"}
        self.confirm_calls.append((task, body["completion"]))
        obj = extract_json_object(body["completion"])
        scores = []
        for seed in CONFIRM_SEEDS:
            again = {**obj, "seed": seed} if isinstance(obj, dict) else None
            result = self.score(task, json.dumps(again) if again is not None else body["completion"])["result"]
            if result["score"] is None:
                return 200, {"confirmed": None, "status": "invalid", "reason": result["reason"]}
            scores.append(result["score"]["normalized"])
        n = len(scores)
        confirmed = {"normalized": sum(scores) / n, "uncertainty": 0.01, "complete": True, "scored": n, "seeds": n, "failed": 0, "unscorable": 0}
        return 200, {"confirmed": confirmed, "status": "succeeded", "reason": None}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _send(self, code: int, body: Any, headers: dict[str, str] | None = None) -> None:
                raw = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(raw)

            def _authorised(self) -> bool:
                if fake.token is None or self.headers.get("Authorization") == f"Bearer {fake.token}":
                    return True
                self._send(401, {"error": "missing or wrong bearer token"})
                return False

            def do_GET(self) -> None:
                if not self._authorised():
                    return
                path = self.path.split("?")[0]
                query = dict(urllib.parse.parse_qsl(self.path.partition("?")[2]))
                if path == "/v1/tasks":
                    return self._send(200, TASKS)
                m = re.fullmatch(r"/v1/tasks/([^/]+)/prompt", path)
                if m:
                    task = m.group(1)
                    if task not in {t["id"] for t in TASKS}:
                        return self._send(404, {"error": f"task: unknown task {task!r}"})
                    form = query.get("form", "full")
                    if form not in ("full", "compact", "patch"):
                        return self._send(400, {"error": f"form: expected full, compact or patch, got {form!r}"})
                    example = baseline(task) if form != "full" else None
                    ask = {
                        "full": "",
                        "compact": f" Example: {json.dumps(example)}",
                        "patch": f" Baseline: {json.dumps(example)} Reply with a JSON merge patch of it.",
                    }[form]
                    fake.prompt_forms.append(form)
                    return self._send(
                        200,
                        {
                            "messages": [
                                {"role": "system", "content": "You write training jobs as one JSON object."},
                                {"role": "user", "content": f"Task {task}: write a job spec." + ask},
                            ],
                            "example": example,
                        },
                    )
                m = re.fullmatch(r"/v1/tasks/([^/]+)/schema", path)
                if m:
                    task = m.group(1)
                    if task not in {t["id"] for t in TASKS}:
                        return self._send(404, {"error": f"task: unknown task {task!r}"})
                    form = query.get("form", "spec")
                    if form not in ("patch", "spec"):
                        return self._send(400, {"error": f"form: expected patch or spec, got {form!r}"})
                    fake.schema_calls.append((task, form))
                    return self._send(200, PATCH_SCHEMA if form == "patch" else spec_schema(task))
                m = re.fullmatch(r"/v1/tasks/([^/]+)/space", path)
                if m:
                    if m.group(1) not in {t["id"] for t in TASKS}:
                        return self._send(404, {"error": f"task: unknown task {m.group(1)!r}"})
                    return self._send(200, space(m.group(1)))
                m = re.fullmatch(r"/v1/jobs/([^/]+)", path)
                if m:
                    job = fake.jobs.get(m.group(1))
                    return self._send(200, job) if job else self._send(404, {"error": "job: not found"})
                self._send(404, {"error": f"no route {path}"})

            def do_POST(self) -> None:
                if not self._authorised():
                    return
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length))
                except ValueError:
                    return self._send(400, {"error": "body: not JSON"})
                m = re.fullmatch(r"/v1/tasks/([^/]+)/confirmations", self.path)
                if m:
                    return self._send(*fake.confirm(m.group(1), body))
                if self.path != "/v1/rewards":
                    return self._send(404, {"error": f"no route {self.path}"})
                if not isinstance(body, dict) or not isinstance(body.get("task"), str) or not isinstance(body.get("completions"), list):
                    return self._send(400, {"error": "body: expected {task, completions}"})
                if body["task"] not in {t["id"] for t in TASKS}:
                    return self._send(404, {"error": f"task: unknown task {body['task']!r}"})
                with fake.lock:
                    busy = fake.force_busy > 0 or fake.in_flight >= fake.capacity
                    if fake.force_busy > 0:
                        fake.force_busy -= 1
                    if not busy:
                        fake.in_flight += 1
                        fake.reward_calls.append(body)
                if busy:
                    return self._send(429, {"error": "queue full"}, {"Retry-After": fake.retry_after})
                try:
                    fake.release.wait(timeout=30)
                    scored = [fake.score(body["task"], str(c)) for c in body["completions"]]
                    self._send(200, {"rewards": [s["reward"] for s in scored], "results": [s["result"] for s in scored]})
                finally:
                    with fake.lock:
                        fake.in_flight -= 1

        return Handler
