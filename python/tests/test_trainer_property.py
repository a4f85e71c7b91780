"""The trainer's side of "a reward a trained model cannot game": what each adapter hands the learner
after the library's own aggregation, against a REAL `rrl serve`.

Agents that never write a better job — seed-only, inert-field, null-seeking, retreat-to-baseline,
unstable-spec — each answer one prompt of a GRPO batch beside copies of the honest baseline (``{}``,
the baseline sent back unchanged). What is measured is the number that reaches the loss:

- TRL: the advantages of one real ``GRPOTrainer`` step (``rrl_client.grpo.build_trainer``, the tiny
  model, the default compact form with its format reward), hooked out after
  ``_generate_and_score_completions``; a completion left out of the loss is handed 0;
- verl: ``compute_score_batch``'s numbers turned into GRPO advantages per prompt row.

No agent may be handed more than the honest copies of its group on average. Seed-only rewards are
single seeds of the baseline, so its mean is allowed the sampling noise of its own draws (two
standard errors); every other agent's rewards are the same number each time.

Nulls come from the harness itself: a second `rrl serve` reuses the first one's store (``--cache``),
so the reference and every job the first one trained are known, and scores with a 1 ms limit
(``--score-timeout 0.001``), so any other job is the harness's failure: reward null.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any, Iterator, Sequence

import pytest

from real_serve import TINY_PATCH, TINY_TASK, _missing, start_serve
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
            known = [HONEST] + [c for name, texts in agents.items() if name != NULL_SEEKING for c in texts]
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
    args = parse_args(["--model", "unused", "--steps", "1", "--num-generations", str(size), "--prompts-per-step", str(len(batch)),
                       "--max-completion-length", "128", "--output-dir", str(tmp_path), "--cpu", "--seed", "1"])
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
    nulls = [r is None for r in reward.last_rewards[batch_index(batch, NULL_SEEKING) * size:][:size]]
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
    lines = [check_property(handed[k * size:(k + 1) * size], scores[k * size:(k + 1) * size], name, "verl") for k, (name, _) in enumerate(batch)]
    assert_none_failed(lines)
