"""``RrlGRPOTrainer``: TRL's GRPOTrainer with the harness's rules on what reaches the loss (unscorable
completions and flat groups left out) and each group's prompt run once in the log-probabilities; and the
per-completion masks it is built from. ``rrl_client.grpo`` builds and runs it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from .prefix import checkpointing, shared_prefix_logps
from .rewards import TrlReward


def flat_groups(advantages: Any, group: int) -> Any:
    """Per completion: whether its group's advantages are all zero (its rewards were all equal)."""
    import torch

    flat = torch.isclose(advantages.view(-1, group), torch.zeros_like(advantages.view(-1, group)), atol=1e-6).all(dim=1)
    return flat.repeat_interleave(group)


def unscorable_rows(rewards_per_func: Any, harness_columns: Sequence[int]) -> Any:
    """Per completion: whether the harness could not score it (its reward is None, NaN in TRL's table).

    With no harness column among the reward functions, a row is unscorable when every function
    returned None (TRL's own rule)."""
    import torch

    if harness_columns:
        return torch.isnan(rewards_per_func[:, list(harness_columns)]).any(dim=1)
    return torch.isnan(rewards_per_func).all(dim=1)


try:
    from trl.trainer.grpo_trainer import GRPOTrainer as _GRPOTrainer
except ImportError:  # pragma: no cover - the trainer needs TRL; the client and rewards do not
    _GRPOTrainer = object  # type: ignore[misc,assignment]


class RrlGRPOTrainer(_GRPOTrainer):
    """GRPOTrainer that leaves out of the loss what teaches nothing: unscorable completions, and
    (unless ``keep_flat_groups``) groups whose rewards are all equal.

    **Unscorable.** A completion whose harness reward is None (``TrlReward``, the harness could not
    score its job) is no number: its whole row of rewards is made None whatever the other reward
    functions said, so TRL leaves it out of its group's mean and standard deviation (the other
    completions' advantages are computed over the scored ones) and gives it advantage 0; here its
    completion mask is zeroed too, so it has no KL term and no share of the token normaliser.

    **Flat groups.** TRL 1.13 gives a group of equal rewards zero advantages (so no policy-gradient
    term) but keeps its tokens in the loss mask: with beta > 0 their KL term still pulls the policy
    towards the reference, and they count in the token normaliser, shrinking the other groups' step.
    Their completion mask is zeroed as well. In both cases the normaliser is recounted.

    **Shared prompts** (``shared_prefix``): log-probabilities (the loss's, the KL reference's, the old
    policy's) run each distinct prompt of the batch once (:func:`rrl_client.prefix.shared_prefix_logps`),
    the same numbers as TRL's full pass; multimodal inputs, MoE auxiliary losses and a model in training
    with gradient checkpointing on (its layers drop the shared cache; ``rrl_client.grpo`` turns
    checkpointing off with the shared prompt) take TRL's path."""

    def __init__(self, *args: Any, keep_flat_groups: bool = False, shared_prefix: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.keep_flat_groups = keep_flat_groups
        self.shared_prefix = shared_prefix
        self.harness_columns = [i for i, f in enumerate(self.reward_funcs) if isinstance(f, TrlReward) or getattr(f, "is_harness_reward", False)]
        self._unscorable: Any = None

    def _get_per_token_logps_and_entropies(
        self,
        model: Any,
        input_ids: Any,
        attention_mask: Any,
        logits_to_keep: int,
        batch_size: int | None = None,
        compute_entropy: bool = False,
        compute_aux_loss: bool = False,
        **multimodal: Any,
    ) -> Any:
        shared = self.shared_prefix and not (model.training and checkpointing(model))
        if not shared or compute_aux_loss or any(v is not None for v in multimodal.values()):
            return super()._get_per_token_logps_and_entropies(
                model, input_ids, attention_mask, logits_to_keep, batch_size, compute_entropy, compute_aux_loss, **multimodal
            )
        import torch
        from trl.trainer.utils import entropy_from_logits

        logps, logits = shared_prefix_logps(model, input_ids, attention_mask, logits_to_keep, self.temperature)
        entropies = None
        if compute_entropy:
            # As TRL: entropies carry gradients only when the entropy bonus is a loss term.
            with torch.set_grad_enabled(bool(getattr(self, "_entropy_bonus_enabled", False)) and torch.is_grad_enabled()):
                entropies = entropy_from_logits(logits)
        return logps, entropies, None

    def _calculate_rewards(self, inputs: Any, prompts: Any, completions: Any, completion_ids_list: Any) -> Any:
        rewards_per_func = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        unscorable = unscorable_rows(rewards_per_func, self.harness_columns)
        rewards_per_func[unscorable] = float("nan")  # a null is never a number: no reward function scores it
        self._unscorable = unscorable  # every process's rows, as rewards_per_func (gathered)
        return rewards_per_func

    def _generate_and_score_completions(self, inputs: Any) -> Any:
        import torch

        out = super()._generate_and_score_completions(inputs)
        n = out["advantages"].shape[0]
        start = self.accelerator.process_index * n
        unscorable = self._unscorable[start : start + n].to(out["advantages"].device)
        out["advantages"] = out["advantages"].masked_fill(unscorable, 0.0)
        flat = flat_groups(out["advantages"], cast(int, self.num_generations))
        drop = unscorable | (torch.zeros_like(flat) if self.keep_flat_groups else flat)
        if bool(drop.any()):
            out["completion_mask"] = out["completion_mask"] * (~drop).unsqueeze(1).int()
            counted = out["completion_mask"] if out.get("tool_mask") is None else out["completion_mask"] * out["tool_mask"]
            out["num_items_in_batch"] = self.accelerator.gather(counted.sum()).sum()
        mode = "train" if getattr(self.model, "training", True) else "eval"
        self._metrics[mode]["flat_group_share"].append(float(flat.float().mean().item()))
        self._metrics[mode]["unscorable_share"].append(float(unscorable.float().mean().item()))
        return out


__all__ = ["RrlGRPOTrainer", "flat_groups", "unscorable_rows"]
