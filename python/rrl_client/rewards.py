"""Reward functions for RL frameworks, backed by `rrl serve`.

- :class:`TrlReward` has TRL's ``reward_funcs`` signature: ``reward(prompts, completions, **kwargs)``
  returning one float per completion. The task id comes from a dataset column (``task`` by default)
  that TRL passes through ``kwargs``.
- :func:`compute_score` (one completion) and :func:`compute_score_batch` (a batch) have verl's
  custom reward function signatures; use the batched one with ``reward_model.reward_manager=batch``
  so a whole group is one call.

An unscorable completion (the harness's reward ``None``) is never paid as a number: TRL gets None
(``rrl_client.grpo_trainer.RrlGRPOTrainer`` leaves it out of the loss); verl needs a float, so the batched
function hands it the mean of the scored completions of its prompt row (``extra_info["index"]``),
an advantage of 0, and the per-sample one, which cannot see the row, hands -1 (``NULL_SINGLE``).

Either way the completions of one task in a batch go to the harness in ONE ``POST /v1/rewards``;
batches that hold several tasks make one call per task, in parallel. The harness turns each
completion into a job, trains and scores it, and answers with numbers only.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .client import RewardResult, RrlClient
from .contracts import DEFAULT_URL

Completion = str | Sequence[Mapping[str, Any]]
"""A completion as TRL passes it: raw text, or (conversational datasets) a list of chat messages."""


def completion_text(completion: Completion) -> str:
    """The raw model text of a completion: the string itself, or the assistant messages' content joined."""
    if isinstance(completion, str):
        return completion
    parts: list[str] = []
    for message in completion:
        if message.get("role", "assistant") != "assistant":
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    return "".join(parts)


def score_grouped(client: RrlClient, tasks: Sequence[str], texts: Sequence[str]) -> tuple[list[float | None], list[RewardResult]]:
    """Rewards for completions ``texts[i]`` of task ``tasks[i]``: one ``/v1/rewards`` call per distinct task, in parallel, order kept."""
    if len(tasks) != len(texts):
        raise ValueError(f"{len(tasks)} task ids for {len(texts)} completions")
    groups: dict[str, list[int]] = {}
    for i, task in enumerate(tasks):
        if not isinstance(task, str) or not task:
            raise ValueError(f"completion {i}: the task id must be a non-empty string, got {task!r}")
        groups.setdefault(task, []).append(i)
    rewards: list[float | None] = [None] * len(texts)
    results: list[RewardResult | None] = [None] * len(texts)

    def one(task: str) -> None:
        idx = groups[task]
        answer = client.rewards(task, [texts[i] for i in idx])
        for i, r, res in zip(idx, answer["rewards"], answer["results"]):
            rewards[i] = r
            results[i] = res

    if len(groups) == 1:
        one(next(iter(groups)))
    else:
        with ThreadPoolExecutor(max_workers=min(8, len(groups))) as pool:
            for f in [pool.submit(one, t) for t in groups]:
                f.result()
    return rewards, [r for r in results if r is not None]


class TrlReward:
    """A TRL ``reward_funcs`` entry that asks `rrl serve` for the rewards.

    ``GRPOTrainer(reward_funcs=[TrlReward(client)], train_dataset=ds)`` where ``ds`` has a ``prompt``
    column and a ``task`` column (the task id of each prompt). The last call's per-completion results
    (status, score, reason, job) are kept in ``last_results`` and their counts in ``totals``.
    """

    def __init__(self, client: RrlClient, task_column: str = "task", name: str = "rrl") -> None:
        self.client = client
        self.task_column = task_column
        self.__name__ = name  # TRL names the reward's log columns after it
        self.last_results: list[RewardResult] = []
        self.last_rewards: list[float | None] = []
        self.last_tasks: list[str] = []
        self.last_texts: list[str] = []
        self.last_call_started = 0.0
        self.last_call_seconds = 0.0
        self.totals: dict[str, int] = {}

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Completion], **kwargs: Any) -> list[float | None]:
        """One reward per completion, in order; None where the harness could not score it (no advantage; RrlGRPOTrainer leaves it out of the loss)."""
        tasks = kwargs.get(self.task_column)
        if tasks is None:
            raise KeyError(f"the dataset has no {self.task_column!r} column (the task id of each prompt)")
        self.last_call_started = time.time()
        rewards, results = score_grouped(self.client, list(tasks), [completion_text(c) for c in completions])
        self.last_call_seconds = time.time() - self.last_call_started
        self.last_results = results
        self.last_rewards = rewards
        self.last_tasks = [str(t) for t in tasks]
        self.last_texts = [completion_text(c) for c in completions]
        for r in results:
            self.totals[r["status"]] = self.totals.get(r["status"], 0) + 1
        return rewards


