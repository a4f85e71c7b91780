"""Gymnasium alone, for ``npm run bench -- gym-bridge``: env steps per second of a
``SyncVectorEnv`` (same-step autoreset, as the bridge) under uniformly random actions.

``python -m rrl_gym.bench ENV_ID NUM_ENVS VECTOR_STEPS`` prints ``{"stepsPerSec": X}``.
"""

from __future__ import annotations

import json
import sys
import time

import gymnasium as gym
import numpy as np


def steps_per_second(env_id: str, num_envs: int, vector_steps: int, seed: int = 0) -> float:
    """Env steps per second of ``num_envs`` copies of ``env_id`` stepped together ``vector_steps`` times."""
    envs = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync", vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP})
    envs.reset(seed=seed)
    envs.action_space.seed(seed)
    rng = np.random.default_rng(seed)
    space = envs.single_action_space
    t0 = time.perf_counter()
    for _ in range(vector_steps):
        if isinstance(space, gym.spaces.Discrete):
            actions = rng.integers(0, int(space.n), size=num_envs)
        else:
            actions = envs.action_space.sample()
        envs.step(actions)
    dt = time.perf_counter() - t0
    envs.close()
    return num_envs * vector_steps / dt


if __name__ == "__main__":
    print(json.dumps({"stepsPerSec": steps_per_second(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))}))
