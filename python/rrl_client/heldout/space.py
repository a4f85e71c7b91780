"""The search space of the Optuna arm: the design space the harness publishes.

The harness declares its design space once (``src/outer/agents/space-heads.ts``) and publishes each task's
as plain JSON: ``GET /v1/tasks/{id}/space`` on ``rrl serve``, or ``rrl space --task ID [--out FILE]``. Each
head there has its spec ``path``, its ``options`` and, with more than one option, ``param``: its kind
(``float``, ``int`` or ``categorical``), range and log scale as the harness's own optimisers take them.
This arm reads that description and derives nothing of its own.

The arm answers with a JSON Merge Patch over the task's baseline spec, so it takes the heads a patch can
set as they are: those whose option is written at its path unchanged (``writes == "option"``) and that
belong to the baseline's algorithm or to none. The algorithm itself and the heads written through a rule
of the harness (the reward grammar, shares, bands) stay at the baseline. A numeric value the sampler
draws between two options lands on the nearest option (on the head's log scale when it has one), as the
harness's Optuna agents map their points, so every patch writes values of the design space.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Value = str | int | float | bool | None


@dataclass(frozen=True)
class Param:
    """One dimension: ``kind`` is ``float``, ``int`` or ``categorical``; ``path`` where it lands in the patch."""

    name: str
    path: tuple[str, ...]
    kind: str
    low: float = 0.0
    high: float = 0.0
    log: bool = False
    choices: tuple[Value, ...] = ()
    encoded: bool = False
    """Categorical choices are JSON texts (arrays and objects are not Optuna choice values) to decode."""
    options: tuple[float, ...] = ()
    """A numeric head's options: a drawn value lands on the nearest."""

    def nearest(self, x: float) -> float:
        """The option nearest ``x`` (on the log scale when the head has one; the first of a tie)."""
        scale = (lambda v: math.log(max(v, 5e-324))) if self.log else (lambda v: v)
        best = self.options[0]
        for o in self.options:
            if abs(scale(o) - scale(x)) < abs(scale(best) - scale(x)):
                best = o
        return best


@dataclass
class SearchSpace:
    """The dimensions of one task's study; ``to_patch`` turns one trial's values into a merge patch."""

    params: list[Param] = field(default_factory=list)

    def to_patch(self, values: dict[str, Any]) -> dict[str, Any]:
        """The JSON Merge Patch over the baseline that sets every dimension to its value."""
        patch: dict[str, Any] = {}
        for p in self.params:
            v = values[p.name]
            if p.encoded:
                v = json.loads(str(v))
            elif p.kind in ("int", "float"):
                v = p.nearest(float(v))
            node = patch
            for key in p.path[:-1]:
                node = node.setdefault(key, {})
            node[p.path[-1]] = v
        return patch


def patchable(head: dict[str, Any], algorithm: str | None) -> bool:
    """Whether a patch over a baseline of ``algorithm`` sets the head as it is (see the module's comment)."""
    return head.get("param") is not None and head.get("writes") == "option" and head.get("name") != "algorithm" and head.get("algorithm") in (None, algorithm)


def baseline_algorithm(description: dict[str, Any], baseline: dict[str, Any]) -> str | None:
    """The algorithm a patch keeps: the baseline spec's, else the one the description places the baseline at,
    else the task's only one."""
    algo = baseline.get("algorithm")
    if isinstance(algo, dict) and isinstance(algo.get("name"), str):
        return str(algo["name"])
    point = description.get("baseline") or {}
    if isinstance(point.get("algorithm"), str):
        return str(point["algorithm"])
    options: list[Any] = next((h.get("options", []) for h in description.get("heads", []) if h.get("name") == "algorithm"), [])
    return str(options[0]) if len(options) == 1 else None


def from_description(description: dict[str, Any], baseline: dict[str, Any]) -> SearchSpace:
    """The search space of one task from its published design space and its baseline spec (the compact prompt's example)."""
    name = baseline_algorithm(description, baseline)
    space = SearchSpace()
    for head in description.get("heads", []):
        if not patchable(head, name):
            continue
        p = head["param"]
        path = tuple(str(head["path"]).split("."))
        if p["kind"] == "categorical":
            encoded = any(isinstance(o, (list, dict)) for o in head["options"])
            space.params.append(Param(head["name"], path, "categorical", choices=tuple(p["choices"]), encoded=encoded))
        else:
            options = tuple(float(o) if p["kind"] == "float" else int(o) for o in head["options"])
            space.params.append(Param(head["name"], path, p["kind"], float(p["low"]), float(p["high"]), bool(p["log"]), options=options))
    return space


def read_descriptions(path: str) -> dict[str, dict[str, Any]]:
    """The task descriptions in a file ``rrl space --out FILE`` wrote (one task's, or every task's), by task id."""
    data = json.loads(Path(path).read_text())
    listed = data["tasks"] if isinstance(data, dict) and "tasks" in data else [data]
    return {d["task"]: d for d in listed}
