"""Tiny Gymnasium environments for the bridge's tests (made as ``gym_test_envs:NAME`` so the bridge imports this module)."""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Chatty(gym.Env[np.ndarray, int]):
    """Prints to stdout on every step (must not corrupt the frames); ends after 3 steps."""

    observation_space = spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self) -> None:
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return np.array([self.np_random.uniform(-1, 1), 0.0], dtype=np.float32), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        print("chatty env says hello on stdout")
        self.t += 1
        return np.array([0.5, float(self.t)], dtype=np.float32), float(action), self.t >= 3, False, {}


class Slow(Chatty):
    """Sleeps far longer than any step timeout."""

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        time.sleep(3600)
        return super().step(action)


gym.register("RrlChatty-v0", entry_point=Chatty, max_episode_steps=50)
gym.register("RrlSlow-v0", entry_point=Slow, max_episode_steps=50)
