"""What the Python side reads of the contracts the TypeScript owns (``rrl_client/contracts.json``,
written and checked by ``src/contracts.test.ts``): the readers use it, and read only fields it names."""

from __future__ import annotations

from rrl_client import contracts
from rrl_client.answers import ANSWER_SCHEMAS
from rrl_client.contracts import (
    ANSWER_FIELDS,
    DEFAULT_URL,
    TRANSFER_REPETITION_FIELDS,
    TRANSFER_RESULT_FIELDS,
    TRANSFER_ROW_FIELDS,
    draw_task_ids,
    family_task_id,
)
from rrl_client.heldout.report import transfer_fields_read


def test_family_draws_are_named_as_the_families_name_their_tasks() -> None:
    assert family_task_id("rings", 1, 0) == "rings-fam-1-0"
    assert draw_task_ids(["acrobot:2", "rings:1"], 1) == ["acrobot-fam-1-0", "acrobot-fam-1-1", "rings-fam-1-0"]
    draws = draw_task_ids(["vega-more"], 3)
    assert len(draws) == contracts.DEFAULT_DRAW_COUNT and draws[0] == "vega-more-fam-3-0"


def test_the_default_address_is_the_server_s() -> None:
    assert DEFAULT_URL.startswith("http://") and DEFAULT_URL.rsplit(":", 1)[1].isdigit()


def test_the_transfer_report_reads_only_fields_the_typescript_writes() -> None:
    read = transfer_fields_read()
    assert read["result"] <= TRANSFER_RESULT_FIELDS, read["result"] - TRANSFER_RESULT_FIELDS
    assert read["repetition"] <= TRANSFER_REPETITION_FIELDS, read["repetition"] - TRANSFER_REPETITION_FIELDS
    assert read["row"] <= TRANSFER_ROW_FIELDS, read["row"] - TRANSFER_ROW_FIELDS


def test_the_answer_types_read_only_fields_the_server_answers() -> None:
    for schema, answer in ANSWER_SCHEMAS.items():
        fields = ANSWER_FIELDS[schema]
        read = answer.__required_keys__ | answer.__optional_keys__
        assert read <= fields["properties"], (answer.__name__, read - fields["properties"])
        assert answer.__required_keys__ <= fields["required"], (answer.__name__, answer.__required_keys__ - fields["required"])
