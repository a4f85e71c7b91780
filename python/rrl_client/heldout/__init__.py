"""Held-out evaluation of the LLM on tasks it never trained on (``python -m rrl_client.heldout``).

Modules: ``cli`` (the command), ``models`` (the model arms), ``harness`` (posting and reading hidden
scores), ``space`` (the Optuna arm's search space from a patch schema), ``study`` (the Optuna study),
``report`` (aggregation, ``heldout.json``, ``heldout.md``, ``transfer.json`` rows).
"""
