"""Guided (schema-constrained) decoding for transformers' ``generate``: a logits processor that masks,
at every step, the tokens that would take a row's text outside its JSON Schema.

    from rrl_client.guided import GuidedDecoding
    guided = GuidedDecoding(tokenizer, vocab_size=model.config.vocab_size)
    out = model.generate(**inputs, logits_processor=[guided.processor(schema)], do_sample=True)

The grammar engine is xgrammar (pinned, installed by python/setup-venv.sh; llguidance also works,
pass ``engine="llguidance"``; see docs/llm-training.md for the measurement that chose it). Both compile
the schema to a token-level grammar once per schema (cached here) and answer a bitmask of allowed
tokens per step; the JSON is written compact (no whitespace, ``,`` and ``:`` separators). Once a
row's value is complete only the end-of-sequence token is allowed.

One processor serves any number of ``generate`` calls (it notices a new call when the input is not
the previous input plus one token) and every row of a batch may have its own schema:
``processor(choose)`` takes a function from a row's prompt token ids (left padding removed) to its
schema, called once per row at the start of each call. That is how GRPO batches holding prompts of
several tasks are constrained per task (``rrl_client.grpo``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

Engine = Literal["llguidance", "xgrammar"]
ENGINES: tuple[Engine, ...] = ("llguidance", "xgrammar")
DEFAULT_ENGINE: Engine = "xgrammar"
INSTALL = {
    "llguidance": "pip install llguidance==1.9.1",
    "xgrammar": "pip install --no-deps xgrammar==0.2.8 apache-tvm-ffi==0.1.15.post2 (python/setup-venv.sh does)",
}

Schema = dict[str, Any]
Chooser = Callable[[Sequence[int]], Schema]


class GuidedUnavailable(ImportError):
    """The grammar engine is not installed."""


def require_engine(engine: Engine = DEFAULT_ENGINE) -> None:
    """Raise ``GuidedUnavailable`` naming the install command when ``engine`` cannot be imported."""
    if engine not in ENGINES:
        raise ValueError(f"engine: expected one of {', '.join(ENGINES)}, got {engine!r}")
    try:
        __import__(engine)
    except ImportError as err:
        raise GuidedUnavailable(
            f"guided decoding needs the {engine} package, which is not installed: {INSTALL[engine]} (pinned in python/requirements.txt) ({err})"
        ) from err


class Matcher(Protocol):
    """One row's grammar state."""

    def accept(self, token: int) -> bool: ...
    def fill(self, bitmask: Any, row: int) -> None: ...
    def done(self) -> bool: ...


class _LlgMatcher:
    def __init__(self, tokenizer: Any, grammar: str) -> None:
        import llguidance

        self.m = llguidance.LLMatcher(tokenizer, grammar, log_level=0)
        if self.m.is_error():
            raise ValueError(f"llguidance: {self.m.get_error()}")

    def accept(self, token: int) -> bool:
        return bool(self.m.consume_token(token))

    def fill(self, bitmask: Any, row: int) -> None:
        import llguidance.torch

        llguidance.torch.fill_next_token_bitmask(self.m, bitmask, row)

    def done(self) -> bool:
        # stopped: the value is complete and nothing may follow (or the matcher is in error)
        return bool(self.m.is_stopped() or self.m.is_error())


class _XgrMatcher:
    def __init__(self, compiled: Any) -> None:
        import xgrammar

        self.m = xgrammar.GrammarMatcher(compiled)

    def accept(self, token: int) -> bool:
        return bool(self.m.accept_token(token))

    def fill(self, bitmask: Any, row: int) -> None:
        self.m.fill_next_token_bitmask(bitmask, row)

    def done(self) -> bool:
        return bool(self.m.is_terminated())


class _TokenList:
    """What llguidance's ``TokenizerWrapper`` reads: every token's bytes, the special ids, an encoder."""

    def __init__(self, tokenizer: Any, vocab_size: int, eos: int) -> None:
        self.eos_token_id = eos
        self.bos_token_id = tokenizer.bos_token_id
        self.special_token_ids = sorted(set(tokenizer.all_special_ids))
        self.tokens = [tokenizer.decode([i]).encode("utf-8") if i < len(tokenizer) else b"" for i in range(vocab_size)]
        self._tokenizer = tokenizer

    def __call__(self, text: str) -> list[int]:
        return list(self._tokenizer.encode(text, add_special_tokens=False))


