/**
 * The outer reward rule: what the trainer agent is paid for one job.
 *
 * - an invalid spec or a failed job (error, timeout, out of memory, NaN): −1;
 * - otherwise the normalised hidden score's improvement over the task's baseline spec,
 *   clipped to [−1, 1], plus a bonus of 0.5 when it beats the best normalised score seen
 *   on the task so far (the baseline and every earlier iteration) by more than 0.01.
 */
export const REWARD_RULE = { failure: -1, bonus: 0.5, margin: 0.01 } as const;

/** Inputs of the rule for one job. */
export interface RewardInput {
  status: 'succeeded' | 'failed' | 'invalid';
  normalized: number | null;
  /** The baseline spec's normalised score on this task. */
  baseline: number;
  /** Best normalised score on this task before this iteration. */
  bestSoFar: number;
}

/** Applies the rule; returns the reward and the parts it was made of. */
export function outerReward(i: RewardInput): { reward: number; improvement: number | null; bonus: number } {
  if (i.status !== 'succeeded' || i.normalized === null || !Number.isFinite(i.normalized)) {
    return { reward: REWARD_RULE.failure, improvement: null, bonus: 0 };
  }
  const improvement = Math.max(-1, Math.min(1, i.normalized - i.baseline));
  const bonus = i.normalized > i.bestSoFar + REWARD_RULE.margin ? REWARD_RULE.bonus : 0;
  return { reward: improvement + bonus, improvement, bonus };
}
