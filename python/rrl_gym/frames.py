"""The bridge's wire format: length-prefixed binary frames on a pipe.

Every frame is ``u32 little-endian LENGTH`` followed by LENGTH bytes: one kind byte, then the
body. Three kinds:

- ``J`` (0x4A): a UTF-8 JSON object (control messages: ``make``, ``close``; the bridge's ``hello``
  and ``error`` replies).
- ``A`` (0x41): actions for every environment, float64 little-endian, ``num_envs * action_dim``
  values, row by row (a discrete action is its index as a float64).
- ``S`` (0x53): the result of a step (or of the first reset) for every environment, in this order:
  ``obs`` float64[num_envs * obs_dim] (after autoreset), ``final_obs`` float64[num_envs * obs_dim]
  (before autoreset), ``rewards`` float64[num_envs], ``terminated`` uint8[num_envs],
  ``truncated`` uint8[num_envs].
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

KIND_JSON = 0x4A
KIND_ACTIONS = 0x41
KIND_STEP = 0x53

_LEN = struct.Struct("<I")


class BridgeClosed(Exception):
    """The other end closed the pipe (end of file)."""


def read_exact(fd: int, n: int) -> bytes:
    """Reads exactly ``n`` bytes from ``fd``; raises ``BridgeClosed`` at end of file."""
    chunks: list[bytes] = []
    left = n
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            raise BridgeClosed()
        chunks.append(chunk)
        left -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_frame(fd: int) -> tuple[int, bytes]:
    """Reads one frame; returns its kind byte and its body."""
    (length,) = _LEN.unpack(read_exact(fd, 4))
    if length < 1:
        raise ValueError("frame of length 0 (no kind byte)")
    data = read_exact(fd, length)
    return data[0], data[1:]


def write_all(fd: int, data: bytes) -> None:
    """Writes every byte of ``data`` to ``fd``."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def frame(kind: int, *parts: bytes) -> bytes:
    """One frame of ``kind`` whose body is the concatenation of ``parts``."""
    length = 1 + sum(len(p) for p in parts)
    return b"".join((_LEN.pack(length), bytes((kind,)), *parts))


def json_frame(obj: dict[str, Any]) -> bytes:
    """A ``J`` frame holding ``obj``."""
    return frame(KIND_JSON, json.dumps(obj, separators=(",", ":"), allow_nan=False).encode())
