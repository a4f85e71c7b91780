"""The trainer-side format reward: an order among refused completions from the example spec, 0 for accepted ones, None for nulls."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rrl_client.client import RewardResult
from rrl_client.rewards import TrlReward
from rrl_client.shaping import FormatReward, key_order_score, key_paths, leaf_paths, structure_score, written_key_paths

EXAMPLE: dict[str, Any] = {"task": "t", "model": {"hidden": [64, 64], "activation": "tanh"}, "budget": {"envSteps": 1000, "targetReturn": None}, "seed": 1}


def test_leaf_paths_and_structure_score() -> None:
    assert leaf_paths(EXAMPLE) == {
        "task": "str",
        "model.hidden": "list",
        "model.activation": "str",
        "budget.envSteps": "number",
        "budget.targetReturn": "null",
        "seed": "number",
    }
    assert structure_score(EXAMPLE, EXAMPLE) == 1.0
    assert structure_score(None, EXAMPLE) == 0.0
    # Values may change; kinds and places may not.
    changed = {"task": "t", "model": {"hidden": [8], "activation": "relu"}, "budget": {"envSteps": 5, "targetReturn": 400}, "seed": 9}
    assert structure_score(changed, EXAMPLE) == 1.0
    half = {"task": "t", "model": {"hidden": "big"}, "seed": 1}
    assert structure_score(half, EXAMPLE) == pytest.approx(2 / 6)
    # Extra fields cost half their share: the example's shape, not more, is what validates.
    padded = {**EXAMPLE, "x": 1, "y": 2, "z": 3}
    assert structure_score(padded, EXAMPLE) == pytest.approx(1 - 0.5 * 3 / 6)


def test_key_order_score_credits_an_unfinished_copy_at_the_right_depth() -> None:
    assert key_paths(EXAMPLE) == ["task", "model", "model.hidden", "model.activation", "budget", "budget.envSteps", "budget.targetReturn", "seed"]
    cut = '{"task": "t", "model": {"hidden": [64, 64], "activation": "tanh"}, "budget": {"envSt'
    assert written_key_paths(cut) == ["task", "model", "model.hidden", "model.activation", "budget"]
    assert key_order_score(cut, EXAMPLE) == pytest.approx(5 / 8)
    # the same keys flattened are not the example's paths: they earn nothing, and cost as extras
    flat = '{"task": "t", "model": "m", "hidden": [1], "activation": "tanh", "budget": 1, "envSteps": 5}'
    assert key_order_score(flat, EXAMPLE) == pytest.approx(2 / 8 - 0.25 * 3 / 8)
    # out of order keys are not matched; a loop of unknown keys costs a quarter of their share, at most 0.25
    assert key_order_score('{"seed": 1, "task": "t"}', EXAMPLE) == pytest.approx(1 / 8)
    loop = '{"task": "t", ' + '"data": {' * 20
    assert key_order_score(loop, EXAMPLE) == 0.0
    assert key_order_score(json.dumps(EXAMPLE), EXAMPLE) == 1.0
    # braces inside strings do not move the depth
    assert written_key_paths('{"a": "x{y", "b": {"c": "}"}, "d": 1}') == ["a", "b", "b.c", "d"]
    # a closer that does not match its opener ends the scan: what follows does not parse
    assert written_key_paths('{"sources": [{"id": "x", "weight": 1}}, "size": 1, "seed": 2}') == ["sources", "sources.id", "sources.weight"]
    # objects in arrays are named through the array's key
    assert written_key_paths('{"sources": [{"id": "x", "weight": 1}], "size": null}') == ["sources", "sources.id", "sources.weight", "size"]


class Outer(TrlReward):
    """A TrlReward whose last call is set by the test (no server needed to test the order contract)."""

    def __init__(self, statuses: list[str], rewards: list[Any] | None = None) -> None:
        self.last_results = [RewardResult(status=s, score=None, reason=None, job=1) for s in statuses]  # type: ignore[typeddict-item]
        self.last_rewards = rewards if rewards is not None else [-1.0 if s in ("invalid", "failed") else 0.0 for s in statuses]


def test_format_reward_orders_refused_completions_only() -> None:
    outer = Outer(["succeeded", "invalid", "invalid", "failed"])
    fmt = FormatReward(outer, {"t": EXAMPLE})
    texts = ["anything", '{"task": "t", "seed": 1}', "no json", "{}"]
    scores = fmt(prompts=[""] * 4, completions=texts, task=["t"] * 4)
    # accepted (succeeded or failed): 0, the harness's reward alone; refused: -1 + 0.9 x the shape
    assert scores == [0.0, pytest.approx(-1 + 0.9 * 2 / 6), -1.0, 0.0]
    # text that does not parse still earns its place for the example's keys in order
    cut = '{"task": "t", "model": {"hidden": [64, 64], "activation": "tanh"}, "budget": {"envSt'
    assert fmt(prompts=[""] * 4, completions=[cut] * 4, task=["t"] * 4)[1] == pytest.approx(-1 + 0.9 * 5 / 8)
    with pytest.raises(RuntimeError, match="after the TrlReward"):
        fmt(prompts=[""], completions=["x"], task=["t"])
    with pytest.raises(KeyError, match="task"):
        fmt(prompts=[""] * 4, completions=texts)


def test_every_refused_total_is_below_every_accepted_one_and_a_null_is_no_number() -> None:
    # the harness's rewards are clipped to [-1, 1] (a bonus aside); the worst accepted total is a failed job's -1
    accepted = [1.0, 0.2, 0.0, -0.4, -1.0]
    statuses = ["succeeded"] * 4 + ["failed", "invalid", "invalid", "succeeded"]
    outer = Outer(statuses, [*accepted, -1.0, -1.0, None])
    perfect = json.dumps(EXAMPLE)  # the example's whole shape, refused (say, a value out of bounds)
    texts = ["a", "b", "c", "d", "e", perfect, "nothing", '{"task": "t"}']
    fmt = FormatReward(outer, {"t": EXAMPLE})
    shaped = fmt(prompts=[""] * 8, completions=texts, task=["t"] * 8)
    assert shaped[:5] == [0.0] * 5 and shaped[7] is None
    for weight in (0.01, 0.5, 2.0):
        totals = [h + weight * f for h, f in zip([*accepted, -1.0, -1.0], shaped[:7])]
        assert totals[:5] == accepted, "a shaping term pays nothing for an accepted completion"
        assert max(totals[5:7]) < -1 <= min(totals[:5]), "every refused total is below every accepted one"
        assert totals[5] > totals[6], "the refused completion closer to the example ranks higher"


def test_an_unchanged_completion_earns_no_format_credit(fake: Any) -> None:
    from rrl_client.client import RrlClient

    outer = TrlReward(RrlClient(fake.url))
    fmt = FormatReward(outer, {"iris-classify": {"task": "iris-classify", "model": {"hidden": [8]}, "seed": 1}})
    texts = ['{"task": "iris-classify", "model": {"hidden": [8]}, "seed": 3}', '{"task": "iris-classify", "model": {"hidden": [16]}, "seed": 3}']
    kw = {"task": ["iris-classify"] * 2}
    harness = outer(prompts=[""] * 2, completions=texts, **kw)
    shaped = fmt(prompts=[""] * 2, completions=texts, **kw)
    assert [r.get("unchanged") for r in outer.last_results] == [True, False]
    assert shaped == [0.0, 0.0], "changed or not, an accepted completion earns no format credit"
    total = [h + 0.5 * f for h, f in zip(harness, shaped)]
    assert total == harness, "the trainer never pays an accepted completion more than the harness does"
