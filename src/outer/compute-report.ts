/**
 * What a run spent and what it gained: the compute its jobs used (env steps, examples, CPU
 * seconds), the held-out gain (per task, the best full-budget normalised score of the agent's jobs
 * minus the baseline spec's, on the hidden evaluation), the confirmed gain (the same from the best
 * score confirmed on the harness's seeds, free of the luck of picking the highest of many single
 * trainings), and compute per unit of each. Read from the store's job rows, so a resumed run
 * reports the same as an uninterrupted one.
 */
import { taskStanding } from './settle.js';
import { taskReference } from './noise.js';
import type { JobRow } from '../store/store.js';

/** Compute used by a set of trained jobs. */
export interface ComputeSpent {
  /** Jobs that trained here (results reused from the cache spend nothing and are not counted). */
  jobs: number;
  envSteps: number;
  examples: number;
  cpuSeconds: number;
  wallSeconds: number;
}

/** A run's compute, held-out gain and compute per unit of gain (null where there is no gain). */
export interface ComputeReport {
  /** The agent's jobs: proposals trained at their budget, and rung jobs of successive halving. */
  proposals: ComputeSpent;
  /** The baseline specs (the same in every run of the same tasks). */
  baselines: ComputeSpent;
  /**
   * Per task: the baseline's normalised score, the best full-budget proposal's and the gain; the
   * best score confirmed on the harness's seeds (the task's standing at the end of the run: the
   * mean over the confirmation seeds of the best confirmed proposal, the baseline's when none was
   * confirmed above it) and the confirmed gain.
   */
  tasks: Record<string, { baseline: number | null; best: number | null; gain: number | null; confirmed: number | null; confirmedGain: number | null }>;
  /** Mean gain over the tasks that have one. */
  gain: number | null;
  /**
   * Mean confirmed gain over the tasks that have one. The best of many single trainings is biased
   * upward by their noise, the more so the more proposals reach the full budget; the confirmed
   * gain is not (a run that confirmed nothing, `confirm: false`, has 0).
   */
  confirmedGain: number | null;
  /** The agent's jobs' compute divided by `gain` (null when the gain is null or not above 0). */
  perGain: PerGain;
  /** The agent's jobs' compute divided by `confirmedGain` (null when it is null or not above 0). */
  perConfirmedGain: PerGain;
}

/** Compute per unit of a gain (null when the gain is null or not above 0). */
export interface PerGain {
  envSteps: number | null;
  examples: number | null;
  cpuSeconds: number | null;
}

/** True when a job trained (a finished run of the executor, not a cache hit nor a settled proposal). */
function trained(j: JobRow): boolean {
  if (j.status === 'pending' || j.status === 'invalid' || j.cacheHit !== null) return false;
  // A proposal settled by successive halving carries the sum of its rung jobs' compute.
  return !(j.kind === 'proposal' && j.share !== null);
}

/** Sums the compute of the jobs that trained. */
export function computeSpent(jobs: JobRow[]): ComputeSpent {
  const t = jobs.filter(trained);
  const sum = (f: (j: JobRow) => number | null): number => t.reduce((a, j) => a + (f(j) ?? 0), 0);
  return {
    jobs: t.length,
    envSteps: sum((j) => j.envSteps),
    examples: sum((j) => j.examples),
    cpuSeconds: sum((j) => j.cpuSeconds),
    wallSeconds: sum((j) => j.wallSeconds),
  };
}

/** The compute report of a run's job rows (all kinds). */
export function computeReport(jobs: JobRow[]): ComputeReport {
  const proposals = computeSpent(jobs.filter((j) => j.kind !== 'baseline'));
  const baselines = computeSpent(jobs.filter((j) => j.kind === 'baseline'));
  const tasks: ComputeReport['tasks'] = {};
  for (const task of [...new Set(jobs.map((j) => j.task))].sort()) {
    const baseline = taskReference(jobs.filter((j) => j.kind === 'baseline' && j.task === task)).mean;
    const full = jobs
      .filter((j) => j.kind === 'proposal' && j.task === task && j.status === 'succeeded' && (j.share === null || j.share >= 1))
      .map((j) => j.normalized)
      .filter((v): v is number => v !== null && Number.isFinite(v));
    const best = full.length ? Math.max(...full) : null;
    const mine = jobs.filter((j) => j.task === task);
    const standing = taskStanding(
      mine.filter((j) => j.kind === 'baseline'),
      mine.filter((j) => j.kind === 'proposal'),
      mine.filter((j) => j.kind === 'confirm'),
    );
    const confirmed = baseline === null ? null : standing.best.normalized;
    tasks[task] = {
      baseline,
      best,
      gain: best !== null && baseline !== null ? best - baseline : null,
      confirmed,
      confirmedGain: confirmed !== null && baseline !== null ? confirmed - baseline : null,
    };
  }
  const meanOf = (xs: (number | null)[]): number | null => {
    const v = xs.filter((g): g is number => g !== null);
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
  };
  const gain = meanOf(Object.values(tasks).map((t) => t.gain));
  const confirmedGain = meanOf(Object.values(tasks).map((t) => t.confirmedGain));
  const per = (g: number | null): PerGain => {
    const by = (v: number): number | null => (g !== null && g > 0 ? v / g : null);
    return { envSteps: by(proposals.envSteps), examples: by(proposals.examples), cpuSeconds: by(proposals.cpuSeconds) };
  };
  return { proposals, baselines, tasks, gain, confirmedGain, perGain: per(gain), perConfirmedGain: per(confirmedGain) };
}
