/**
 * The outer reward rules: what the trainer agent is paid for one job. Every rule gives an
 * invalid spec or a failed job (error, timeout, out of memory, NaN) **−1**. Otherwise:
 *
 * - `improvement` (default): the normalised hidden score's improvement over the task's
 *   baseline spec, clipped to [−1, 1], plus a bonus of 0.5 when it beats the best normalised
 *   score seen on the task so far (the baseline and every earlier iteration) by more than 0.01;
 * - `best`: the improvement over the best normalised score so far, clipped to [−1, 1];
 * - `cost`: the normalised score minus λ × the share of the task's compute cap the job used
 *   (env steps or examples), so that being cheap pays as well as being good.
 */
export const REWARD_RULE = { failure: -1, bonus: 0.5, margin: 0.01 } as const;

/** The selectable rules. */
export const REWARD_RULES = ['improvement', 'best', 'cost'] as const;
export type RewardRuleName = (typeof REWARD_RULES)[number];

/** Inputs of a rule for one job. */
export interface RewardInput {
  status: 'succeeded' | 'failed' | 'invalid';
  normalized: number | null;
  /** The baseline spec's normalised score on this task. */
  baseline: number;
  /** Best normalised score on this task before this iteration. */
  bestSoFar: number;
  /** Share of the task's compute cap the job used, in [0, 1]. */
  computeShare?: number;
}

/** What a rule paid and why. */
export interface RewardParts {
  reward: number;
  improvement: number | null;
  bonus: number;
  cost: number;
}

const clip = (v: number): number => Math.max(-1, Math.min(1, v));

/** Applies a rule (default `improvement`); `lambda` weighs compute in the `cost` rule. */
export function outerReward(i: RewardInput, rule: RewardRuleName = 'improvement', lambda = 0.5): RewardParts {
  if (i.status !== 'succeeded' || i.normalized === null || !Number.isFinite(i.normalized)) {
    return { reward: REWARD_RULE.failure, improvement: null, bonus: 0, cost: 0 };
  }
  if (rule === 'best') {
    const improvement = clip(i.normalized - i.bestSoFar);
    return { reward: improvement, improvement, bonus: 0, cost: 0 };
  }
  if (rule === 'cost') {
    const cost = lambda * Math.max(0, Math.min(1, i.computeShare ?? 0));
    return { reward: i.normalized - cost, improvement: i.normalized - i.baseline, bonus: 0, cost };
  }
  const improvement = clip(i.normalized - i.baseline);
  const bonus = i.normalized > i.bestSoFar + REWARD_RULE.margin ? REWARD_RULE.bonus : 0;
  return { reward: improvement + bonus, improvement, bonus, cost: 0 };
}
