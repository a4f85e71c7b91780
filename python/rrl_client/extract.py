"""The job spec inside a completion, found as the harness finds it.

The harness owns this rule (``src/spec/extract.ts``: the first complete JSON object, skipping a closed
``<think>`` block, at most ``MAX_CANDIDATES`` opening braces tried, nothing nested deeper than
``MAX_DEPTH``); this is its one Python reading, used wherever Python asks what the harness would
extract. ``src/spec/extract.cases.json`` holds completions with what the harness extracts from each:
``src/spec/extract.test.ts`` checks them against the TypeScript and ``tests/test_extract.py`` against
this module, so a change to either side alone fails a test.
"""

from __future__ import annotations

import json
from typing import Any

from .contracts import CONTRACTS

MAX_CANDIDATES: int = int(CONTRACTS["extraction"]["maxCandidates"])
"""How many opening braces are tried as the start of the object."""
MAX_DEPTH: int = int(CONTRACTS["extraction"]["maxDepth"])
"""Deepest nesting of a candidate."""

_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"
_JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""What JavaScript's ``trimStart`` removes (Python's ``lstrip`` differs: it keeps U+FEFF and removes U+001C to U+001F)."""


def _refuse_constant(name: str) -> Any:
    # JSON.parse knows no NaN or Infinity; json.loads would accept them.
    raise ValueError(f"not JSON: {name}")


def _matching_brace(s: str, start: int) -> int:
    """Index of the bracket closing the object opened at ``start``; -1 when it never closes, -2 when too deep."""
    depth = 0
    in_string = False
    i = start
    n = len(s)
    while i < n:
        c = s[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
            if depth > MAX_DEPTH:
                return -2
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i if c == "}" else -1
            if depth < 0:
                return -1
        i += 1
    return -1


def extract_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` as the harness extracts it, or None where the harness refuses the completion."""
    close = text.find(_THINK_CLOSE)
    body = text[close + len(_THINK_CLOSE) :] if text.lstrip(_JS_WHITESPACE).startswith(_THINK_OPEN) and close >= 0 else text
    start = body.find("{")
    tried = 0
    while start >= 0 and tried < MAX_CANDIDATES:
        tried += 1
        end = _matching_brace(body, start)
        if end > 0:
            try:
                value = json.loads(body[start : end + 1], parse_constant=_refuse_constant)
            except ValueError:
                value = None
            if isinstance(value, dict):
                return value
        start = body.find("{", start + 1)
    return None
