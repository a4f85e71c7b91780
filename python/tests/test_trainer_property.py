"""The trainer's side of "a reward a trained model cannot game": what each adapter hands the learner
after the library's own aggregation, against a REAL `rrl serve`.

Agents that never write a better job — seed-only, inert-field, null-seeking, retreat-to-baseline,
unstable-spec — each answer one prompt of a GRPO batch beside copies of the honest baseline (``{}``,
the baseline sent back unchanged). What is measured is the number that reaches the loss:

- TRL reward functions: the advantages of one real ``GRPOTrainer`` step (``rrl_client.grpo.build_trainer``,
  the tiny model, the default compact form with its format reward), hooked out after
  ``_generate_and_score_completions``; a completion left out of the loss is handed 0;
- verl: ``compute_score_batch``'s numbers turned into GRPO advantages per prompt row;
- the TRL environment class (``rrl_environment``, episodes of up to two jobs): the advantages of one real
  ``RrlGRPOTrainer(environment_factory=...)`` step whose rollouts call ``submit_job`` as scripted
  (tests/env_grpo.py), TRL calling ``environment_reward``;
- the OpenEnv adapter: the done observation's reward of episodes over a real OpenEnv server's WebSocket
  (``HarnessEnvClient``), turned into advantages by TRL's own group rule;
- episodes of rounds (``rrl_client.rounds.run_episodes``, what ``--rounds`` trains on): each episode's
  reward as the harness closes it, turned into advantages by TRL's own group rule.

No agent may be handed more than the honest copies of its group on average. Seed-only rewards are
single seeds of the baseline, so its mean is allowed the sampling noise of its own draws (two
standard errors); every other agent's rewards are the same number each time.

The episode adapters also get episode-level agents (two jobs allowed): a bad job then a retreat to the
baseline (its spec written out: in an episode ``{}`` applies to the last valid job), an invalid job then
that retreat, and a bad job then ``{}`` (the bad job again). None may be handed more than the honest
episode (``{}`` twice), nor more than its two jobs are handed on average when each is an episode of its
own: a retreat is no second chance (an episode paid its last or best job fails this).

Nulls come from the harness itself: a second `rrl serve` reuses the first one's store (``--cache``),
so the reference and every job the first one trained are known, and scores with a 1 ms limit
(``--score-timeout 0.001``), so any other job is the harness's failure: reward null.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from env_grpo import INVALID_PATCH, scripted_generate, scripted_trainer
from real_serve import TINY_PATCH, TINY_TASK, _missing, start_listening, start_serve
from rrl_client.client import RrlClient

HONEST = "{}"
SEEDS = [2, 3, 4, 5]
AGENTS: dict[str, list[str]] = {
    "seed-only": [json.dumps({"seed": s}) for s in SEEDS],
    "inert-field": [json.dumps({"model": {"dropout": 0.5}})] * 4,  # dropout: supervised tasks only; a control job ignores it
    # any job the first server did not train is unscorable on the second: cheap ones (ARS, 500 env steps)
    "null-seeking": [TINY_PATCH.replace('"hidden": []', f'"hidden": [{h}]') for h in (4, 8)] * 2,
    "retreat-to-baseline": ["BASELINE"] * 4,  # the baseline spec written out in full (the compact prompt's example)
    "unstable-spec": [json.dumps({"reward": {"expression": "r / (t - 50)"}, "seed": s}) for s in (1, 2, 3, 4)],  # NaN on seed 2
}
NULL_SEEKING = "null-seeking"
HONEST_PER_GROUP = 4
BAD = TINY_PATCH  # a tiny ARS job, worse than the baseline: its reward is below 0
EPISODES: list[tuple[str, list[str]]] = [
    *[("honest", [HONEST, HONEST])] * (HONEST_PER_GROUP - 1),  # 3 honest beside 5 others: a group of 8, as the agents' groups
    ("bad then retreat", [BAD, "BASELINE"]),
    ("invalid then retreat", [INVALID_PATCH, "BASELINE"]),
    ("bad then repeat", [BAD, HONEST]),
    ("bad alone", [BAD]),
    ("invalid alone", [INVALID_PATCH]),
]
"""The episode-level group: the honest episode, the two retreats, and each retreat's first job as an episode of its own."""
RETREATS = {"bad then retreat": "bad alone", "invalid then retreat": "invalid alone", "bad then repeat": "bad alone"}


