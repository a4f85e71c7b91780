"""A batch of Gymnasium environments behind a pipe: ``python -m rrl_gym.bridge``.

The TypeScript side (``src/inner/envs/gym-bridge.ts``) starts this process with its stdin and
stdout on two pipes and speaks the frames of ``rrl_gym.frames``:

1. ``J {"op": "make", "env_id": ID, "allow_import": false, "kwargs": {...}, "num_envs": N,
   "seeds": [N ints], "autoreset": true}``: the bridge builds N environments with
   ``gymnasium.make(ID, **kwargs)`` (an ID of the form ``module:Env-v0``, which makes Gymnasium
   import ``module``, only with ``"allow_import": true``; see ``rrl_gym.env_id``),
   resets env i with ``seeds[i]`` and answers ``J {"ok": true, "observation_space": SPACE,
   "action_space": SPACE, "obs_dim": D, "action_dim": M, "max_episode_steps": T or null,
   "reward_threshold": R or null, "gymnasium": VERSION}`` followed by an ``S`` frame with the first
   observations (``final_obs`` equal to them, rewards 0, no flags).
2. ``A`` (actions for all N envs) → ``S`` (the step of all N envs), as many times as wanted.
3. ``J {"op": "close"}`` or end of file: the bridge closes its environments and exits 0.

Any error (an unknown id, a space it cannot describe, an environment that raises) is answered
with ``J {"error": "one line"}`` and the bridge exits 1.

Spaces as data: ``{"type": "discrete", "n": N}`` or ``{"type": "box", "shape": [...], "low": [...],
"high": [...]}`` (flattened bounds; an infinite bound is ``null``). Observations are flattened to
float64 (a ``Discrete`` observation becomes a one-hot vector); actions arrive as float64 (a
discrete index, or a box vector clipped to its bounds, as Gymnasium's ``ClipAction`` does).

Autoreset is **same-step** (as Stable-Baselines3, CleanRL and ``AutoresetMode.SAME_STEP``): when
an episode ends, ``obs`` already holds the first observation of the next one (env reset without a
seed, continuing its own generator) and ``final_obs`` the last observation of the one that ended.
With ``"autoreset": false`` (the hidden evaluation: one episode per env) a finished environment is
not stepped again: its flags stay set and its reward is 0.

Never a hang: a message whose handling takes longer than ``--step-timeout`` seconds, or no
message for ``--idle-timeout`` seconds, ends the process (the TypeScript side then reads end of
file and reports it). Anything the environments print goes to stderr, never into the frames.
"""

from __future__ import annotations

import argparse
import faulthandler
import math
import os
import sys
import threading
import time
from typing import Any

import numpy as np
import numpy.typing as npt

from .env_id import ImportNotAllowed, check_env_id
from .frames import (
    KIND_ACTIONS,
    KIND_JSON,
    KIND_STEP,
    BridgeClosed,
    frame,
    json_frame,
    read_frame,
    write_all,
)

F64 = npt.NDArray[np.float64]


class BridgeError(Exception):
    """An error reported to the other end as one line."""


def one_line(text: str, limit: int = 300) -> str:
    """The first non-empty line of ``text``, at most ``limit`` characters."""
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _bounds(values: Any) -> list[float | None]:
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    return [float(v) if math.isfinite(v) else None for v in flat]


def describe_space(space: Any, role: str) -> dict[str, Any]:
    """A Gymnasium ``Box`` or ``Discrete`` space as data; any other space is a ``BridgeError``."""
    from gymnasium import spaces

    if isinstance(space, spaces.Discrete):
        return {"type": "discrete", "n": int(space.n)}
    if isinstance(space, spaces.Box):
        return {"type": "box", "shape": [int(s) for s in space.shape], "low": _bounds(space.low), "high": _bounds(space.high)}
    raise BridgeError(f"{role} space {type(space).__name__} is not supported (only Box and Discrete)")


class Flattener:
    """Turns one observation of a ``Box`` or ``Discrete`` space into a flat float64 row."""

    def __init__(self, space: Any) -> None:
        from gymnasium import spaces

        self.discrete = isinstance(space, spaces.Discrete)
        if self.discrete:
            self.dim = int(space.n)
            self.start = int(space.start)
        else:
            self.dim = int(np.prod(space.shape)) if space.shape else 1
            self.start = 0

    def into(self, obs: Any, out: F64) -> None:
        """Writes ``obs`` into the row ``out``."""
        if self.discrete:
            out[:] = 0.0
            out[int(obs) - self.start] = 1.0
        else:
            out[:] = np.asarray(obs, dtype=np.float64).reshape(-1)