# -- verl -------------------------------------------------------------------------------------

_clients: dict[tuple[str, str | None], RrlClient] = {}


def _env_client() -> RrlClient:
    """The client verl's reward functions use: ``RRL_URL`` (default loopback:8377), token in ``RRL_TOKEN``."""
    url = os.environ.get("RRL_URL", DEFAULT_URL)
    token = os.environ.get("RRL_TOKEN") or None
    key = (url, token)
    if key not in _clients:
        _clients[key] = RrlClient(url, token)
    return _clients[key]


def _task_of(ground_truth: Any, extra_info: Any) -> str:
    if isinstance(extra_info, Mapping) and isinstance(extra_info.get("task"), str):
        return str(extra_info["task"])
    if isinstance(ground_truth, str) and ground_truth:
        return ground_truth
    raise ValueError("no task id: put it in extra_info['task'] (or reward_model.ground_truth) of each row")


NULL_SINGLE = -1.0
"""What the per-sample :func:`compute_score` hands verl for an unscorable completion: it cannot see
the completion's row, so it cannot hand the row's mean; any other number could pay a completion for
making the harness fail, so it hands the least a job is paid (a failed job's -1)."""


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None = None, **kwargs: Any) -> float:
    """verl's per-sample custom reward function: one completion, one call (prefer :func:`compute_score_batch`).

    An unscorable completion (reward None) gets ``NULL_SINGLE`` (-1): this form cannot see the other
    completions of its prompt, and no higher number is safe from an agent that seeks nulls."""
    reward = _env_client().rewards(_task_of(ground_truth, extra_info), [solution_str])["rewards"][0]
    return NULL_SINGLE if reward is None else reward


def _row_of(extra_info: Any, task: str) -> Any:
    """The prompt row a completion answers: ``extra_info["index"]`` (written by rrl_client.verl_data),
    else its task (then a null gets the mean of its task's scored completions in the batch)."""
    if isinstance(extra_info, Mapping) and extra_info.get("index") is not None:
        return ("index", extra_info["index"])
    return ("task", task)


def row_means(rewards: Sequence[float | None], rows: Sequence[Any]) -> list[float]:
    """The rewards with each None replaced by the mean of the scored rewards of its row (0.0 when the
    row has none), so that under GRPO an unscorable completion's advantage is 0."""
    scored: dict[Any, list[float]] = {}
    for r, row in zip(rewards, rows):
        if r is not None:
            scored.setdefault(row, []).append(r)
    means = {row: sum(v) / len(v) for row, v in scored.items()}
    return [r if r is not None else means.get(row, 0.0) for r, row in zip(rewards, rows)]


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    **kwargs: Any,
) -> list[float]:
    """verl's batched custom reward function (``reward_model.reward_manager=batch``): one call per task in the batch.

    verl takes numbers: an unscorable completion (reward None) gets the mean of the scored
    completions of its prompt row (``extra_info["index"]``; 0.0 when none of the row was scored),
    so its GRPO advantage is 0 and the rest of its row is compared among themselves only."""
    extras: Sequence[Any] = extra_infos if extra_infos is not None else [None] * len(solution_strs)
    tasks = [_task_of(g, e) for g, e in zip(ground_truths, extras)]
    rewards, _ = score_grouped(_env_client(), tasks, list(solution_strs))
    return row_means(rewards, [_row_of(e, t) for e, t in zip(extras, tasks)])
