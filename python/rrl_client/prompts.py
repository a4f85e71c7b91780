"""The prompt dataset every trainer here starts from: rows cycling over the tasks, each the task's chat
messages from `rrl serve` (``GET /v1/tasks/{id}/prompt``) and its id, each prompt fetched once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

from .client import Message, PromptResponse, RrlClient


class PromptRow(TypedDict):
    """One row: the task's chat messages and its id."""

    prompt: list[Message]
    task: str


def prompt_rows(
    client: RrlClient, task_ids: Sequence[str], rows: int, form: str = "full", doc_chars: int | None = None
) -> tuple[list[PromptRow], dict[str, PromptResponse]]:
    """``rows`` rows cycling over ``task_ids`` in order, and each task's prompt as the server answered it
    (its messages and, in the compact form, its example spec); ``doc_chars``, the patch form's documentation budget."""
    if not task_ids:
        raise ValueError("prompt rows: no task ids")
    answers = {t: client.prompt_response(t, form, doc_chars) for t in task_ids}
    out: list[PromptRow] = []
    for i in range(rows):
        task = task_ids[i % len(task_ids)]
        out.append({"prompt": answers[task]["messages"], "task": task})
    return out, answers


def prompt_dataset(
    client: RrlClient, task_ids: Sequence[str], rows: int, form: str = "full", doc_chars: int | None = None
) -> tuple[Any, dict[str, PromptResponse]]:
    """:func:`prompt_rows` as a ``datasets.Dataset`` (columns ``prompt`` and ``task``), and each task's prompt."""
    from datasets import Dataset

    out, answers = prompt_rows(client, task_ids, rows, form, doc_chars)
    return Dataset.from_list([dict(r) for r in out]), answers
