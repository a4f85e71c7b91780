"""Python side of recursive-rl: a client for `rrl serve`, TRL/verl reward functions, a GRPO trainer."""

from .client import JobsAccepted, PromptResponse, RewardResult, RewardsResponse, RrlClient, RrlError, RrlTimeout
from .rewards import TrlReward, compute_score, compute_score_batch
from .shaping import FormatReward

__all__ = [
    "FormatReward",
    "JobsAccepted",
    "PromptResponse",
    "RewardResult",
    "RewardsResponse",
    "RrlClient",
    "RrlError",
    "RrlTimeout",
    "TrlReward",
    "compute_score",
    "compute_score_batch",
]
