"""Scoring a completion through the environment's own reward path, and the bridge to TRL's GRPOTrainer.

verifiers v1 has no trainer of its own (prime-rl is the trainer; it runs the env's rollouts on GPU
inference servers). Here a completion generated elsewhere (TRL, a script) becomes a one-turn
``vf.Trace`` (the task's prompt, then the completion as the sampled assistant message) and is
scored with ``Task.score(trace)``, the library's scoring entry point (what a rollout and
``vf-replay`` call): the task's ``@vf.reward`` functions run and record on the trace. A raising
reward is recorded as the trace's error, as the rollout does, and leaves its reward ``None``.

:class:`TrlReward` is a TRL ``reward_funcs`` entry built on that; the dataset rows come from
:func:`trl_rows` (``prompt``: the chat messages, ``task``: the task id TRL passes back).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pydantic
import verifiers.v1 as vf

from .taskset import prompt_messages

Completion = str | Sequence[Mapping[str, Any]]


def completion_text(completion: Completion) -> str:
    """The raw text of a completion: the string itself, or its assistant messages' content joined."""
    if isinstance(completion, str):
        return completion
    return "".join(str(m.get("content") or "") for m in completion if m.get("role", "assistant") == "assistant")


def tasks_of(env: Any) -> list[Any]:
    """The tasks (rows) of a ``vf.Env`` or a ``vf.Taskset``, loaded once."""
    taskset = env.taskset if isinstance(env, vf.Env) else env
    return list(taskset)


def completion_trace(task: Any, text: str) -> Any:
    """A finished one-turn trace of ``task``: its prompt messages, then ``text`` as the model's reply."""
    messages = pydantic.TypeAdapter(vf.Messages).validate_python(prompt_messages(task.data))
    nodes = [vf.MessageNode(parent=i - 1 if i else None, message=m) for i, m in enumerate(messages)]
    nodes.append(vf.MessageNode(parent=len(nodes) - 1 if nodes else None, message=vf.AssistantMessage(content=text), sampled=True))
    trace = vf.Trace(
        task=vf.TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
        agent=vf.AgentInfo(config=vf.AgentConfig()),
        nodes=nodes,
    )
    trace.stop("single_turn")
    trace.ok = True
    return trace


async def score_completion(task: Any, text: str) -> Any:
    """``text`` scored by ``task``'s rewards (``Task.score``); a raising reward becomes the trace's error."""
    trace = completion_trace(task, text)
    try:
        await task.score(trace)
    except Exception as err:  # noqa: BLE001  (the rollout's rule: any scoring failure is the trace's error, its reward stays None)
        trace.record_error(err)
    return trace


def trace_reward(trace: Any) -> float | None:
    """The trace's reward, or None when a reward did not run (an error, an unscorable completion)."""
    if not trace.ok or any(r is None for r in trace.rewards.values()):
        return None
    return float(trace.reward)


def trl_rows(env: Any) -> list[dict[str, Any]]:
    """Dataset rows for TRL: ``prompt`` (the task's chat messages) and ``task`` (its id), one per task."""
    return [{"prompt": prompt_messages(t.data), "task": str(t.data.id)} for t in tasks_of(env)]


class TrlReward:
    """A TRL ``reward_funcs`` entry that scores each completion through the environment's rewards.

    ``GRPOTrainer(reward_funcs=[TrlReward(env)], train_dataset=Dataset.from_list(trl_rows(env)))``. Each
    completion of a batch is scored concurrently (one harness request each); an unscorable one is
    ``None``, which TRL reads as "no reward from this function" (TRL 1.13: a completion no function
    scored is left out of its group's baseline and gets no advantage). The last call's traces are kept
    in ``last_traces``.
    """

    def __init__(self, env: Any, task_column: str = "task", name: str = "rrl_verifiers") -> None:
        self.tasks = {str(t.data.id): t for t in tasks_of(env)}
        self.task_column = task_column
        self.__name__ = name  # TRL names the reward's log columns after it
        self.last_traces: list[Any] = []
        self.last_call_seconds = 0.0

    async def score(self, task_ids: Sequence[str], texts: Sequence[str]) -> list[Any]:
        """The traces of ``texts[i]`` scored by task ``task_ids[i]``, concurrently."""
        unknown = sorted(set(task_ids) - set(self.tasks))
        if unknown:
            raise KeyError(f"no task {unknown} in this environment")
        return list(await asyncio.gather(*(score_completion(self.tasks[t], x) for t, x in zip(task_ids, texts))))

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Completion], **kwargs: Any) -> list[float | None]:
        tasks = kwargs.get(self.task_column)
        if tasks is None:
            raise KeyError(f"the dataset has no {self.task_column!r} column (the task id of each prompt)")
        started = time.time()
        coro = self.score([str(t) for t in tasks], [completion_text(c) for c in completions])
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            traces = asyncio.run(coro)
        else:  # called from inside an event loop: run ours in a thread
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                traces = pool.submit(asyncio.run, coro).result()
        self.last_call_seconds = time.time() - started
        self.last_traces = traces
        return [trace_reward(t) for t in traces]
