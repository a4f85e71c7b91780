"""A trainer-side format reward for GRPO: an order among the completions the harness refused.

A small model's first completions are rarely valid job specs, and the harness pays every invalid
one the same penalty, so a GRPO group of invalid completions has no advantage to learn from. The
usual remedy in GRPO recipes is a second, format reward beside the task reward (TRL sums its
``reward_funcs`` with ``reward_weights``). This one compares the first JSON object of a refused
completion with the valid example spec that the compact prompt shows (``GET
/v1/tasks/{id}/prompt?form=compact`` returns it as ``example``): the share of the example's fields
present with the same JSON type, or of its keys written in its order when the text does not parse,
less a penalty for fields the example does not have.

It is a shaping term that never pays for a job: it is 0 for every completion the harness accepted
(succeeded or failed, changed or not), so their totals are the harness's reward alone; it is
negative, in [-1, -0.1], for a refused (invalid) completion, so with any positive weight every
refused total is below -1, under every accepted one (the harness's reward is at least -1); and it
is None where the harness's reward is None (an unscorable job is no number: the trainer leaves it
out of the loss). It uses only what the prompt already shows; the hidden evaluation is not
involved. The harness's own reward (``outer/reward`` in the trainer's log) is what the
measurements report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .extract import extract_json_object
from .rewards import Completion, TrlReward, completion_text


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if v is None:
        return "null"
    return type(v).__name__


def leaf_paths(obj: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """Every leaf of a JSON object as ``path -> kind`` (arrays are leaves; null matches any kind)."""
    out: dict[str, str] = {}
    for key, value in obj.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping) and value:
            out.update(leaf_paths(value, path))
        else:
            out[path] = _kind(value)
    return out


def structure_score(obj: Mapping[str, Any] | None, example: Mapping[str, Any]) -> float:
    """In [0, 1]: the share of ``example``'s leaves that ``obj`` has with the same kind, less half the share of extra leaves."""
    if obj is None:
        return 0.0
    want = leaf_paths(example)
    got = leaf_paths(obj)
    if not want:
        return 0.0
    same = sum(1 for p, k in want.items() if p in got and (got[p] == k or "null" in (k, got[p])))
    extra = sum(1 for p in got if p not in want)
    return max(0.0, min(1.0, same / len(want) - 0.5 * min(1.0, extra / len(want))))


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:]')


def key_paths(obj: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The object's keys as dotted paths, depth first, in order (the order a faithful copy writes
    them); keys of objects inside arrays are named through the array's key."""
    out: list[str] = []
    for key, value in obj.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        out.append(path)
        if isinstance(value, Mapping):
            out.extend(key_paths(value, path))
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, Mapping):
                    out.extend(key_paths(item, path))
    return out


def written_key_paths(text: str) -> list[str]:
    """The dotted paths of the ``"key":`` written in ``text``, in order, by a tolerant scan of its
    braces and brackets: text that never closes, or breaks off, still has paths. The scan stops at
    the first closer that does not match its opener (``[...}``): from there on nothing parses."""
    stack: list[str] = []
    openers: list[str] = []
    pending: str | None = None
    out: list[str] = []
    tokens = _TOKEN.findall(text)
    for i, tok in enumerate(tokens):
        if tok in ("{", "["):
            stack.append(pending or "")
            openers.append(tok)
            pending = None
        elif tok in ("}", "]"):
            if not openers or openers.pop() != ("{" if tok == "}" else "["):
                break
            stack.pop()
            pending = None
        elif tok == ":":
            continue
        elif i + 1 < len(tokens) and tokens[i + 1] == ":" and stack:
            key = tok[1:-1]
            out.append(".".join([*(k for k in stack if k), key]))
            pending = key
        else:
            pending = None
    return out


def key_order_score(text: str, example: Mapping[str, Any]) -> float:
    """In [0, 1], for text that need not parse (a copy cut off, a brace missing): the share of the
    example's key paths written at the same place and in the same order (a greedy subsequence
    match), less a quarter of the share of paths the example does not have (at most 0.25)."""
    want = key_paths(example)
    if not want:
        return 0.0
    known = set(want)
    matched = 0
    extra = 0
    for path in written_key_paths(text):
        if matched < len(want) and path == want[matched]:
            matched += 1
        elif path not in known:
            extra += 1
    return max(0.0, min(1.0, matched / len(want) - 0.25 * min(1.0, extra / len(want))))


REFUSED_FLOOR = -1.0
"""The format score of a refused completion with no shape of the example (or no example to compare with)."""

REFUSED_CEILING = -0.1
"""The format score of a refused completion that has the example's whole shape: still below 0, so its
weighted total stays under -1, the least an accepted completion is paid."""


def refused_score(shape: float) -> float:
    """A refused completion's format score from its shape in [0, 1]: from REFUSED_FLOOR to REFUSED_CEILING."""
    return REFUSED_FLOOR + (REFUSED_CEILING - REFUSED_FLOOR) * max(0.0, min(1.0, shape))


class FormatReward:
    """A TRL ``reward_funcs`` entry for the shape of a refused completion; list it *after* ``outer``.

    TRL calls synchronous reward functions in order with the same completions, so this one reads
    what the harness just returned to ``outer``: None where the harness's reward is None
    (unscorable); 0 for a completion the harness accepted; for a refused (invalid) one,
    ``refused_score`` of the larger of ``structure_score`` (the first JSON object against the task's
    example) and ``key_order_score`` (the text, parsed or not).
    """

    def __init__(self, outer: TrlReward, examples: Mapping[str, Mapping[str, Any]], task_column: str = "task", name: str = "format") -> None:
        self.outer = outer
        self.examples = examples
        self.task_column = task_column
        self.__name__ = name
        self.last_scores: list[float | None] = []

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Completion], **kwargs: Any) -> list[float | None]:
        """One format score per completion, in order."""
        tasks = kwargs.get(self.task_column)
        if tasks is None:
            raise KeyError(f"the dataset has no {self.task_column!r} column (the task id of each prompt)")
        results = self.outer.last_results
        rewards = self.outer.last_rewards
        if len(results) != len(completions) or len(rewards) != len(completions):
            raise RuntimeError("FormatReward must come after the TrlReward it reads in reward_funcs (it reuses that call's results)")
        scores: list[float | None] = []
        for task, completion, result, reward in zip(tasks, completions, results, rewards):
            if reward is None:
                scores.append(None)  # unscorable: no number, from any reward function
            elif result["status"] != "invalid":
                scores.append(0.0)  # accepted: the harness's reward alone decides
            else:
                example = self.examples.get(task)
                text = completion_text(completion)
                shape = max(structure_score(extract_json_object(text), example), key_order_score(text, example)) if example else 0.0
                scores.append(refused_score(shape))
        self.last_scores = scores
        return scores
