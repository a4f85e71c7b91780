"""Python side of recursive-rl: a client for `rrl serve`, TRL/verl reward functions, a GRPO trainer."""

from .client import PromptResponse, RewardResult, RewardsResponse, RrlClient, RrlError
from .rewards import TrlReward, compute_score, compute_score_batch
from .shaping import FormatReward

__all__ = ["PromptResponse", "RewardResult", "RewardsResponse", "RrlClient", "RrlError", "FormatReward", "TrlReward", "compute_score", "compute_score_batch"]
