"""Guided decoding: a tiny random model, constrained to a small schema, writes only schema-valid JSON;
the GRPO trainer with --guided (patch form) trains against the stand-in server."""

from __future__ import annotations

import importlib.util
import json

import pytest
import torch

from fake_server import PATCH_SCHEMA, FakeRrl
from rrl_client.client import RrlClient
from rrl_client.guided import ENGINES, INSTALL, GuidedDecoding, schema_errors
from tiny_model import tiny_model, tiny_tokenizer

SMALL = {
    "type": "object",
    "properties": {
        "lr": {"type": "number", "minimum": 0, "maximum": 1},
        "act": {"enum": ["relu", "tanh"]},
        "hidden": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 64}, "minItems": 1, "maxItems": 2},
        "opt": {"anyOf": [{"const": "adam"}, {"type": "object", "properties": {"name": {"const": "sgd"}}, "additionalProperties": False}]},
    },
    "additionalProperties": False,
}


def engine_or_skip(engine: str) -> None:
    if importlib.util.find_spec(engine) is None:
        pytest.skip(f"SKIPPED LOUDLY: guided decoding needs {engine}, not installed: {INSTALL[engine]}")


def test_schema_errors_reads_the_plain_features() -> None:
    assert schema_errors({"lr": 0.5, "act": "relu", "hidden": [8], "opt": {"name": "sgd"}}, SMALL) == []
    assert schema_errors({}, SMALL) == []
    assert schema_errors({"lr": 2}, SMALL) and schema_errors({"act": "gelu"}, SMALL) and schema_errors({"hidden": []}, SMALL)
    assert schema_errors({"x": 1}, SMALL) and schema_errors({"opt": "sgd"}, SMALL) and schema_errors({"hidden": [1.5]}, SMALL)


@pytest.mark.parametrize("engine", ENGINES)
def test_guided_samples_of_a_tiny_random_model_all_satisfy_the_schema(engine: str) -> None:
    engine_or_skip(engine)
    torch.set_num_threads(1)
    tok = tiny_tokenizer()
    model = tiny_model(tok)
    guided = GuidedDecoding(tok, vocab_size=model.config.vocab_size, engine=engine)  # type: ignore[arg-type]
    proc = guided.processor(SMALL)
    ids = tok.apply_chat_template([{"role": "user", "content": "write JSON"}], add_generation_prompt=True, return_tensors="pt", return_dict=True)
    texts: list[str] = []
    for seed in range(2):  # the same processor serves several generate calls
        torch.manual_seed(seed)
        out = model.generate(
            **ids,
            do_sample=True,
            temperature=1.0,
            top_k=0,
            max_new_tokens=120,
            num_return_sequences=12,
            logits_processor=[proc],
            pad_token_id=tok.pad_token_id,
            eos_token_id=tok.eos_token_id,
        )
        texts += [tok.decode(s, skip_special_tokens=True) for s in out[:, ids["input_ids"].shape[1] :]]
    assert proc.rejected == 0
    finished = [t for t in texts if t.endswith("}")]
    assert len(finished) >= len(texts) // 2, texts  # random weights: most close within the cap
    for text in finished:
        assert schema_errors(json.loads(text), SMALL) == [], text
    for text in texts:  # the unfinished ones are prefixes of valid JSON: never a stray character
        assert text.startswith("{") and "\n" not in text


# Listed out of alphabetical order, as the harness's spec sections are (environment, reward, dataset, ...).
ORDERED = {
    "type": "object",
    "properties": {
        "reward": {"type": "object", "properties": {"objective": {"enum": ["focal"]}, "labelSmoothing": {"type": "number"}}, "additionalProperties": False},
        "dataset": {"type": "integer"},
        "seed": {"type": "integer"},
    },
    "additionalProperties": False,
}


@pytest.mark.parametrize("engine", ENGINES)
def test_the_grammar_takes_properties_in_the_schemas_order_not_alphabetical(engine: str) -> None:
    engine_or_skip(engine)
    tok = tiny_tokenizer()
    guided = GuidedDecoding(tok, engine=engine)  # type: ignore[arg-type]

    def accepted(text: str) -> bool:
        m = guided.matcher(ORDERED)
        return all(m.accept(i) for i in [*tok.encode(text, add_special_tokens=False), tok.eos_token_id]) and m.done()

    # what rrl export sft writes (spec order): a patch fine-tuned on must be writable under guidance
    assert accepted('{"reward":{"objective":"focal","labelSmoothing":0.1},"dataset":1,"seed":2}')
    assert accepted('{"dataset":1}')
    assert not accepted('{"dataset":1,"reward":{"objective":"focal"}}')  # alphabetical, against the schema's order