class VectorBridge:
    """``num_envs`` environments stepped together, with same-step autoreset."""

    def __init__(self, env_id: str, kwargs: dict[str, Any], num_envs: int, seeds: list[int], autoreset: bool = True, allow_import: bool = False) -> None:
        try:
            check_env_id(env_id, allow_import)
        except ImportNotAllowed as err:
            raise BridgeError(str(err)) from None
        import gymnasium as gym
        from gymnasium import spaces

        if num_envs < 1:
            raise BridgeError(f"num_envs must be at least 1, got {num_envs}")
        if len(seeds) != num_envs:
            raise BridgeError(f"seeds: expected {num_envs} seeds, got {len(seeds)}")
        try:
            self.envs = [gym.make(env_id, **kwargs) for _ in range(num_envs)]
        except Exception as err:  # an unknown id, a missing dependency, bad kwargs
            raise BridgeError(f'cannot make Gymnasium environment "{env_id}": {one_line(str(err)) or type(err).__name__}') from err
        env = self.envs[0]
        self.observation_space = describe_space(env.observation_space, "observation")
        self.action_space = describe_space(env.action_space, "action")
        aspace = env.action_space
        if isinstance(aspace, spaces.Box) and len(aspace.shape) != 1:
            raise BridgeError(f"action space Box of shape {tuple(aspace.shape)} is not supported (only one-dimensional boxes)")
        self.discrete = isinstance(aspace, spaces.Discrete)
        self.action_dim = int(aspace.shape[0]) if isinstance(aspace, spaces.Box) else 1
        self.action_start = int(aspace.start) if isinstance(aspace, spaces.Discrete) else 0
        self.action_n = int(aspace.n) if isinstance(aspace, spaces.Discrete) else 0
        self.low = np.asarray(aspace.low, dtype=np.float64) if isinstance(aspace, spaces.Box) else np.zeros(0)
        self.high = np.asarray(aspace.high, dtype=np.float64) if isinstance(aspace, spaces.Box) else np.zeros(0)
        self.action_dtype = aspace.dtype if isinstance(aspace, spaces.Box) else np.int64
        self.flat = Flattener(env.observation_space)
        self.obs_dim = self.flat.dim
        self.num = num_envs
        self.autoreset = autoreset
        spec = env.spec
        self.max_episode_steps = spec.max_episode_steps if spec is not None else None
        self.reward_threshold = spec.reward_threshold if spec is not None else None
        self.obs = np.zeros((num_envs, self.obs_dim))
        self.final = np.zeros((num_envs, self.obs_dim))
        self.rewards = np.zeros(num_envs)
        self.terminated = np.zeros(num_envs, dtype=np.uint8)
        self.truncated = np.zeros(num_envs, dtype=np.uint8)
        for i, e in enumerate(self.envs):
            first, _ = e.reset(seed=int(seeds[i]))
            self.flat.into(first, self.obs[i])
        self.final[:] = self.obs

    def hello(self) -> dict[str, Any]:
        """The ``make`` answer: the spaces as data and the episode limit."""
        import gymnasium as gym

        return {
            "ok": True,
            "observation_space": self.observation_space,
            "action_space": self.action_space,
            "obs_dim": self.obs_dim,
            "action_dim": self.action_dim,
            "max_episode_steps": self.max_episode_steps,
            "reward_threshold": self.reward_threshold,
            "gymnasium": gym.__version__,
        }

    def result(self) -> bytes:
        """The ``S`` frame of the current state."""
        return frame(KIND_STEP, self.obs.tobytes(), self.final.tobytes(), self.rewards.tobytes(), self.terminated.tobytes(), self.truncated.tobytes())

    def _actions(self, body: bytes) -> list[Any]:
        """The actions of an ``A`` frame's body, checked once for the whole batch, one per env."""
        expected = self.num * self.action_dim * 8
        if len(body) != expected:
            raise BridgeError(f"actions frame of {len(body)} bytes, expected {expected} ({self.num} envs x {self.action_dim} float64)")
        actions = np.frombuffer(body, dtype="<f8").reshape(self.num, self.action_dim)
        if not np.all(np.isfinite(actions)):
            raise BridgeError("actions hold a non-finite value")
        if self.discrete:
            index = actions[:, 0]
            bad = (index != np.floor(index)) | (index < 0) | (index >= self.action_n)
            if np.any(bad):
                raise BridgeError(f"action {index[bad][0]:g} is not an index of Discrete({self.action_n})")
            chosen: list[Any] = (index.astype(np.int64) + self.action_start).tolist()
            return chosen
        clipped = np.clip(actions, self.low, self.high).astype(self.action_dtype)
        return list(clipped)

    def step(self, body: bytes) -> bytes:
        """Steps every environment with its action from an ``A`` frame's body."""
        actions = self._actions(body)
        for i, env in enumerate(self.envs):
            if not self.autoreset and (self.terminated[i] or self.truncated[i]):
                self.rewards[i] = 0.0
                continue
            o, r, term, trunc, _ = env.step(actions[i])
            self.flat.into(o, self.final[i])
            self.rewards[i] = float(r)
            self.terminated[i] = 1 if term else 0
            self.truncated[i] = 1 if trunc else 0
            if (term or trunc) and self.autoreset:
                first, _ = env.reset()
                self.flat.into(first, self.obs[i])
            else:
                self.obs[i] = self.final[i]
        return self.result()

    def close(self) -> None:
        """Closes every environment."""
        for e in self.envs:
            e.close()


