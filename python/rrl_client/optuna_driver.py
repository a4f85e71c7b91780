"""Optuna's samplers behind an ask/tell protocol of JSON lines on stdin and stdout.

The TypeScript agent ``src/outer/agents/optuna.ts`` starts ``python -m rrl_client.optuna_driver``
and drives it: it sends a task's design space (derived from ``src/outer/agents/space.ts``), asks for
points, trains each point's spec through the harness, and tells the study the outer reward. The
driver owns no spec, no task and no score; it only holds the studies.

Every request is one JSON object on one line with an ``id`` and an ``op``; every answer is one line
``{"id": ..., "ok": true, ...}`` or ``{"id": ..., "ok": false, "error": "one line"}``. A line that is
not a JSON object is answered with ``"id": null`` and an error; the driver keeps going. On start it
writes ``{"ready": true, "optuna": VERSION, "cmaes": VERSION}``; it ends at the end of its input.

Operations (``study`` names one study; a driver holds any number):

- ``init``: ``sampler`` (``tpe`` or ``cmaes``), ``seed``, ``space`` (a list of parameters:
  ``{"name", "kind": "float"|"int", "low", "high", "log"}`` or ``{"name", "kind": "categorical",
  "choices"}``) and ``enqueue`` (a point the study's first trial takes, or null). Replaces a study
  of the same name.
- ``ask``: answers ``trial`` (its number) and ``params`` (a value per parameter).
- ``tell``: ``trial`` and ``value`` (a finite number, or null for a failed job: the trial is told
  ``TrialState.FAIL``).
- ``add``: ``params`` and ``value`` as for ``tell``: a finished trial the study did not ask itself
  (a restarted driver is given its history again this way).

The samplers: ``TPESampler(seed=seed, n_startup_trials=STARTUP)`` (the start-up of the harness's own
search: its first round of four is random) and ``CmaEsSampler(seed=seed, popsize=POPSIZE)`` (one
generation per round of four, so that it learns within sixteen trials). CMA-ES models float and int
parameters only; as Optuna does, it samples the categorical ones with its independent sampler
(``RandomSampler``), which the warning it would print for each says, silenced here.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from typing import IO, Any

STARTUP = 4
"""TPE's random start-up trials: one round of four, as the harness's own model-based search."""

POPSIZE = 4
"""CMA-ES's population: one generation per round of four."""

SAMPLERS = ("tpe", "cmaes")


class RequestError(Exception):
    """A request the driver refuses; answered in one line, the driver goes on."""


def one_line(text: str, limit: int = 300) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass
class Study:
    study: Any
    distributions: dict[str, Any]


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise RequestError(f"{what} must be a finite number, got {json.dumps(value)[:60]}")
    return float(value)


def distributions(space: Any) -> dict[str, Any]:
    """The Optuna distributions of a space as the agent sends it; refuses a malformed one."""
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    if not isinstance(space, list) or not space:
        raise RequestError("space must be a non-empty list of parameters")
    out: dict[str, Any] = {}
    for p in space:
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not p["name"]:
            raise RequestError("every parameter needs a name")
        name = p["name"]
        if name in out:
            raise RequestError(f"parameter {name!r} appears twice")
        kind = p.get("kind")
        if kind in ("float", "int"):
            low, high = _number(p.get("low"), f"{name}.low"), _number(p.get("high"), f"{name}.high")
            log = p.get("log", False) is True
            if not low < high or (log and low <= 0):
                raise RequestError(f"parameter {name!r}: needs low < high (and low > 0 on a log scale)")
            if kind == "int":
                if low != int(low) or high != int(high):
                    raise RequestError(f"parameter {name!r}: an int range needs int bounds")
                out[name] = IntDistribution(int(low), int(high), log=log)
            else:
                out[name] = FloatDistribution(low, high, log=log)
        elif kind == "categorical":
            choices = p.get("choices")
            if not isinstance(choices, list) or len(choices) < 2 or any(isinstance(c, (list, dict)) for c in choices):
                raise RequestError(f"parameter {name!r}: choices must be a list of at least two plain values")
            out[name] = CategoricalDistribution(choices)
        else:
            raise RequestError(f"parameter {name!r}: unknown kind {json.dumps(kind)[:40]}")
    return out


