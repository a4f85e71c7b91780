"""The search space of the Optuna arm, derived from a task's patch schema and its baseline spec.

Small and general on purpose (the same rules for every task):

- the **algorithm hyperparameters the baseline sets** (its algorithm's branch of the schema; ``name``
  is kept): a number with ``minimum``/``maximum`` is a float, an integer an int — on a log scale when
  ``minimum > 0`` and ``maximum / minimum >= 100`` and the field is a learning rate or a step size, or an
  integer (batch sizes, rollout lengths, epochs); an enum or a boolean is categorical;
- ``model.hidden``: a choice among a few widths (``WIDTHS``), as many layers as the baseline's (one
  when it has none, plus the linear ``[]``), within the schema's item bounds and ``maxItems``;
- ``dataset.sources`` (supervised tasks, when the baseline names sources): one of the task's sources
  alone, or all of them with equal weights;
- the budget and everything else left at the baseline.

When the baseline spec sets no algorithm field, the schema's fields of its algorithm are the space.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Optional, Union

WIDTHS = (16, 32, 64, 128, 256)
LOG_RATIO = 100.0
_RATE = re.compile(r"(learning_?rate|lr$|step_?size|stepsize|alpha$)", re.IGNORECASE)

Value = Union[str, int, float, bool, None]


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
            elif p.kind == "int":
                v = int(v)
            elif p.kind == "float":
                v = float(v)
            node = patch
            for key in p.path[:-1]:
                node = node.setdefault(key, {})
            node[p.path[-1]] = v
        return patch


def _number(schema: Any) -> Optional[tuple[str, float, float]]:
    """``(kind, min, max)`` of a bounded number or integer schema (or its first such ``anyOf`` branch)."""
    if not isinstance(schema, dict):
        return None
    if "anyOf" in schema:
        for branch in schema["anyOf"]:
            found = _number(branch)
            if found:
                return found
        return None
    t = schema.get("type")
    if t in ("number", "integer") and "minimum" in schema and "maximum" in schema:
        lo, hi = float(schema["minimum"]), float(schema["maximum"])
        if hi > lo:
            return ("int" if t == "integer" else "float", lo, hi)
    return None


def _categorical(schema: Any) -> Optional[tuple[Value, ...]]:
    if not isinstance(schema, dict):
        return None
    if isinstance(schema.get("enum"), list) and len(schema["enum"]) > 1:
        return tuple(schema["enum"])
    if schema.get("type") == "boolean":
        return (True, False)
    return None


def algorithm_branch(schema: dict[str, Any], name: Optional[str]) -> dict[str, Any]:
    """The properties of the algorithm section's branch for the baseline's algorithm ``name``."""
    algo = schema.get("properties", {}).get("algorithm", {})
    branches = algo.get("anyOf", [algo])
    for b in branches:
        props = b.get("properties", {}) if isinstance(b, dict) else {}
        const = props.get("name", {}).get("const") if isinstance(props.get("name"), dict) else None
        if name is None or const == name or const is None:
            return dict(props)
    return {}


def _is_log(kind: str, key: str, lo: float, hi: float) -> bool:
    return lo > 0 and hi / lo >= LOG_RATIO and (kind == "int" or bool(_RATE.search(key)))


def hidden_choices(schema: dict[str, Any], baseline: dict[str, Any]) -> list[list[int]]:
    """A few ``model.hidden`` choices: the baseline's depth at each width of ``WIDTHS`` within the item bounds."""
    hidden = schema.get("properties", {}).get("model", {}).get("properties", {}).get("hidden")
    if not isinstance(hidden, dict):
        return []
    items = hidden.get("items", {}) if isinstance(hidden.get("items"), dict) else {}
    lo, hi = int(items.get("minimum", 1)), int(items.get("maximum", max(WIDTHS)))
    base = baseline.get("model", {}).get("hidden") if isinstance(baseline.get("model"), dict) else None
    depth = len(base) if isinstance(base, list) and base else 1
    depth = max(int(hidden.get("minItems", 0)), min(depth, int(hidden.get("maxItems", depth))))
    widths = [w for w in WIDTHS if lo <= w <= hi] or [min(max(lo, 8), hi)]
    out = [[w] * depth for w in widths] if depth > 0 else []
    if not (isinstance(base, list) and base) and int(hidden.get("minItems", 0)) == 0:
        out.insert(0, [])
    if isinstance(base, list) and all(isinstance(w, int) for w in base) and base not in out and lo <= min(base, default=lo) and max(base, default=hi) <= hi:
        out.append(list(base))
    return out


def source_choices(schema: dict[str, Any], baseline: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """``dataset.sources`` choices for a baseline that names sources: each source alone, then all of them."""
    ds = baseline.get("dataset")
    if not (isinstance(ds, dict) and isinstance(ds.get("sources"), list) and ds["sources"]):
        return []
    sources = schema.get("properties", {}).get("dataset", {}).get("properties", {}).get("sources")
    if not isinstance(sources, dict):
        return []
    ids = sources.get("items", {}).get("properties", {}).get("id", {}).get("enum")
    if not isinstance(ids, list) or not ids:
        return []
    most = int(sources.get("maxItems", len(ids)))
    out: list[list[dict[str, Any]]] = [[{"id": i, "weight": 1}] for i in ids]
    if 1 < len(ids) <= most:
        out.append([{"id": i, "weight": 1} for i in ids])
    return out


def derive(schema: dict[str, Any], baseline: dict[str, Any]) -> SearchSpace:
    """The search space of one task from its patch schema (``GET /v1/tasks/{id}/schema?form=patch``) and
    its baseline spec (the compact prompt's example)."""
    space = SearchSpace()
    algo = baseline.get("algorithm") if isinstance(baseline.get("algorithm"), dict) else {}
    assert isinstance(algo, dict)
    props = algorithm_branch(schema, algo.get("name") if isinstance(algo.get("name"), str) else None)
    keys = [k for k in props if k != "name" and (k in algo or not (set(algo) - {"name"}))]
    for key in keys:
        sub = props[key]
        num = _number(sub)
        if num:
            kind, lo, hi = num
            if kind == "int":
                lo, hi = math.ceil(lo), math.floor(hi)
            space.params.append(Param(f"algorithm.{key}", ("algorithm", key), kind, lo, hi, _is_log(kind, key, lo, hi)))
            continue
        cat = _categorical(sub)
        if cat:
            space.params.append(Param(f"algorithm.{key}", ("algorithm", key), "categorical", choices=cat))
    widths = hidden_choices(schema, baseline)
    if len(widths) > 1:
        space.params.append(Param("model.hidden", ("model", "hidden"), "categorical", choices=tuple(json.dumps(w) for w in widths), encoded=True))
    sources = source_choices(schema, baseline)
    if len(sources) > 1:
        space.params.append(Param("dataset.sources", ("dataset", "sources"), "categorical", choices=tuple(json.dumps(s) for s in sources), encoded=True))
    return space
