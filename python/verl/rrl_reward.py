"""verl custom reward module for `rrl serve` (UNTESTED on a cluster).

verl loads this file by path (``custom_reward_function.path``), so it imports the installed
rrl_client package (``pip install --no-deps -e python`` in verl's environment) rather than
importing relatively. With ``reward_model.reward_manager=batch`` and
``custom_reward_function.name=compute_score_batch`` a whole batch is scored with one
``POST /v1/rewards`` per task. The server's address and token come from ``RRL_URL`` / ``RRL_TOKEN``.
"""

from rrl_client.rewards import compute_score, compute_score_batch

__all__ = ["compute_score", "compute_score_batch"]
