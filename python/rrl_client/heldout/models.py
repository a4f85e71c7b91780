"""The model arms: a causal LM (optionally with a LoRA adapter) answering each task's patch prompt.

Per task: one greedy completion, and ``n`` sampled ones (temperature ``t``, top-p 1, no top-k, seeded)
in one ``generate`` call over ``n`` rows of the prompt, which runs once (``rrl_client.prefix``); both
constrained to the task's patch schema (``GET /v1/tasks/{id}/schema?form=patch``) when the grammar engine
is installed and guiding is on.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from ..client import Message

Schema = dict[str, Any]


@dataclass(frozen=True)
class ArmSpec:
    """``--arm NAME=MODEL[:ADAPTER]``: a model directory or ``.gguf`` file, and a PEFT adapter directory."""

    name: str
    model: str
    adapter: str | None = None


def parse_arm(text: str) -> ArmSpec:
    """``NAME=MODEL[:ADAPTER]`` -> ArmSpec (the adapter is what follows the first ``:``)."""
    name, eq, rest = text.partition("=")
    if not eq or not name.strip() or not rest.strip():
        raise ValueError(f"--arm takes NAME=MODEL[:ADAPTER], got {text!r}")
    model, colon, adapter = rest.partition(":")
    if colon and not adapter:
        raise ValueError(f"--arm {name}: empty adapter after ':' in {text!r}")
    if name in ("baseline", "optuna") or name.startswith("transfer"):
        raise ValueError(f"--arm: the name {name!r} is taken by a built-in row")
    return ArmSpec(name.strip(), model.strip(), adapter.strip() or None)


def load_arm(spec: ArmSpec) -> tuple[Any, Any]:
    """The model (float32 on CPU, the adapter applied when given) and its tokenizer, in eval mode."""
    import torch

    from ..grpo import load_model

    model, tok = load_model(spec.model, None, None if torch.cuda.is_available() else torch.float32)
    if spec.adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, spec.adapter)
    if torch.cuda.is_available():
        model = model.to("cuda")
    model.eval()
    return model, tok


class ModelArm:
    """Generates completions of one model for the tasks' prompts, guided by their schemas when ``guided``."""

    def __init__(self, model: Any, tokenizer: Any, *, guided: bool, engine: str = "xgrammar", max_new_tokens: int = 160, temperature: float = 0.8) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.guided: Any = None
        if guided:
            self.guided = guided_decoding(tokenizer, model, engine)
        from ..prefix import install_prefix_cache

        install_prefix_cache(model)  # n samples of one prompt: the prompt runs once

    def generate(self, messages: Sequence[Message], schema: Schema | None, n: int, seed: int | None) -> list[str]:
        """``n`` completions: greedy when ``seed`` is None (then ``n`` must be 1), else sampled with ``seed``."""
        import torch

        tok = self.tokenizer
        ids = tok.apply_chat_template(list(messages), add_generation_prompt=True, return_tensors="pt", return_dict=True)
        ids = {k: v.to(self.model.device) for k, v in ids.items()}
        procs = [self.guided.processor(schema)] if self.guided is not None and schema is not None else None
        kwargs: dict[str, Any] = {
            "max_new_tokens": self.max_new_tokens,
            "pad_token_id": tok.pad_token_id,
            "eos_token_id": tok.eos_token_id,
            "logits_processor": procs,
        }
        if seed is None:
            if n != 1:
                raise ValueError("greedy decoding gives one completion")
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        else:
            torch.manual_seed(seed)
            kwargs.update(do_sample=True, temperature=self.temperature, top_p=1.0, top_k=0)
            # n rows of the prompt rather than num_return_sequences: the rows are what the shared prompt's cache is spread to
            ids = {k: v.repeat(n, 1) for k, v in ids.items()}
        with torch.no_grad():
            out = self.model.generate(**ids, **kwargs)
        texts: list[str] = []
        for seq in out[:, ids["input_ids"].shape[1] :]:
            hits = (seq == tok.eos_token_id).nonzero()
            end = int(hits[0]) if len(hits) else len(seq)
            texts.append(tok.decode(seq[:end], skip_special_tokens=True))
        return texts

    def greedy_ids(self, schema: Schema | None) -> Any:
        """A ``rrl_client.rounds.Generate`` of greedy completions (token ids), guided by ``schema`` when guiding is
        on: the model's answers in an episode of rounds."""
        from ..rounds import batched_generate

        tok = self.tokenizer
        procs = [self.guided.processor(schema)] if self.guided is not None and schema is not None else None
        kwargs = {
            "max_new_tokens": self.max_new_tokens,
            "pad_token_id": tok.pad_token_id,
            "eos_token_id": tok.eos_token_id,
            "logits_processor": procs,
            "do_sample": False,
            "temperature": None,
            "top_p": None,
            "top_k": None,
        }
        return batched_generate(self.model, tok, kwargs)


def guided_unavailable(engine: str) -> str | None:
    """None when the grammar ``engine`` can be imported, else why not (with the install command)."""
    from ..guided import GuidedUnavailable, require_engine

    try:
        require_engine(cast(Any, engine))
    except GuidedUnavailable as err:
        return str(err)
    return None


def guided_decoding(tokenizer: Any, model: Any, engine: str) -> Any:
    """A ``GuidedDecoding`` for this model's output width; None (said loudly) when the engine is missing."""
    from ..guided import GuidedDecoding

    reason = guided_unavailable(engine)
    if reason:
        warn(f"UNGUIDED: {reason}")
        return None
    vocab = getattr(getattr(model, "config", None), "vocab_size", None) or len(tokenizer)
    return GuidedDecoding(tokenizer, vocab_size=vocab, engine=cast(Any, engine))


def warn(message: str) -> None:
    """A loud line on stderr."""
    print(f"*** {message}", file=sys.stderr, flush=True)