def _llg_from_token_list(tokenizer: Any, vocab_size: int, eos: int) -> Any:
    import llguidance
    from llguidance._tokenizer import TokenizerWrapper

    return llguidance.LLTokenizer(TokenizerWrapper(_TokenList(tokenizer, vocab_size, eos)), n_vocab=vocab_size, eos_token=eos)


class GuidedDecoding:
    """Schemas compiled for one tokenizer, and logits processors that apply them.

    ``vocab_size``: the model's output width (``model.config.vocab_size``; may exceed the tokenizer's
    length); default the tokenizer's length. ``compile_seconds`` records each schema's compile time.
    """

    def __init__(self, tokenizer: Any, vocab_size: int | None = None, engine: Engine = DEFAULT_ENGINE) -> None:
        require_engine(engine)
        self.tokenizer = tokenizer
        self.engine: Engine = engine
        self.vocab_size = int(vocab_size if vocab_size is not None else len(tokenizer))
        self.compile_seconds: dict[str, float] = {}
        self._compiled: dict[str, Any] = {}
        eos = tokenizer.eos_token_id
        if eos is None:
            raise ValueError("guided decoding needs a tokenizer with an end-of-sequence token")
        started = time.perf_counter()
        if engine == "llguidance":
            import llguidance.hf

            try:
                self._tok: Any = llguidance.hf.from_tokenizer(tokenizer, n_vocab=self.vocab_size, eos_token=int(eos))
            except ValueError:  # a decoder llguidance does not read (e.g. a word-level one): list the tokens' bytes
                self._tok = _llg_from_token_list(tokenizer, self.vocab_size, int(eos))
        else:
            import xgrammar

            self._tok = xgrammar.TokenizerInfo.from_huggingface(tokenizer, vocab_size=self.vocab_size, stop_token_ids=[int(eos)])
            self._compiler: Any = xgrammar.GrammarCompiler(self._tok, max_threads=1)
        self.tokenizer_seconds = time.perf_counter() - started

    def compile(self, schema: Schema) -> Any:
        """The engine's compiled form of ``schema`` (cached by the schema's JSON text).

        The grammar writes an object's properties in the order the schema lists them (xgrammar takes
        that order from the JSON text it compiles), which is the order the harness writes specs and
        patches in (``rrl export sft``'s rows included): the text compiled, and the cache key, keep
        the schema's own key order. Sorting the keys would make the grammar demand alphabetical order,
        and a model fine-tuned on spec-ordered patches could then only write what comes later
        alphabetically (after ``"reward"`` nothing but ``"seed"``)."""
        key = json.dumps(schema)
        if key in self._compiled:
            return self._compiled[key]
        started = time.perf_counter()
        compiled: Any
        if self.engine == "llguidance":
            import llguidance

            compiled = llguidance.LLMatcher.grammar_from_json_schema(schema, defaults={"whitespace_flexible": False})
            _LlgMatcher(self._tok, compiled)  # checks the grammar (the constructor builds it)
        else:
            compiled = self._compiler.compile_json_schema(key, any_whitespace=False, separators=(",", ":"), strict_mode=True)
        self.compile_seconds[key] = time.perf_counter() - started
        self._compiled[key] = compiled
        return compiled

    def matcher(self, schema: Schema) -> Matcher:
        """A fresh grammar state for one row."""
        compiled = self.compile(schema)
        if self.engine == "llguidance":
            return _LlgMatcher(self._tok, compiled)
        return _XgrMatcher(compiled)

    def processor(self, schema: Schema | Chooser) -> SchemaLogitsProcessor:
        """A logits processor for ``generate``: one schema for every row, or a function from a row's prompt ids to its schema."""
        if callable(schema):
            return SchemaLogitsProcessor(self, schema)
        fixed = schema
        return SchemaLogitsProcessor(self, lambda _ids: fixed)


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def schema_errors(value: Any, schema: Any, path: str = "$") -> list[str]:
    """Where ``value`` breaks ``schema``, in the plain JSON-Schema features the harness's grammar
    schemas use (type, properties, additionalProperties, required, enum, const, anyOf, minimum,
    maximum, items, minItems, maxItems, minLength, maxLength); [] when it satisfies it. For checking
    samples; other keywords are ignored."""
    if schema is True or not isinstance(schema, dict):
        return []
    errors: list[str] = []
    t = schema.get("type")
    if t is not None:
        kinds = t if isinstance(t, list) else [t]
        if not any(_TYPES.get(k, lambda _v: True)(value) for k in kinds):
            return [f"{path}: expected {t}, got {json.dumps(value)[:40]}"]
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: expected {json.dumps(schema['const'])}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {json.dumps(value)[:40]} not in the enum")
    if "anyOf" in schema and not any(not schema_errors(value, s, path) for s in schema["anyOf"]):
        errors.append(f"{path}: matches none of anyOf")
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: {value} < minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: {value} > maximum {schema['maximum']}")
    if isinstance(value, str) and (len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", len(value))):
        errors.append(f"{path}: string length {len(value)} out of bounds")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
            errors.append(f"{path}: {len(value)} items out of bounds")
        for i, item in enumerate(value):
            errors += schema_errors(item, schema.get("items", True), f"{path}[{i}]")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for k in schema.get("required", []):
            if k not in value:
                errors.append(f"{path}: missing {k}")
        for k, v in value.items():
            if k in props:
                errors += schema_errors(v, props[k], f"{path}.{k}")
            elif schema.get("additionalProperties", True) is False:
                errors.append(f"{path}: unexpected property {k}")
            else:
                errors += schema_errors(v, schema.get("additionalProperties", True), f"{path}.{k}")
    return errors


def apply_bitmask(scores: Any, bitmask: Any) -> None:
    """Set to -inf, in place, the scores of the tokens whose bit is 0 (bit ``j % 32`` of word ``j // 32``)."""
    import torch

    batch, vocab = scores.shape
    shifts = torch.arange(32, dtype=torch.int32)
    bits = ((bitmask.unsqueeze(-1) >> shifts) & 1).reshape(batch, -1)
    allowed = torch.zeros((batch, vocab), dtype=torch.bool)
    width = min(vocab, bits.shape[1])
    allowed[:, :width] = bits[:, :width].bool()
    scores.masked_fill_(~allowed.to(scores.device), float("-inf"))


def _base() -> type:
    try:
        from transformers import LogitsProcessor

        return LogitsProcessor
    except ImportError:  # pragma: no cover - transformers is pinned
        return object


class SchemaLogitsProcessor(_base()):  # type: ignore[misc]
    """A transformers ``LogitsProcessor`` constraining each row to its schema; reusable across ``generate`` calls."""

    def __init__(self, guided: GuidedDecoding, choose: Chooser) -> None:
        self.guided = guided
        self.choose = choose
        self.matchers: list[Matcher] = []
        self.rejected = 0
        """Tokens a matcher refused (0 unless something outside this processor changed the scores)."""
        self.mask_seconds = 0.0
        """Time spent computing and applying masks (the engine's overhead per call)."""
        self._prev: Any = None
        self._bitmask: Any = None
        self._eos_only: Any = None

    def _start(self, input_ids: Any) -> None:
        import torch

        pad = self.guided.tokenizer.pad_token_id
        self.matchers = []
        for row in input_ids.tolist():
            start = 0
            while pad is not None and start < len(row) and row[start] == pad:
                start += 1
            self.matchers.append(self.guided.matcher(self.choose(row[start:])))
        words = (self.guided.vocab_size + 31) // 32
        self._bitmask = torch.full((len(self.matchers), words), -1, dtype=torch.int32)
        eos = int(self.guided.tokenizer.eos_token_id)
        bits = torch.zeros(words * 32, dtype=torch.int64)
        bits[eos] = 1
        words_ = (bits.reshape(words, 32) << torch.arange(32, dtype=torch.int64)).sum(dim=1)
        self._eos_only = torch.where(words_ >= 2**31, words_ - 2**32, words_).to(torch.int32)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        began = time.perf_counter()
        prev = self._prev
        fresh = prev is None or prev.shape[0] != input_ids.shape[0] or prev.shape[1] + 1 != input_ids.shape[1] or not torch.equal(prev, input_ids[:, :-1])
        if fresh:
            self._start(input_ids)
        else:
            for i, m in enumerate(self.matchers):
                if not m.done() and not m.accept(int(input_ids[i, -1])):
                    self.rejected += 1
        for i, m in enumerate(self.matchers):
            if m.done():
                self._bitmask[i] = self._eos_only  # value complete (or row finished: generate pads it anyway)
            else:
                m.fill(self._bitmask, i)
        apply_bitmask(scores, self._bitmask)
        self._prev = input_ids.clone()
        self.mask_seconds += time.perf_counter() - began
        return scores
