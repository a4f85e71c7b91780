"""The taskset's own env: the single-agent env, with the multi-turn form of ``rounds > 1``.

verifiers v1 takes a taskset package's exported ``vf.Env`` subclass as the env of its tasks
(``loaders.environment_class``), so ``vf.load_environment`` of the taskset ``rrl-jobs`` (vf-eval, the env
server prime-rl talks to) runs :class:`RrlJobsEnv`. It is a ``vf.SingleAgentEnv`` (the one ``agent`` seat,
the same config); with ``rounds = 1`` it runs the task exactly as its base does.

With ``rounds = K > 1`` one rollout is one harness episode (``POST /v1/episodes``, up to K jobs). The env is
the model's user, through the library's turn-by-turn surface (``Agent.interaction``, ``Interaction.turn``):
the task's prompt opens, each reply is submitted to the episode (the server applies a patch over the
episode's last valid job), and the next user turn is the submission's feedback ``next`` text only (the job's
status, reason, cost and own validation figure, the current job, the request for a patch; never a hidden
score or a reward). It stops after K replies, or earlier when the exchange ends (a limit or a stop of the
agent's own). The feedback goes to ``trace.info["rrl"]`` (``episode``, ``submissions``); the task's reward
then closes the episode and returns the reward the server computes for it (the mean of its jobs' rewards).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

import verifiers.v1 as vf

from rrl_client.client import RrlClient, RrlError

from .taskset import RrlJobTask, client_for


def _close_quietly(client: RrlClient, episode: int) -> None:
    # The rollout already failed; the close only frees the server's episode, and its own failure changes nothing.
    with contextlib.suppress(RrlError, OSError):
        client.close_episode(episode)


async def play_rounds(task: RrlJobTask, agent: Any) -> None:
    """One harness episode of ``task.config.rounds`` jobs, ``agent`` answering turn by turn (its trace is the rollout's)."""
    client = client_for(task.config)
    rounds = task.config.rounds
    key = f"rrl-jobs-{uuid.uuid4()}"
    opened = await asyncio.to_thread(client.open_episode, str(task.data.id), rounds, key)
    episode = int(opened["episode"])
    submissions: list[dict[str, Any]] = []
    async with agent.interaction(task) as chat:
        chat.trace.info["rrl"] = {"episode": episode, "submissions": submissions}
        try:
            segment = await chat.turn()  # a prompted task speaks first
            for n in range(1, rounds + 1):
                if segment.terminated:
                    break
                feedback = await asyncio.to_thread(client.submit_to_episode, episode, segment.last_reply, f"{key}-{n}")
                # ``next`` is already the conversation's next user message; the record keeps the rest
                submissions.append({k: v for k, v in feedback.items() if k != "next"})
                if n == rounds or feedback["submissionsLeft"] <= 0:
                    break
                segment = await chat.turn(feedback["next"])
        except BaseException:
            # a failed rollout skips scoring, so the reward would never close the episode
            await asyncio.to_thread(_close_quietly, client, episode)
            raise


class RrlJobsEnv(vf.SingleAgentEnv):
    """``vf.SingleAgentEnv`` for ``rrl-jobs``: ``rounds = 1`` as the base; ``rounds > 1`` one harness episode of up to K turns."""

    async def run(self, task: Any, agents: Any) -> None:
        """Plays one episode of ``task`` with the ``agent`` seat."""
        if isinstance(task, RrlJobTask) and task.config.rounds > 1:
            await play_rounds(task, agents.agent)
            return
        await super().run(task, agents)
