"""Episodes of rounds with feedback: the model answers a task's patch prompt, `rrl serve` trains the job
and answers with what a practitioner would see of it, the model answers again with a patch over its
episode's last valid job, up to ``rounds`` jobs. The harness pays the episode the mean of its jobs'
rewards (``POST /v1/episodes/{id}/close``); between rounds the model reads only the feedback's ``next``
turn (the job's status, reason, own validation figure and cost, the job its next patch applies to),
never a hidden score or a reward.

One episode is one conversation: the task's prompt, then per round the model's answer and the
harness's ``next`` turn as a user message. For GRPO it is one sequence whose model tokens are trained
and whose harness tokens are not (TRL's ``env_mask``): :class:`RoundRollout` is a ``rollout_func`` for
TRL's GRPOTrainer, :class:`EpisodeReward` its reward function, and every completion of an episode
shares the episode's advantage. The evaluation and the frozen control arm drive the same episodes
with a plain ``generate`` (:func:`batched_generate`).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .client import MAX_EPISODE_SUBMISSIONS, Message, RrlClient, RrlError, RrlTimeout, SubmissionFeedback

log = logging.getLogger(__name__)

Generate = Callable[[list[list[int]]], list[list[int]]]
"""Completion token ids for a batch of prompt token ids (each completion ends with the end-of-sequence
token when the model finished its answer)."""


@dataclass
class Episode:
    """One episode as it ran: the task, the conversation, the model's answers, the harness's feedback and
    the episode's reward (None: the harness could not score it). ``completion_ids`` and ``env_mask`` are
    the sequence after the prompt: the model's tokens (mask 1) and the harness's turns (mask 0)."""

    task: str
    messages: list[Message]
    prompt_ids: list[int]
    episode: int | None = None
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    feedback: list[SubmissionFeedback | None] = field(default_factory=list)
    truncated: list[bool] = field(default_factory=list)
    reward: float | None = None
    error: str | None = None


def prompt_token_ids(tokenizer: Any, messages: Sequence[Message]) -> list[int]:
    """The token ids of ``messages`` with the generation prompt, as the chat template writes them."""
    out = tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=True)
    ids = out["input_ids"] if isinstance(out, Mapping) or hasattr(out, "keys") else out
    return [int(t) for t in ids]


def continuation_ids(tokenizer: Any, messages: Sequence[Message], answer: str, turn: str) -> list[int]:
    """The token ids that follow the model's answer (through its end-of-sequence token) up to the start of
    its next answer: the rest of the assistant turn as the chat template writes it, the user ``turn`` and
    the generation prompt. Raises ValueError when the template does not write the answer as generated."""
    before = tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False)
    after = tokenizer.apply_chat_template(
        [*messages, {"role": "assistant", "content": answer}, {"role": "user", "content": turn}], add_generation_prompt=True, tokenize=False
    )
    eos = tokenizer.eos_token or ""
    at = len(before) + len(answer)
    if not after.startswith(before) or after[len(before) : at] != answer or not after.startswith(eos, at):
        raise ValueError("the chat template does not write the assistant's answer as it was generated, ended by the end-of-sequence token")
    return list(tokenizer(after[at + len(eos) :], add_special_tokens=False)["input_ids"])


def batched_generate(model: Any, tokenizer: Any, kwargs: Mapping[str, Any]) -> Generate:
    """A :data:`Generate` over ``model.generate`` (left-padded batches, ``kwargs`` as given), completions cut
    after their first end-of-sequence token, as TRL's transformers path does."""
    import torch

    def generate(prompt_ids: list[list[int]]) -> list[list[int]]:
        width = max(len(p) for p in prompt_ids)
        pad = tokenizer.pad_token_id
        ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompt_ids])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompt_ids])
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=mask, **kwargs)
        done: list[list[int]] = []
        for seq in out[:, width:].tolist():
            cut = seq.index(tokenizer.eos_token_id) + 1 if tokenizer.eos_token_id in seq else len(seq)
            done.append(seq[:cut])  # padding only ever follows the end-of-sequence token
        return done

    return generate


