"""verl custom reward module for `rrl serve` (UNTESTED on a cluster).

verl loads this file by path (``custom_reward_function.path``), so it imports the installed
rrl_client package (``pip install --no-deps -e python`` in verl's environment) rather than
importing relatively. With ``reward_model.reward_manager=batch`` and
``custom_reward_function.name=compute_score_batch`` a whole batch is scored with one
``POST /v1/rewards`` per task. The server's address and token come from ``RRL_URL`` / ``RRL_TOKEN``.
An unscorable completion gets the mean of its prompt row's scored completions (advantage 0) from
``compute_score_batch``, and -1 from the per-sample ``compute_score``, which cannot see its row.
"""

from rrl_client.rewards import compute_score, compute_score_batch

__all__ = ["compute_score", "compute_score_batch"]
