/**
 * The two lines `rrl train` ends with: whether the agent's jobs got better on the hidden
 * evaluation over the run, and what the numbers in the table mean.
 */
import { REWARD_RULE, type RewardRuleName } from '../outer/reward.js';
import type { TrainSummary } from '../outer/loop.js';
import { num } from './format.js';

/** What the outer reward pays under `rule`, in one line. */
export function rewardMeaning(rule: RewardRuleName, lambda: number): string {
  const failed = `${REWARD_RULE.failure} for an invalid spec or a failed job`;
  if (rule === 'best') return `outer reward: the job's hidden score minus the best so far on its task; ${failed}`;
  if (rule === 'cost') return `outer reward: the job's hidden score minus ${lambda} × the share of the compute cap it used; ${failed}`;
  return (
    `outer reward: the job's hidden score minus the baseline spec's mean over the harness's seeds, +${REWARD_RULE.bonus} when a score confirmed ` +
    `on the harness's seeds beats the best so far beyond the noise (so it falls as the bar rises); ${failed}`
  );
}

/**
 * The headline: the mean hidden score of the agent's jobs in the first and the last iteration,
 * against the baseline specs, and one line saying what the numbers mean.
 */
export function learningHeadline(
  summary: Pick<TrainSummary, 'iterations' | 'baselines'> & Partial<Pick<TrainSummary, 'noise'>>,
  rule: RewardRuleName,
  lambda: number,
  varied = false,
): string[] {
  const scored = summary.iterations.filter((i) => i.meanNormalized !== null);
  const entries = Object.entries(summary.baselines);
  const known = entries.map(([, v]) => v).filter((v): v is number => v !== null);
  // The reference with its training noise: the spread of the baseline over the harness's seeds.
  const sd = (task: string): string => {
    const n = summary.noise?.[task];
    return n && n.sd !== null ? ` ± ${num(n.sd)}` : '';
  };
  const seeds = Math.max(0, ...Object.values(summary.noise ?? {}).map((n) => n.seeds));
  // Many tasks (drawn from families): their mean, not one figure per task.
  const baselines =
    (entries.length > 6
      ? `mean ${num(known.length ? known.reduce((a, b) => a + b, 0) / known.length : null)} over ${entries.length} tasks`
      : entries.map(([task, v]) => `${task} ${num(v)}${sd(task)}`).join(', ')) + (seeds > 1 ? ` (mean ± sd over ${seeds} harness seeds)` : '');
  const lines: string[] = [];
  if (scored.length >= 2) {
    const first = scored[0];
    const last = scored[scored.length - 1];
    const verdict = last.meanNormalized! > first.meanNormalized! ? 'the agent got better' : 'the agent did not get better';
    const went = `${num(first.meanNormalized)} (iteration ${first.iteration + 1}) → ${num(last.meanNormalized)} (iteration ${last.iteration + 1})`;
    lines.push(`${verdict}: its jobs' mean hidden score went ${went}; baseline spec: ${baselines}`);
    if (varied) lines.push("(each iteration took other tasks, so part of that change is the tasks' own difficulty)");
  } else lines.push(`baseline spec's hidden score: ${baselines}`);
  lines.push(`hidden score: normalised on held-out data or seeds, 0 = a trivial model, 1 = the task's reference; ${rewardMeaning(rule, lambda)}`);
  return lines;
}