class Watchdog:
    """Ends the process when one message takes longer than ``step_timeout`` or none comes for ``idle_timeout``."""

    def __init__(self, step_timeout: float, idle_timeout: float) -> None:
        self.step_timeout = step_timeout
        self.idle_timeout = idle_timeout
        self.busy_since = 0.0
        self.idle_since = time.monotonic()
        threading.Thread(target=self._run, daemon=True).start()

    def busy(self) -> None:
        """A message is being handled."""
        self.busy_since = time.monotonic()

    def idle(self) -> None:
        """Waiting for the next message."""
        self.busy_since = 0.0
        self.idle_since = time.monotonic()

    def _run(self) -> None:
        tick = min(0.5, self.step_timeout / 4, self.idle_timeout / 4)
        while True:
            time.sleep(tick)
            now = time.monotonic()
            busy = self.busy_since
            if busy and now - busy > self.step_timeout:
                sys.stderr.write(f"rrl_gym.bridge: timeout: no answer within {self.step_timeout:g} s\n")
                faulthandler.dump_traceback(all_threads=True)
                sys.stderr.flush()
                os._exit(3)
            if not busy and now - self.idle_since > self.idle_timeout:
                sys.stderr.write(f"rrl_gym.bridge: idle for {self.idle_timeout:g} s, exiting\n")
                sys.stderr.flush()
                os._exit(0)


def _make(msg: dict[str, Any]) -> VectorBridge:
    env_id = msg.get("env_id")
    if not isinstance(env_id, str) or not env_id:
        raise BridgeError("make: env_id must be a non-empty string")
    kwargs = msg.get("kwargs") or {}
    if not isinstance(kwargs, dict):
        raise BridgeError("make: kwargs must be an object")
    num = msg.get("num_envs")
    seeds = msg.get("seeds")
    if not isinstance(num, int) or not isinstance(seeds, list) or not all(isinstance(s, int) and s >= 0 for s in seeds):
        raise BridgeError("make: num_envs must be an integer and seeds a list of non-negative integers")
    return VectorBridge(env_id, kwargs, num, seeds, bool(msg.get("autoreset", True)), allow_import=msg.get("allow_import") is True)


def serve(fd_in: int, fd_out: int, step_timeout: float = 60.0, idle_timeout: float = 600.0) -> int:
    """Answers frames on ``fd_in`` with frames on ``fd_out`` until ``close`` or end of file; the exit code."""
    import json

    dog = Watchdog(step_timeout, idle_timeout)
    bridge: VectorBridge | None = None
    try:
        while True:
            try:
                kind, body = read_frame(fd_in)
            except BridgeClosed:
                return 0
            dog.busy()
            if kind == KIND_ACTIONS:
                if bridge is None:
                    raise BridgeError("actions before make")
                write_all(fd_out, bridge.step(body))
            elif kind == KIND_JSON:
                msg = json.loads(body)
                op = msg.get("op") if isinstance(msg, dict) else None
                if op == "close":
                    return 0
                if op != "make" or bridge is not None:
                    raise BridgeError(f"unexpected message {one_line(str(op))!r}" if op != "make" else "make sent twice")
                bridge = _make(msg)
                write_all(fd_out, json_frame(bridge.hello()) + bridge.result())
            else:
                raise BridgeError(f"unknown frame kind {kind}")
            dog.idle()
    except Exception as err:  # noqa: BLE001  (every failure is one line for the other end)
        reason = str(err) if isinstance(err, BridgeError) else f"{type(err).__name__}: {one_line(str(err))}"
        try:
            write_all(fd_out, json_frame({"error": one_line(reason)}))
        except OSError:
            pass
        sys.stderr.write(f"rrl_gym.bridge: {one_line(reason)}\n")
        return 1
    finally:
        if bridge is not None:
            bridge.close()


def main(argv: list[str] | None = None) -> int:
    """Entry point: frames on stdin/stdout; stray prints of the environments go to stderr."""
    p = argparse.ArgumentParser(prog="python -m rrl_gym.bridge", description="Gymnasium environments behind a pipe (see the module docstring).")
    p.add_argument("--step-timeout", type=float, default=60.0, help="seconds one message may take before the bridge exits")
    p.add_argument("--idle-timeout", type=float, default=600.0, help="seconds without a message before the bridge exits")
    a = p.parse_args(argv)
    out = os.dup(1)
    os.dup2(2, 1)  # print() inside an environment must not corrupt the frames
    return serve(0, out, a.step_timeout, a.idle_timeout)


if __name__ == "__main__":
    sys.exit(main())