@pytest.fixture(scope="module")
def serves() -> Iterator[tuple[str, dict[str, list[str]]]]:
    """The URL of the null-answering `rrl serve` (see the module doc) and each agent's completions."""
    why = _missing()
    if why:
        pytest.skip(f"SKIPPED (real rrl serve): {why}")
    with tempfile.TemporaryDirectory(prefix="rrl-property-") as tmp:
        proc, url = start_serve(Path(tmp) / "a")
        try:
            example = RrlClient(url).prompt_response(TINY_TASK, "compact")["example"]
            agents = {name: [json.dumps(example) if c == "BASELINE" else c for c in texts] for name, texts in AGENTS.items()}
            known = [HONEST, BAD] + [c for name, texts in agents.items() if name != NULL_SEEKING for c in texts]
            RrlClient(url).rewards(TINY_TASK, known)  # trains the reference and every job but the null-seeker's
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        proc, url = start_serve(Path(tmp) / "b", "--cache", str(Path(tmp) / "a" / "store.db"), "--score-timeout", "0.001")
        try:
            yield url, agents
        finally:
            proc.terminate()
            proc.wait(timeout=60)


def groups(agents: dict[str, list[str]]) -> list[tuple[str, list[str]]]:
    """One GRPO group per agent: the honest copies, then the agent's completions."""
    return [(name, [HONEST] * HONEST_PER_GROUP + texts) for name, texts in agents.items()]


def check_property(handed: Sequence[float], rewards: Sequence[Any], name: str, adapter: str) -> str:
    """A report line, starting with FAIL where the agent's completions (after the honest ones) are handed
    more than the honest ones on average, beyond two standard errors of the agent's own handed numbers."""
    honest, agent = list(handed[:HONEST_PER_GROUP]), list(handed[HONEST_PER_GROUP:])
    mean = sum(agent) / len(agent)
    spread = math.sqrt(sum((a - mean) ** 2 for a in agent) / (len(agent) - 1))
    allowed = sum(honest) / len(honest) + 2 * spread / math.sqrt(len(agent))
    line = f"{adapter} {name}: rewards {rewards[HONEST_PER_GROUP:]} vs {rewards[:HONEST_PER_GROUP]}; handed {[round(a, 3) for a in agent]} vs {[round(h, 3) for h in honest]}"
    return line if mean <= allowed + 1e-6 else f"FAIL (handed more than the honest baseline copy) {line}"


def assert_none_failed(lines: list[str]) -> None:
    """Prints every agent's line; fails naming every agent handed more than the honest copy."""
    print("\n".join(lines))
    failed = [line for line in lines if line.startswith("FAIL")]
    assert not failed, "\n".join(failed)