def make_sampler(name: Any, seed: Any) -> Any:
    import optuna

    if name not in SAMPLERS:
        raise RequestError(f"unknown sampler {json.dumps(name)[:40]}; known: {', '.join(SAMPLERS)}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise RequestError("seed must be an integer")
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=STARTUP)
    return optuna.samplers.CmaEsSampler(seed=seed, popsize=POPSIZE, warn_independent_sampling=False)


class Driver:
    """The studies and the operations on them."""

    def __init__(self) -> None:
        self.studies: dict[str, Study] = {}

    def _study(self, req: dict[str, Any]) -> Study:
        name = req.get("study")
        if not isinstance(name, str) or name not in self.studies:
            raise RequestError(f"no study {json.dumps(name)[:80]}: init it first")
        return self.studies[name]

    def _point(self, s: Study, params: Any) -> dict[str, Any]:
        if not isinstance(params, dict) or set(params) != set(s.distributions):
            raise RequestError("params must hold exactly the space's parameters")
        for name, d in s.distributions.items():
            try:
                internal = d.to_internal_repr(params[name])
            except Exception as err:
                raise RequestError(f"{name}: {one_line(str(err), 120)}") from err
            if not d._contains(internal):
                raise RequestError(f"{name}: {json.dumps(params[name])[:40]} is outside its distribution")
        return dict(params)

    def _value(self, req: dict[str, Any]) -> float | None:
        value = req.get("value")
        return None if value is None else _number(value, "value")

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        import optuna

        op = req.get("op")
        if op == "init":
            name = req.get("study")
            if not isinstance(name, str) or not name:
                raise RequestError("study must be a non-empty string")
            dists = distributions(req.get("space"))
            sampler = make_sampler(req.get("sampler"), req.get("seed"))
            study = optuna.create_study(direction="maximize", sampler=sampler, study_name=name)
            s = Study(study, dists)
            enqueue = req.get("enqueue")
            if enqueue is not None:
                study.enqueue_trial(self._point(s, enqueue))
            self.studies[name] = s
            return {}
        if op == "ask":
            s = self._study(req)
            trial = s.study.ask(s.distributions)
            return {"trial": trial.number, "params": trial.params}
        if op == "tell":
            s = self._study(req)
            number = req.get("trial")
            running = [t for t in s.study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,)) if t.number == number]
            if isinstance(number, bool) or not isinstance(number, int) or not running:
                raise RequestError(f"trial {json.dumps(number)[:20]} is not a running trial of this study")
            value = self._value(req)
            if value is None:
                s.study.tell(number, state=optuna.trial.TrialState.FAIL)
            else:
                s.study.tell(number, value)
            return {}
        if op == "add":
            s = self._study(req)
            params = self._point(s, req.get("params"))
            value = self._value(req)
            state = optuna.trial.TrialState.FAIL if value is None else optuna.trial.TrialState.COMPLETE
            s.study.add_trial(optuna.trial.create_trial(state=state, value=value, params=params, distributions=s.distributions))
            return {}
        raise RequestError(f"unknown op {json.dumps(op)[:40]}")


def serve(stdin: IO[str], stdout: IO[str]) -> None:
    """Answers the requests on ``stdin`` until its end."""

    def say(obj: dict[str, Any]) -> None:
        stdout.write(json.dumps(obj) + "\n")
        stdout.flush()

    try:
        import cmaes
        import optuna
    except ImportError as err:
        say({"ready": False, "error": one_line(f"{err}: run python/setup-venv.sh (optuna and cmaes are pinned in python/requirements.txt)")})
        return
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    say({"ready": True, "optuna": optuna.__version__, "cmaes": cmaes.__version__})
    driver = Driver()
    for line in stdin:
        if not line.strip():
            continue
        rid: Any = None
        try:
            try:
                req = json.loads(line)
            except json.JSONDecodeError as err:
                raise RequestError(f"not a JSON line ({err})") from err
            if not isinstance(req, dict):
                raise RequestError("a request is one JSON object")
            rid = req.get("id")
            say({"id": rid, "ok": True, **driver.handle(req)})
        except RequestError as err:
            say({"id": rid, "ok": False, "error": one_line(str(err))})
        except Exception as err:  # noqa: BLE001  an error inside Optuna: that request fails, the driver goes on
            say({"id": rid, "ok": False, "error": one_line(f"{type(err).__name__}: {err}")})


def main() -> int:
    serve(sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
