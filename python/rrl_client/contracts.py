"""The values the TypeScript side owns and the Python side reads: ``contracts.json`` beside this module.

``src/contracts.test.ts`` writes that file from the TypeScript that owns each value and fails when they
differ, so nothing here is typed by hand: the server's default address, the extraction rule's bounds,
the family task-id format, the field names of ``rrl experiment transfer``'s ``transfer.json`` and the
fields of the server's answers (its OpenAPI document's component schemas).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CONTRACTS: dict[str, Any] = json.loads(Path(__file__).with_name("contracts.json").read_text(encoding="utf-8"))
"""The whole file, as the TypeScript wrote it."""

DEFAULT_URL: str = str(CONTRACTS["serve"]["defaultUrl"])
"""Where `rrl serve` listens unless told otherwise (its default host and port)."""

DEFAULT_DRAW_COUNT: int = int(CONTRACTS["familyTask"]["defaultDrawCount"])
"""How many tasks ``--family NAME`` draws when no ``:COUNT`` is given."""

TRANSFER_RESULT_FIELDS: frozenset[str] = frozenset(CONTRACTS["transfer"]["resultFields"])
"""The top-level fields of ``transfer.json``."""
TRANSFER_REPETITION_FIELDS: frozenset[str] = frozenset(CONTRACTS["transfer"]["repetitionFields"])
"""The fields of one repetition (one seed under one secret) in ``transfer.json``'s ``perSeed``."""
TRANSFER_ROW_FIELDS: frozenset[str] = frozenset(CONTRACTS["transfer"]["rowFields"])
"""The fields of one held-out task's row in ``transfer.json``'s ``rows``."""
ANSWER_FIELDS: dict[str, dict[str, frozenset[str]]] = {
    name: {"properties": frozenset(spec["properties"]), "required": frozenset(spec["required"])} for name, spec in CONTRACTS["answers"].items()
}
"""The fields of each answer schema of `rrl serve` (``Schema`` or ``Schema.field`` for an object nested in one): all, and the required ones."""


def family_task_id(family: str, seed: int, index: int) -> str:
    """The id of the ``index``-th task ``family`` draws with ``seed``, as the harness names it."""
    return str(CONTRACTS["familyTask"]["idTemplate"]).format(family=family, seed=seed, index=index)


def draw_task_ids(draws: Sequence[str], seed: int) -> list[str]:
    """The task ids of family draws ``NAME[:COUNT]`` with ``seed`` (as ``rrl serve --family`` draws them)."""
    ids: list[str] = []
    for draw in draws:
        name, _, count = draw.partition(":")
        ids += [family_task_id(name, seed, i) for i in range(int(count) if count else DEFAULT_DRAW_COUNT)]
    return ids