def test_a_row_may_have_its_own_schema() -> None:
    engine_or_skip("xgrammar")
    tok = tiny_tokenizer()
    model = tiny_model(tok, seed=1)
    guided = GuidedDecoding(tok, vocab_size=model.config.vocab_size)
    a = {"type": "object", "properties": {"a": {"const": 1}}, "required": ["a"], "additionalProperties": False}
    b = {"type": "object", "properties": {"b": {"const": 2}}, "required": ["b"], "additionalProperties": False}
    prompts = ["<|im_start|>A", "<|im_start|>B!"]
    proc = guided.processor(lambda row: a if "A" in tok.decode(list(row)) else b)
    tok.padding_side = "left"
    enc = tok(prompts, return_tensors="pt", padding=True)
    out = model.generate(**enc, do_sample=True, max_new_tokens=12, logits_processor=[proc], pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
    texts = [tok.decode(s, skip_special_tokens=True) for s in out[:, enc["input_ids"].shape[1] :]]
    assert texts == ['{"a":1}', '{"b":2}']


def test_client_fetches_the_schemas_and_the_patch_prompt(fake: FakeRrl) -> None:
    client = RrlClient(fake.url)
    assert client.schema("iris-classify", "patch") == PATCH_SCHEMA
    spec = client.schema("iris-classify", "spec")
    assert spec["required"] == ["task", "seed"] and spec["properties"]["task"] == {"const": "iris-classify"}
    with pytest.raises(ValueError):
        client.schema("iris-classify", "bogus")
    answer = client.prompt_response("iris-classify", "patch")
    assert answer["example"] is not None and "merge patch" in answer["messages"][-1]["content"]
    assert fake.prompt_forms == ["patch"]


def test_grpo_with_guided_patch_form_trains_and_the_frozen_run_is_guided_too(fake: FakeRrl, tmp_path: pytest.TempPathFactory) -> None:
    engine_or_skip("xgrammar")
    from rrl_client.grpo import build_trainer, parse_args
    from rrl_client.grpo_steps import run_frozen, step_line

    torch.set_num_threads(1)
    tok = tiny_tokenizer()
    model = tiny_model(tok)
    common = [
        "--model",
        "unused",
        "--steps",
        "1",
        "--num-generations",
        "3",
        "--prompts-per-step",
        "2",
        "--max-completion-length",
        "48",
        "--learning-rate",
        "0.05",
        "--lora-r",
        "4",
        "--lora-alpha",
        "8",
        "--output-dir",
        str(tmp_path),
        "--cpu",
        "--seed",
        "1",
        "--prompt-form",
        "patch",
    ]
    args = parse_args(common)
    assert args.guided and parse_args(common + ["--no-guided"]).guided is False and parse_args(common[:-2]).guided is False
    # the format reward scores by the example's fields: off by default for patches, which should not copy the example
    assert args.format_weight == 0.0 and parse_args(common[:-2]).format_weight == 0.5
    trainer, reward = build_trainer(args, RrlClient(fake.url), model, tok, ["cartpole-balance", "iris-classify"])
    assert sorted(fake.schema_calls) == [("cartpole-balance", "patch"), ("iris-classify", "patch")]
    trainer.train()
    assert trainer.state.global_step == 1 and sum(reward.totals.values()) == 6
    texts = [c for call in fake.reward_calls for c in call["completions"]]
    for text in texts:  # every completion is the schema's JSON, or (at the cap) a prefix of it
        assert text.startswith("{") and "\n" not in text, text
        if text.endswith("}"):
            assert schema_errors(json.loads(text), PATCH_SCHEMA) == [], text
    line = step_line(1, 1.0, 1.0, 0.5, {"reward": 0.0, "completions/mean_length": 10.0}, reward, [])
    assert "outer/distinct_specs" in line and "outer/score_mean_step" in line

    frozen = parse_args(common + ["--frozen"])
    fake.reward_calls.clear()
    model2 = tiny_model(tok, seed=3)
    trainer2, _ = build_trainer(frozen, RrlClient(fake.url), model2, tok, ["cartpole-balance", "iris-classify"])
    run_frozen(frozen, trainer2.model, tok, trainer2.train_dataset, trainer2.reward_funcs, lambda *a: None)
    assert model2.rrl_guided.matchers  # the frozen run sampled through the same processor
    for text in (c for call in fake.reward_calls for c in call["completions"]):
        assert text.startswith("{") and "\n" not in text, text
