/**
 * The outer reward rules: what the trainer agent is paid for one job. Every rule gives an
 * invalid spec or a failed job (error, timeout, out of memory, NaN) **−1**. Otherwise:
 *
 * - `improvement` (default): the normalised hidden score's improvement over the task's
 *   reference (the mean of its baseline spec over the harness's seeds, outer/noise.ts), clipped
 *   to [−1, 1], plus a bonus of 0.5 when a **confirmed** score beats the best confirmed score on
 *   the task so far (the reference and every earlier confirmed job) by more than the noise of
 *   the two:
 *
 *       confirmed − best > max(0.01, 2 · sqrt(u² + u_best²))
 *
 *   where `u` and `u_best` are uncertainties that include the training noise (the spread of the
 *   task's baseline over seeds) as well as the evaluation's bootstrap standard error. Only a
 *   score confirmed on the harness's own seeds can earn the bonus, so re-running a spec with
 *   another seed (or a number moved by 1e-6) does not;
 * - `best`: the improvement over the best confirmed score so far, clipped to [−1, 1];
 * - `cost`: the normalised score minus λ × the share of the task's compute cap the job used
 *   (env steps or examples), clipped to [−1, 1] like the others (a diverging regression's score of
 *   −10⁹ would swamp its group's advantages), so that being cheap pays as well as being good.
 *
 * Without a reference (the baseline failed on every seed and attempt) no improvement is paid:
 * the rule gives a job that ran 0 under `improvement` and `best`, and settling
 * (outer/settle.ts) makes it unscorable: no reward at all, in `rrl train` as in `rrl serve`.
 */
export const REWARD_RULE = { failure: -1, bonus: 0.5, margin: 0.01 } as const;

/** The selectable rules. */
export const REWARD_RULES = ['improvement', 'best', 'cost'] as const;
/** One of `REWARD_RULES`. */
export type RewardRuleName = (typeof REWARD_RULES)[number];

/** Inputs of a rule for one job. */
export interface RewardInput {
  status: 'succeeded' | 'failed' | 'invalid';
  normalized: number | null;
  /** The task's reference: its baseline spec's mean normalised score over seeds (null: none scored). */
  baseline: number | null;
  /** Best confirmed normalised score on this task before this group (the reference at least). */
  bestSoFar: number;
  /** Uncertainty of `normalized`, training noise included (null or absent: unknown, counted as 0). */
  uncertainty?: number | null;
  /** Uncertainty of the score that holds `bestSoFar` (null or absent: unknown, counted as 0). */
  bestUncertainty?: number | null;
  /**
   * True when `normalized` is a confirmed score (the mean over the harness's confirmation
   * seeds): only such a score earns the bonus. Default true (the rule alone).
   */
  confirmed?: boolean;
  /** Share of the task's compute cap the job used, in [0, 1]. */
  computeShare?: number;
  /**
   * False when `normalized` is a score at a share of the job's budget (a proposal stopped early by
   * successive halving, outer/fidelity.ts): such a score never earns the bonus. Default true.
   */
  fullBudget?: boolean;
}

/** What a rule paid and why. */
export interface RewardParts {
  reward: number;
  improvement: number | null;
  bonus: number;
  cost: number;
}

const clip = (v: number): number => Math.max(-1, Math.min(1, v));

/**
 * The group-relative advantages of one group's rewards (GRPO): each reward minus the group's
 * mean, divided by the group's population standard deviation; all 0 when the rewards (nearly)
 * agree (sd ≤ 1e-6), so a group without a spread teaches nothing.
 */
export function groupAdvantages(rewards: number[]): number[] {
  const mean = rewards.reduce((a, b) => a + b, 0) / Math.max(1, rewards.length);
  const sd = Math.sqrt(rewards.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, rewards.length));
  return rewards.map((r) => (sd > 1e-6 ? (r - mean) / sd : 0));
}

/** Applies a rule (default `improvement`); `lambda` weighs compute in the `cost` rule. */
export function outerReward(i: RewardInput, rule: RewardRuleName = 'improvement', lambda = 0.5): RewardParts {
  if (i.status !== 'succeeded' || i.normalized === null || !Number.isFinite(i.normalized)) {
    return { reward: REWARD_RULE.failure, improvement: null, bonus: 0, cost: 0 };
  }
  if (rule !== 'cost' && i.baseline === null) return { reward: 0, improvement: null, bonus: 0, cost: 0 };
  if (rule === 'best') {
    const improvement = clip(i.normalized - i.bestSoFar);
    return { reward: improvement, improvement, bonus: 0, cost: 0 };
  }
  if (rule === 'cost') {
    const cost = lambda * Math.max(0, Math.min(1, i.computeShare ?? 0));
    return { reward: clip(i.normalized - cost), improvement: i.baseline === null ? null : i.normalized - i.baseline, bonus: 0, cost };
  }
  const improvement = clip(i.normalized - (i.baseline as number));
  const beyond = i.normalized - i.bestSoFar > bonusThreshold(i.uncertainty, i.bestUncertainty);
  const bonus = i.fullBudget !== false && i.confirmed !== false && beyond ? REWARD_RULE.bonus : 0;
  return { reward: improvement + bonus, improvement, bonus, cost: 0 };
}

/** How far a score must exceed the best so far to earn the bonus: max(margin, 2·sqrt(u² + u_best²)). */
export function bonusThreshold(uncertainty?: number | null, bestUncertainty?: number | null): number {
  const u = (v: number | null | undefined): number => (v !== null && v !== undefined && Number.isFinite(v) && v > 0 ? v : 0);
  return Math.max(REWARD_RULE.margin, 2 * Math.sqrt(u(uncertainty) ** 2 + u(bestUncertainty) ** 2));
}

/** A scored job that may hold the best score of a task. */
export interface ScoredEntry {
  /** The job holding it (null: the task's reference, its baseline over seeds). */
  jobId: number | null;
  normalized: number;
  /** Its uncertainty, training noise included. */
  uncertainty: number | null;
}

/**
 * The best score among `entries` (the first on ties, so the baseline listed first keeps it):
 * what a new job must beat, with the uncertainty it is compared under.
 */
export function bestEntry(entries: ScoredEntry[]): ScoredEntry | null {
  let best: ScoredEntry | null = null;
  for (const e of entries) if (Number.isFinite(e.normalized) && (best === null || e.normalized > best.normalized)) best = e;
  return best;
}
