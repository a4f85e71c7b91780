"""The completion-extraction rule against the harness's own cases: ``src/spec/extract.cases.json``
holds completions with what ``src/spec/extract.ts`` extracts from each (its test checks them there),
so ``rrl_client.extract`` drifting from the harness fails here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rrl_client.extract import MAX_CANDIDATES, extract_json_object

CASES_FILE = Path(__file__).resolve().parents[2] / "src" / "spec" / "extract.cases.json"
CASES: list[dict[str, Any]] = json.loads(CASES_FILE.read_text(encoding="utf-8"))["cases"]


def test_the_case_file_has_cases() -> None:
    assert len(CASES) >= 10


@pytest.mark.parametrize("case", CASES, ids=[str(c["why"]) for c in CASES])
def test_python_extracts_what_the_harness_extracts(case: dict[str, Any]) -> None:
    assert extract_json_object(case["completion"]) == case["extracted"]


def test_the_candidate_bound_is_the_harness_s() -> None:
    spec = '{"a": 1}'
    assert extract_json_object("{x " * (MAX_CANDIDATES - 1) + spec) == {"a": 1}
    assert extract_json_object("{x " * MAX_CANDIDATES + spec) is None
