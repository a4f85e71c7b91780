#!/usr/bin/env bash
# verl GRPO recipe with rewards from `rrl serve` (UNTESTED on a cluster: no GPUs or verl here; the
# flags follow verl's documented Hydra config; check them against your verl version).
# Multi-GPU, multi-node: verl on Ray generates with vLLM and updates the policy (LoRA); `rrl serve`
# runs each completion as a job on its executor (e.g. --executor slurm) and returns the reward.
#   1. rrl serve --host 0.0.0.0 --token-env RRL_TOKEN --executor slurm --partition cpu   (one node)
#   2. RRL_URL=http://HOST:8377 python -m rrl_client.verl_data --out data/rrl-train.parquet
#   3. RRL_URL=http://HOST:8377 RRL_TOKEN=... python/verl/run_grpo.sh  trainer.nnodes=2
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python3 -m verl.trainer.main_ppo \
  algorithm.adv_estimator=grpo \
  data.train_files="${RRL_DATA:-data/rrl-train.parquet}" \
  data.val_files="${RRL_DATA:-data/rrl-train.parquet}" \
  data.train_batch_size=16 \
  data.max_prompt_length=2048 \
  data.max_response_length=1024 \
  actor_rollout_ref.model.path="${RRL_MODEL:-Qwen/Qwen3-4B}" \
  actor_rollout_ref.model.lora_rank=32 \
  actor_rollout_ref.model.lora_alpha=64 \
  actor_rollout_ref.model.target_modules=all-linear \
  actor_rollout_ref.actor.optim.lr=1e-5 \
  actor_rollout_ref.actor.ppo_mini_batch_size=16 \
  actor_rollout_ref.actor.use_kl_loss=False \
  actor_rollout_ref.rollout.name=vllm \
  actor_rollout_ref.rollout.n=8 \
  actor_rollout_ref.rollout.gpu_memory_utilization=0.6 \
  reward_model.reward_manager=batch \
  custom_reward_function.path="$here/rrl_reward.py" \
  custom_reward_function.name=compute_score_batch \
  trainer.n_gpus_per_node="${GPUS_PER_NODE:-8}" \
  trainer.nnodes=1 \
  trainer.total_epochs=1 \
  trainer.logger='[console]' \
  "$@"