def run_episodes(
    client: RrlClient,
    tokenizer: Any,
    generate: Generate,
    prompts: Sequence[Sequence[Message]],
    tasks: Sequence[str],
    rounds: int,
    timing: dict[str, float] | None = None,
) -> list[Episode]:
    """Runs one episode of ``rounds`` jobs per prompt, all in step: each round is one batched generation,
    then the round's submissions in parallel (each waits for its job); finally every episode is closed and
    its reward read. A harness that does not answer (an error or a timeout) makes that episode's reward
    None (no signal), never a crash. ``timing`` (when given) gets ``generation_s``, ``harness_s`` and ``model_tokens``."""
    if not 1 <= rounds <= MAX_EPISODE_SUBMISSIONS:
        raise ValueError(f"rounds must be 1 to {MAX_EPISODE_SUBMISSIONS}, got {rounds}")
    episodes = [Episode(task=t, messages=list(p), prompt_ids=prompt_token_ids(tokenizer, p)) for p, t in zip(prompts, tasks, strict=True)]
    spent = {"generation_s": 0.0, "harness_s": 0.0, "model_tokens": 0.0}
    began = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(episodes)))) as pool:
        list(pool.map(lambda e: _open(client, e, rounds), episodes))
        for r in range(rounds):
            t0 = time.perf_counter()
            new = generate([e.prompt_ids + e.completion_ids for e in episodes])
            spent["generation_s"] += time.perf_counter() - t0
            spent["model_tokens"] += sum(len(ids) for ids in new)
            for e, ids in zip(episodes, new, strict=True):
                finished = bool(ids) and ids[-1] == tokenizer.eos_token_id
                e.truncated.append(not finished)
                e.completion_ids.extend(ids)
                e.env_mask.extend([1] * len(ids))
                e.answers.append(tokenizer.decode(ids, skip_special_tokens=True))
            list(pool.map(lambda e: _submit(client, e), episodes))
            if r + 1 < rounds:
                for e in episodes:
                    _append_turn(tokenizer, e)
        list(pool.map(lambda e: _close(client, e), episodes))
    spent["harness_s"] = time.perf_counter() - began - spent["generation_s"]
    if timing is not None:
        timing.update(spent)
    return episodes


def _open(client: RrlClient, e: Episode, rounds: int) -> None:
    try:
        e.episode = client.open_episode(e.task, rounds, idempotency_key=f"rrl-rounds-{uuid.uuid4()}")["episode"]
    except (RrlError, RrlTimeout) as err:
        e.error = f"the harness did not open the episode: {err}"
        log.warning("%s: %s", e.task, e.error)


def _submit(client: RrlClient, e: Episode) -> None:
    if e.episode is None:
        e.feedback.append(None)
        return
    try:
        e.feedback.append(client.submit_to_episode(e.episode, e.answers[-1], idempotency_key=f"rrl-round-{uuid.uuid4()}"))
    except (RrlError, RrlTimeout) as err:
        e.feedback.append(None)
        e.error = f"the harness did not answer a submission: {err}"
        log.warning("%s: %s", e.task, e.error)


def _append_turn(tokenizer: Any, e: Episode) -> None:
    """Adds the harness's next turn to the conversation and its tokens (mask 0) to the sequence."""
    fb = e.feedback[-1]
    turn = fb["next"] if fb else "The harness did not answer for this job. Reply with a JSON merge patch of the current job. JSON only."
    answer = e.answers[-1]
    if e.truncated[-1]:
        # An answer cut at the length limit gets its end-of-sequence token from the harness's side.
        e.completion_ids.append(tokenizer.eos_token_id)
        e.env_mask.append(0)
    ids = continuation_ids(tokenizer, e.messages, answer, turn)
    e.messages.extend([{"role": "assistant", "content": answer}, {"role": "user", "content": turn}])
    e.completion_ids.extend(ids)
    e.env_mask.extend([0] * len(ids))


def _close(client: RrlClient, e: Episode) -> None:
    if e.episode is None:
        return
    try:
        e.reward = client.close_episode(e.episode)["reward"]
    except (RrlError, RrlTimeout) as err:
        e.error = f"the harness did not close the episode: {err}"
        log.warning("%s: %s", e.task, e.error)


