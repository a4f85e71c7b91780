/**
 * What a run spent and what it gained: the compute its jobs used (env steps, examples, CPU
 * seconds), the held-out gain (per task, the best full-budget normalised score of the agent's jobs
 * minus the baseline spec's, on the hidden evaluation), and compute per unit of that gain. Read
 * from the store's job rows, so a resumed run reports the same as an uninterrupted one.
 */
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
  /** Per task: the baseline's normalised score, the best full-budget proposal's and the gain. */
  tasks: Record<string, { baseline: number | null; best: number | null; gain: number | null }>;
  /** Mean gain over the tasks that have one. */
  gain: number | null;
  /** The agent's jobs' compute divided by `gain` (null when the gain is null or not above 0). */
  perGain: { envSteps: number | null; examples: number | null; cpuSeconds: number | null };
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
    tasks[task] = { baseline, best, gain: best !== null && baseline !== null ? best - baseline : null };
  }
  const gains = Object.values(tasks)
    .map((t) => t.gain)
    .filter((g): g is number => g !== null);
  const gain = gains.length ? gains.reduce((a, b) => a + b, 0) / gains.length : null;
  const per = (v: number): number | null => (gain !== null && gain > 0 ? v / gain : null);
  const perGain = { envSteps: per(proposals.envSteps), examples: per(proposals.examples), cpuSeconds: per(proposals.cpuSeconds) };
  return { proposals, baselines, tasks, gain, perGain };
}
