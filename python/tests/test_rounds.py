"""rrl_client.rounds: episodes of rounds with feedback against a REAL `rrl serve`, and a GRPO step of TRL's
GRPOTrainer whose rollouts are such episodes (``rollout_func``), on a tiny random model on the CPU.

Needs node and the compiled harness (`npx tsc -p tsconfig.json`) and TRL (`python/setup-venv.sh`);
skips loudly, naming them, when they are missing.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from env_grpo import INVALID_PATCH, one_step_config, scripted_generate
from real_serve import TINY_PATCH, TINY_TASK
from rrl_client.chat import PLAIN_TEMPLATE
from rrl_client.client import RrlClient
from rrl_client.rounds import EpisodeReward, RoundRollout, continuation_ids, episode_line, prompt_token_ids, run_episodes, task_router

STEP_SIZE_PATCH = '{"algorithm": {"stepSize": 0.05}}'
"""An ARS field: valid over the tiny ARS job of TINY_PATCH, not over the task's PPO baseline."""


@pytest.mark.parametrize("template", ["im", "plain"])
def test_continuation_ids_are_the_rendered_conversation_after_the_answer(template: str) -> None:
    pytest.importorskip("transformers", reason="SKIPPED: transformers is missing: run python/setup-venv.sh")
    from tiny_model import tiny_tokenizer

    tok = tiny_tokenizer()
    if template == "plain":  # the tiny tokenizer reads "\n\n" as one unknown token: single line breaks here
        tok.chat_template = PLAIN_TEMPLATE.replace("\n\n", "\n")
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "tune it"}]
    answer, turn = '{"seed": 2}', "Job 1: succeeded.\nReply with a patch."
    prompt = prompt_token_ids(tok, messages)
    generated = tok(answer, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    after = continuation_ids(tok, messages, answer, turn)
    whole = tok.apply_chat_template(
        [*messages, {"role": "assistant", "content": answer}, {"role": "user", "content": turn}], add_generation_prompt=True, tokenize=False
    )
    assert tok.decode(list(prompt) + generated + after, skip_special_tokens=False) == whole
    tok.chat_template = tok.chat_template.replace("m['content']", "m['content'] | trim")  # a template that rewrites answers
    with pytest.raises(ValueError, match="chat template"):
        continuation_ids(tok, messages, answer + " ", turn)


def test_an_episode_patches_its_last_valid_job_and_reads_the_harness_turns(rrl_serve: str) -> None:
    pytest.importorskip("transformers", reason="SKIPPED: transformers is missing: run python/setup-venv.sh")
    from tiny_model import tiny_tokenizer

    tok = tiny_tokenizer()
    client = RrlClient(rrl_serve)
    prompt = client.prompt(TINY_TASK, "patch")
    timing: dict[str, float] = {}
    [e] = run_episodes(client, tok, scripted_generate(tok, [TINY_PATCH, STEP_SIZE_PATCH, INVALID_PATCH]), [prompt], [TINY_TASK], 3, timing)
    assert [fb["status"] for fb in e.feedback if fb] == ["succeeded", "succeeded", "invalid"]
    assert '"stepSize":0.05' in e.messages[-1]["content"], "the second job is the current one after the first two rounds"
    # The sequence is the conversation: the model's answers (mask 1) and the harness's turns (mask 0).
    assert len(e.completion_ids) == len(e.env_mask)
    model_text = tok.decode([t for t, m in zip(e.completion_ids, e.env_mask) if m], skip_special_tokens=True)
    assert model_text == TINY_PATCH + STEP_SIZE_PATCH + INVALID_PATCH
    harness_text = tok.decode([t for t, m in zip(e.completion_ids, e.env_mask) if not m], skip_special_tokens=True)
    assert e.feedback[0] and e.feedback[0]["next"] in harness_text
    jobs = [client.job(str(fb["job"])) for fb in e.feedback if fb]
    hidden = {float(j["reward"]) for j in jobs if j["reward"] is not None} | {float(j["score"]["normalized"]) for j in jobs if j["score"]}
    shown = {float(x) for x in re.findall(r"-?\d+\.\d+", harness_text)}
    assert not {h for h in hidden if h not in (0.0, -1.0)} & shown, "no hidden score or reward reaches the model"
    assert e.reward == pytest.approx(sum(j["reward"] for j in jobs) / 3)
    assert timing["model_tokens"] > 0 and timing["harness_s"] > 0
    line = episode_line([e])
    assert line["outer/valid_share_by_round"] == [1.0, 1.0, 0.0] and line["outer/truncated_share"] == 0.0


def test_a_grpo_step_of_episodes_trains_only_the_lora_weights_on_the_model_tokens(rrl_serve: str, tmp_path: Path) -> None:
    pytest.importorskip("trl", reason="SKIPPED: TRL is missing: run python/setup-venv.sh")
    import torch
    from datasets import Dataset
    from peft import LoraConfig

    from rrl_client.grpo_trainer import RrlGRPOTrainer
    from tiny_model import tiny_model, tiny_tokenizer

    torch.set_num_threads(1)
    tok = tiny_tokenizer()
    model = tiny_model(tok, max_positions=8192)
    client = RrlClient(rrl_serve)
    prompt = client.prompt(TINY_TASK, "patch", doc_chars=0)
    rows = [{"prompt": prompt, "task": TINY_TASK}] * 2
    rollout = RoundRollout(client, tok, 2, task_router(rows))
    args = one_step_config(tmp_path, 4, 4, 24, learning_rate=1e-2, shuffle_dataset=False, seed=0)
    lora = LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules="all-linear", task_type="CAUSAL_LM")
    trainer = RrlGRPOTrainer(
        model=model,
        reward_funcs=[EpisodeReward()],
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tok,
        peft_config=lora,
        rollout_func=rollout,
        keep_flat_groups=True,
        shared_prefix=True,
    )
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    assert len(rollout.last) == 4 and all(len(e.feedback) == 2 for e in rollout.last)
    assert all(e.reward is not None and -1.0 <= e.reward for e in rollout.last), [e.reward for e in rollout.last]
    assert all(0 in e.env_mask and 1 in e.env_mask for e in rollout.last), "each episode holds the harness's turn between its answers"
    logs = next(h for h in trainer.state.log_history if "reward" in h)
    assert math.isclose(logs["reward"], sum(e.reward or 0.0 for e in rollout.last) / 4, rel_tol=1e-5)
    changed = {n for n, p in trainer.model.named_parameters() if not torch.equal(p, before[n])}
    assert changed and all("lora_" in n for n in changed), sorted(changed)[:5]