class EpisodeReward:
    """TRL reward function for :class:`RoundRollout`: each completion's episode reward, as `rrl serve` paid it
    (None: unscorable, left out of the loss by ``RrlGRPOTrainer``)."""

    is_harness_reward = True
    """``RrlGRPOTrainer`` treats its None as the harness's: the row is masked out of the loss."""

    def __init__(self) -> None:
        self.__name__ = "rrl_episode"

    def __call__(self, prompts: Any = None, completions: Any = None, episode_reward: Sequence[float | None] = (), **kwargs: Any) -> list[float | None]:
        return list(episode_reward)


class RoundRollout:
    """A ``rollout_func`` for TRL's GRPOTrainer: every prompt of the batch (TRL repeats each ``num_generations``
    times) is one episode of ``rounds`` jobs through :func:`run_episodes`, generated with the trainer's own
    transformers path (so its generation settings and any logits processor on ``model.generate`` apply).
    ``task_of`` maps a prompt to its task. The episodes of the last call are kept in ``last``."""

    def __init__(self, client: RrlClient, tokenizer: Any, rounds: int, task_of: Callable[[Sequence[Message]], str]) -> None:
        self.client = client
        self.tokenizer = tokenizer
        self.rounds = rounds
        self.task_of = task_of
        self.last: list[Episode] = []
        self.timing: dict[str, float] = {}

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        tasks = [self.task_of(p) for p in prompts]

        def generate(ids: list[list[int]]) -> list[list[int]]:
            return [list(c) for c in trainer._generate_single_turn(ids, None, {})[0]]

        self.last = run_episodes(self.client, self.tokenizer, generate, prompts, tasks, self.rounds, self.timing)
        return {
            "prompt_ids": [e.prompt_ids for e in self.last],
            "completion_ids": [e.completion_ids for e in self.last],
            "logprobs": None,
            "env_mask": [e.env_mask for e in self.last],
            "episode_reward": [e.reward for e in self.last],
        }


def task_router(rows: Sequence[Mapping[str, Any]]) -> Callable[[Sequence[Message]], str]:
    """Maps a prompt (chat messages) to its task by its last message's text, from the dataset's rows
    (``prompt`` and ``task``); raises ValueError for a prompt no row holds."""
    by_text = {str(row["prompt"][-1]["content"]): str(row["task"]) for row in rows}

    def task_of(prompt: Sequence[Message]) -> str:
        text = str(prompt[-1]["content"])
        if text not in by_text:
            raise ValueError(f"a prompt of no task of the dataset: {text[:120]!r}")
        return by_text[text]

    return task_of


def episode_line(episodes: Sequence[Episode]) -> dict[str, Any]:
    """What a step's episodes came to, for ``log.jsonl``: the mean episode reward, the share of valid jobs,
    per round, the share of truncated answers and of episodes the harness could not score."""
    n = len(episodes)
    rewards = [e.reward for e in episodes if e.reward is not None]
    rounds = max((len(e.feedback) for e in episodes), default=0)
    valid = [[fb is not None and fb["status"] != "invalid" for e in episodes for fb in e.feedback[r : r + 1]] for r in range(rounds)]
    answers = [t for e in episodes for t in e.truncated]
    return {
        "outer/reward": sum(rewards) / len(rewards) if rewards else None,
        "outer/valid_share": (sum(sum(v) for v in valid) / sum(len(v) for v in valid)) if valid and any(valid) else None,
        "outer/valid_share_by_round": [round(sum(v) / len(v), 3) if v else None for v in valid],
        "outer/truncated_share": (sum(answers) / len(answers)) if answers else None,
        "outer/unscorable_share": (sum(e.reward is None for e in episodes) / n) if n else None,
    }


__all__ = [
    "Episode",
    "EpisodeReward",
    "Generate",
    "RoundRollout",
    "batched_generate",
    "continuation_ids",
    "episode_line",
    "prompt_token_ids",
    "run_episodes",
    "task_router",
]
