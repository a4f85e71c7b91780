"""Python side of recursive-rl: a client for `rrl serve`, TRL/verl reward functions, a GRPO trainer."""

from .client import RewardResult, RewardsResponse, RrlClient, RrlError
from .rewards import TrlReward, compute_score, compute_score_batch

__all__ = ["RewardResult", "RewardsResponse", "RrlClient", "RrlError", "TrlReward", "compute_score", "compute_score_batch"]