def test_trl_no_agent_is_handed_more_than_the_honest_baseline_copy(serves: tuple[str, dict[str, list[str]]], tmp_path: Path) -> None:
    from rrl_client.grpo import build_trainer, parse_args
    from tiny_model import tiny_model, tiny_tokenizer

    url, agents = serves
    batch = groups(agents)
    size = len(batch[0][1])
    tok = tiny_tokenizer()
    args = parse_args(
        [
            "--model",
            "unused",
            "--steps",
            "1",
            "--num-generations",
            str(size),
            "--prompts-per-step",
            str(len(batch)),
            "--max-completion-length",
            "128",
            "--output-dir",
            str(tmp_path),
            "--cpu",
            "--seed",
            "1",
        ]
    )
    texts = [t for _, group in batch for t in group]

    def rollout(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        # TRL's public generation hook: the agents' completions stand for the model's, in the batch's order
        # (the dataset is not shuffled and each prompt comes num_generations times in a row)
        assert len(prompts) == len(texts), f"{len(prompts)} prompts for {len(texts)} completions"
        prompt_ids = [tok.apply_chat_template(p, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"] for p in prompts]
        completion_ids = [tok(t, add_special_tokens=False)["input_ids"] + [tok.eos_token_id] for t in texts]
        return {"prompt_ids": prompt_ids, "completion_ids": completion_ids, "logprobs": [[0.0] * len(c) for c in completion_ids]}

    trainer, reward = build_trainer(args, RrlClient(url), tiny_model(tok, max_positions=4096), tok, [TINY_TASK], rollout_func=rollout)
    seen: list[dict[str, Any]] = []
    plain = trainer._generate_and_score_completions
    trainer._generate_and_score_completions = lambda inputs: seen.append(plain(inputs)) or seen[-1]
    trainer.train()
    assert reward.last_texts == texts, "the harness scored the agents' completions"
    out = seen[0]
    kept = out["completion_mask"].sum(dim=1) > 0
    handed = (out["advantages"] * kept).tolist()
    lines = []
    for k, (name, _) in enumerate(batch):
        rows = slice(k * size, (k + 1) * size)
        lines.append(check_property(handed[rows], reward.last_rewards[rows], name, "TRL"))
    nulls = [r is None for r in reward.last_rewards[batch_index(batch, NULL_SEEKING) * size :][:size]]
    assert nulls[HONEST_PER_GROUP:] == [True] * (size - HONEST_PER_GROUP), "the null-seeker's jobs were unscorable"
    assert_none_failed(lines)


def batch_index(batch: list[tuple[str, list[str]]], name: str) -> int:
    return [n for n, _ in batch].index(name)


def verl_grpo_advantages(scores: Sequence[float], rows: Sequence[int]) -> list[float]:
    """verl's GRPO outcome advantage: per prompt row, (score - row mean) / (row's unbiased std + 1e-6);
    a row of one completion gets mean 0 and std 1."""
    by_row: dict[int, list[float]] = {}
    for s, r in zip(scores, rows):
        by_row.setdefault(r, []).append(s)
    stats = {}
    for r, v in by_row.items():
        mean = sum(v) / len(v) if len(v) > 1 else 0.0
        std = math.sqrt(sum((x - mean) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else 1.0
        stats[r] = (mean, std)
    return [(s - stats[r][0]) / (stats[r][1] + 1e-6) for s, r in zip(scores, rows)]


def test_verl_no_agent_is_handed_more_than_the_honest_baseline_copy(serves: tuple[str, dict[str, list[str]]], monkeypatch: pytest.MonkeyPatch) -> None:
    from rrl_client import rewards as rw

    url, agents = serves
    monkeypatch.setenv("RRL_URL", url)
    monkeypatch.delenv("RRL_TOKEN", raising=False)
    rw._clients.clear()
    batch = groups(agents)
    texts = [t for _, group in batch for t in group]
    rows = [k for k, (_, group) in enumerate(batch) for _ in group]
    scores = rw.compute_score_batch(["rrl"] * len(texts), texts, [TINY_TASK] * len(texts), [{"task": TINY_TASK, "index": r} for r in rows])
    handed = verl_grpo_advantages(scores, rows)
    size = len(batch[0][1])
    lines = [check_property(handed[k * size : (k + 1) * size], scores[k * size : (k + 1) * size], name, "verl") for k, (name, _) in enumerate(batch)]
    assert_none_failed(lines)


def episode_groups(agents: dict[str, list[str]]) -> list[tuple[str, list[list[str]]]]:
    """Each agent's group as episodes (one job each: the honest copies, then the agent's), and the episode-level group."""
    baseline = agents["retreat-to-baseline"][0]  # the baseline spec written out
    episodes = [[baseline if j == "BASELINE" else j for j in jobs] for _, jobs in EPISODES]
    return [(name, [[t] for t in group]) for name, group in groups(agents)] + [("episodes", episodes)]


def check_retreats(handed: Sequence[float], rewards: Sequence[Any], adapter: str) -> list[str]:
    """Report lines for the episode-level group (see the module doc), FAIL where a retreat is handed more than the
    honest episode or more than its jobs as episodes of their own (the honest episode, ``{}`` twice, stands for
    ``{}`` alone); advantages are affine in the rewards within a group, so the second is the mean rule seen from
    the learner."""
    names = [name for name, _ in EPISODES]
    n = names.count("honest")
    honest = sum(handed[:n]) / n
    lines = []
    for retreat, alone in RETREATS.items():
        got, first = handed[names.index(retreat)], handed[names.index(alone)]
        parts = (first + honest) / 2
        line = (
            f"{adapter} {retreat}: reward {rewards[names.index(retreat)]} ({alone} {rewards[names.index(alone)]}, honest "
            f"{rewards[:n]}); handed {got:.3f} vs honest {honest:.3f}, its jobs alone {parts:.3f}"
        )
        if got > honest + 1e-4:
            line = f"FAIL (handed more than the honest episode) {line}"
        elif got > parts + 1e-4:
            line = f"FAIL (handed more than its jobs alone: a retreat is a second chance) {line}"
        lines.append(line)
    return lines


def check_episode_adapter(handed: Sequence[float], rewards: Sequence[Any], batch: list[tuple[str, list[list[str]]]], adapter: str) -> None:
    """Every group's property, the null-seeker's episodes null, and the retreats' (see the module doc)."""
    size = len(batch[0][1])
    lines = []
    for k, (name, _) in enumerate(batch):
        rows = slice(k * size, (k + 1) * size)
        if name == "episodes":
            lines += check_retreats(handed[rows], rewards[rows], adapter)
        else:
            lines.append(check_property(handed[rows], rewards[rows], name, adapter))
    nulls = rewards[batch_index(batch, NULL_SEEKING) * size :][HONEST_PER_GROUP:size]
    assert nulls == [None] * (size - HONEST_PER_GROUP), f"{adapter}: the null-seeker's episodes were unscorable, got {nulls}"
    assert_none_failed(lines)


def test_trl_environment_no_agent_is_handed_more_than_the_honest_baseline_copy(serves: tuple[str, dict[str, list[str]]], tmp_path: Path) -> None:
    from rrl_client.trl_env import rrl_environment

    url, agents = serves
    batch = episode_groups(agents)
    scripts = [jobs for _, episodes in batch for jobs in episodes]
    trainer = scripted_trainer(
        rrl_environment(url, max_submissions=2),
        tmp_path,
        TINY_TASK,
        dict(enumerate(scripts)),
        groups=len(batch),
        num_generations=len(batch[0][1]),
        max_completion_length=1024,
        max_positions=4096,
    )
    seen: list[dict[str, Any]] = []
    plain = trainer._generate_and_score_completions
    trainer._generate_and_score_completions = lambda inputs: seen.append(plain(inputs)) or seen[-1]
    trainer.train()
    envs = trainer.environments
    assert [e.submitted for e in envs] == [len(jobs) for jobs in scripts], "each rollout sent its scripted jobs"
    out = seen[0]
    kept = out["completion_mask"].sum(dim=1) > 0
    check_episode_adapter((out["advantages"] * kept).tolist(), [e.reward for e in envs], batch, "TRL environment")


def trl_group_advantages(rewards: Sequence[float | None], size: int) -> list[float]:
    """GRPOTrainer's advantages of rewards in groups of ``size`` (its defaults: group mean and standard
    deviation, TRL's own nan-aware ones): a None is left out of its group and handed 0."""
    import torch
    from trl.trainer.utils import nanstd

    r = torch.tensor([math.nan if x is None else float(x) for x in rewards]).view(-1, size)
    adv = (r - torch.nanmean(r, dim=1, keepdim=True)) / (nanstd(r, dim=1, keepdim=True) + 1e-4)
    return torch.nan_to_num(adv, nan=0.0).view(-1).tolist()


@pytest.fixture(scope="module")
def openenv_urls(serves: tuple[str, dict[str, list[str]]]) -> Iterator[dict[int, str]]:
    """Two OpenEnv servers (the package this test imported) forwarding to the null-answering `rrl serve`:
    episodes of one job and of two, by that number."""
    pytest.importorskip("openenv.core.env_server", reason="SKIPPED (OpenEnv): openenv-core is missing: run python/setup-venv.sh")
    import rrl_client

    package = str(Path(rrl_client.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": package + os.pathsep + os.environ.get("PYTHONPATH", "")}

    def start(jobs: int) -> tuple[Any, str]:
        cmd = [sys.executable, "-m", "rrl_client.openenv_server", "--rrl-url", serves[0], "--port", "0", "--max-submissions", str(jobs)]
        return start_listening(cmd, Path(package), env)

    with ThreadPoolExecutor(2) as pool:  # both start at once: most of their start is importing the libraries
        starting = {jobs: pool.submit(start, jobs) for jobs in (1, 2)}
    started = {jobs: f.result() for jobs, f in starting.items() if f.exception() is None}
    try:
        for f in starting.values():
            f.result()  # raises the first start's failure, once every started one is in `started`
        yield {jobs: url for jobs, (_, url) in started.items()}
    finally:
        for proc, _ in started.values():
            proc.terminate()
            proc.wait(timeout=30)


def test_openenv_no_agent_is_handed_more_than_the_honest_baseline_copy(serves: tuple[str, dict[str, list[str]]], openenv_urls: dict[int, str]) -> None:
    from rrl_client.openenv_client import HarnessEnvClient
    from rrl_client.openenv_server import JobAction

    _, agents = serves
    batch = episode_groups(agents)
    sessions = {jobs: HarnessEnvClient(url).sync() for jobs, url in openenv_urls.items()}
    rewards: list[float | None] = []
    try:
        for session in sessions.values():
            session.connect()
        for _, episodes in batch:
            for jobs in episodes:  # an episode of n jobs on the server whose episodes take n: its last step is done
                env = sessions[len(jobs)]
                env.reset(task=TINY_TASK)
                results = [env.step(JobAction(spec=spec)) for spec in jobs]
                assert [r.done for r in results] == [False] * (len(jobs) - 1) + [True], "the episode is done after its last job"
                rewards.append(results[-1].reward)
    finally:
        for session in sessions.values():
            session.close()
    size = len(batch[0][1])
    check_episode_adapter(trl_group_advantages(rewards, size), rewards, batch, "OpenEnv")


def test_rounds_no_agent_is_handed_more_than_the_honest_baseline_copy(serves: tuple[str, dict[str, list[str]]]) -> None:
    pytest.importorskip("transformers", reason="SKIPPED: transformers is missing: run python/setup-venv.sh")
    from rrl_client.rounds import run_episodes
    from tiny_model import tiny_tokenizer

    url, agents = serves
    batch = episode_groups(agents)
    tok = tiny_tokenizer()
    client = RrlClient(url)
    prompt = client.prompt(TINY_TASK, "patch", 0)
    rewards: list[float | None] = []
    for _, episodes in batch:
        for jobs in episodes:  # an episode of as many rounds as its scripted jobs
            [episode] = run_episodes(client, tok, scripted_generate(tok, jobs), [prompt], [TINY_TASK], len(jobs))
            rewards.append(episode.reward)
    size = len(batch[0][1])
    check_episode_adapter(trl_group_advantages(rewards, size), rewards, batch, "rounds")