def test_the_heldout_rounds_column_is_the_confirmed_score_of_the_episodes_best_single_job(rrl_serve: str) -> None:
    pytest.importorskip("transformers", reason="SKIPPED: transformers is missing: run python/setup-venv.sh")
    from rrl_client.heldout.cli import rounds_cell
    from rrl_client.heldout.harness import Confirmed
    from tiny_model import tiny_tokenizer

    tok = tiny_tokenizer()

    class Scripted:
        """A model arm whose greedy episode answers TINY_PATCH, then STEP_SIZE_PATCH, then an invalid patch."""

        tokenizer = tok
        guided = None

        def greedy_ids(self, schema: Any) -> Any:
            return scripted_generate(tok, [TINY_PATCH, STEP_SIZE_PATCH, INVALID_PATCH])

    client = RrlClient(rrl_serve)
    inp = {"messages": client.prompt(TINY_TASK, "patch"), "schema": None}
    confirmed = Confirmed(client)
    score, detail = rounds_cell(client, Scripted(), TINY_TASK, inp, 3, confirmed)  # type: ignore[arg-type]
    assert detail["statuses"] == ["succeeded", "succeeded", "invalid"] and detail["singles"][2] is None
    best = detail["pick"]
    assert best in (0, 1) and detail["singles"][best] == max(s for s in detail["singles"] if s is not None)
    # The pick is confirmed as the job it trained: the second job is the ARS job with the step size patched in.
    spec = {**json.loads(TINY_PATCH)["algorithm"], "stepSize": 0.05} if best == 1 else json.loads(TINY_PATCH)["algorithm"]
    assert confirmed.asked == 1 and score is not None
    again = client.confirm(TINY_TASK, json.dumps({"algorithm": spec, "model": {"hidden": []}, "budget": {"envSteps": 500}}))
    assert again["confirmed"] is not None and score == again["confirmed"]["normalized"]


def test_own_samples_post_the_models_completions_as_one_request(rrl_serve: str) -> None:
    from rrl_client.own_samples import sample_task

    class Scripted:
        """A model arm that samples two tiny jobs and an invalid patch."""

        guided = None

        def generate(self, messages: Any, schema: Any, n: int, seed: int | None) -> list[str]:
            assert n == 3 and seed == 5 and "Task" in messages[-1]["content"]
            return [TINY_PATCH, INVALID_PATCH, json.dumps({**json.loads(TINY_PATCH), "seed": 2})]

    line = sample_task(RrlClient(rrl_serve), Scripted(), TINY_TASK, 3, 5, 0)
    assert line["valid"] == 2 and line["samples"] == 3 and isinstance(line["best_single"], float)
    assert line["rewards"][1] == -1.0 and all(isinstance(r, float) for r in line["rewards"])


def test_a_harness_that_does_not_answer_makes_the_episode_none_not_a_crash() -> None:
    pytest.importorskip("transformers", reason="SKIPPED: transformers is missing: run python/setup-venv.sh")
    import socket

    from tiny_model import tiny_tokenizer

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tok = tiny_tokenizer()
    prompt = [{"role": "user", "content": "Tune the job."}]
    [e] = run_episodes(RrlClient(f"http://127.0.0.1:{port}", timeout=5), tok, scripted_generate(tok, [TINY_PATCH, TINY_PATCH]), [prompt], [TINY_TASK], 2)
    assert e.episode is None and e.reward is None and e.error and e.feedback == [None, None]
    assert len(e.answers) == 2, "the episode still ran its rounds; it is paid nothing (no advantage)"
