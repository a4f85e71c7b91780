/**
 * The outer reward rules: what the trainer agent is paid for one job. Every rule gives an
 * invalid spec or a failed job (error, timeout, out of memory, NaN) **−1**. Otherwise:
 *
 * - `improvement` (default): the normalised hidden score's improvement over the task's
 *   baseline spec, clipped to [−1, 1], plus a bonus of 0.5 when it beats the best normalised
 *   score seen on the task so far (the baseline and every earlier iteration) by more than the
 *   noise of the two scores:
 *
 *       normalized − bestSoFar > max(0.01, 2 · sqrt(se² + se_best²))
 *
 *   where `se` is the job's standard error and `se_best` that of the score holding the best
 *   (both bootstrap standard errors of the normalised score, see outer/score.ts). Two scores
 *   that differ by less than twice the standard error of their difference are not told apart
 *   (for two draws of the same noise, about a 2% chance that one pays against the other, where a
 *   fixed 0.01 paid for nearly every lucky draw), so re-running a spec with another seed does not
 *   earn the bonus. A score whose standard error is
 *   unknown (null: an evaluation command that reports none) counts it as 0, leaving the margin;
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
  /** Standard error of this job's normalised score (null or absent: unknown, counted as 0). */
  stderr?: number | null;
  /** Standard error of the score that holds `bestSoFar` (null or absent: unknown, counted as 0). */
  bestStderr?: number | null;
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
  const bonus = i.fullBudget !== false && i.normalized - i.bestSoFar > bonusThreshold(i.stderr, i.bestStderr) ? REWARD_RULE.bonus : 0;
  return { reward: improvement + bonus, improvement, bonus, cost: 0 };
}

/** How far a score must exceed the best so far to earn the bonus: max(margin, 2·sqrt(se² + se_best²)). */
export function bonusThreshold(stderr?: number | null, bestStderr?: number | null): number {
  const se = (v: number | null | undefined): number => (v !== null && v !== undefined && Number.isFinite(v) && v > 0 ? v : 0);
  return Math.max(REWARD_RULE.margin, 2 * Math.sqrt(se(stderr) ** 2 + se(bestStderr) ** 2));
}

/** A scored job that may hold the best score of a task. */
export interface ScoredEntry {
  jobId: number | null;
  normalized: number;
  stderr: number | null;
}

/**
 * The best score among `entries` (the first on ties, so the baseline listed first keeps it):
 * what a new job must beat, with the standard error it is compared under.
 */
export function bestEntry(entries: ScoredEntry[]): ScoredEntry | null {
  let best: ScoredEntry | null = null;
  for (const e of entries) if (Number.isFinite(e.normalized) && (best === null || e.normalized > best.normalized)) best = e;
  return best;
}
