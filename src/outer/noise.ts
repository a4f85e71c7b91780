/**
 * Training noise, measured rather than assumed. The same spec trained on another seed scores
 * differently, so a score alone cannot say whether a job is better or luckier. The harness
 * therefore:
 *
 * - trains every task's baseline spec on `BASELINE_SEEDS` seeds of its own choosing (derived from
 *   the evaluation secret and the task id, never the agent's), and takes their mean as the
 *   task's **reference** and their spread as the task's **training noise**;
 * - gives every score an **uncertainty** that adds that training noise to the evaluation's own
 *   standard error;
 * - before it pays a bonus, **confirms** the candidate: the same spec trained again on
 *   `CONFIRM_SEEDS` harness seeds (the agent's own seed left out), and pays from their mean.
 *
 * This module holds the numbers and the seeds; outer/settle.ts applies them to a group.
 */
import { createHmac } from 'node:crypto';
import type { JobRow } from '../store/store.js';
import { specIdentity } from './identity.js';
import { harnessFailure } from './unscorable.js';

/** Seeds the baseline spec of every task is trained on (the reference and its noise). */
export const BASELINE_SEEDS = 5;
/**
 * Harness seeds a bonus candidate is trained on again before it is paid: the baseline's own seeds,
 * so that the confirmed mean and the reference differ by the spec alone (a spec that differs
 * from the baseline only by its seed is confirmed at exactly the reference).
 */
export const CONFIRM_SEEDS = BASELINE_SEEDS;
/** Attempts per baseline seed when a job fails for a reason of the machine (time, memory, a lost worker). */
export const BASELINE_ATTEMPTS = 3;
/** Training noise assumed where fewer than two baseline seeds scored (normalised units). */
export const UNKNOWN_TRAIN_SD = 0.1;

/**
 * `count` training seeds for `taskId`, chosen by the harness from the evaluation secret: in
 * [1, 2³¹ − 1] like any spec seed, different per task and per installation, unknown to the agent.
 */
export function harnessSeeds(taskId: string, count: number, secret: string): number[] {
  return Array.from({ length: count }, (_, i) => (createHmac('sha256', secret).update(`train-seed/${taskId}/${i}`).digest().readUInt32BE(0) % 0x7ffffffe) + 1);
}

/** The spec with its top-level `seed` replaced (a spec that is not an object is returned as it is). */
export function withSeed(spec: unknown, seed: number): unknown {
  if (!spec || typeof spec !== 'object' || Array.isArray(spec)) return spec;
  return { ...(spec as Record<string, unknown>), seed };
}

/** A failure a rerun may not repeat: anything but an invalid spec and a NaN loss. */
export function machineDependent(row: Pick<JobRow, 'status' | 'failureKind'>): boolean {
  return row.status === 'failed' && row.failureKind !== 'nan';
}

const mean = (v: number[]): number => v.reduce((a, b) => a + b, 0) / v.length;
const sampleSd = (v: number[]): number | null => (v.length < 2 ? null : Math.sqrt(v.reduce((a, x) => a + (x - mean(v)) ** 2, 0) / (v.length - 1)));
const rms = (v: number[]): number => (v.length ? Math.sqrt(mean(v.map((x) => x * x))) : 0);
const finite = (v: number | null | undefined): v is number => v !== null && v !== undefined && Number.isFinite(v);

/** A task's reference: its baseline spec over the harness's seeds. */
export interface TaskReference {
  /** Mean normalised score of the baseline seeds that scored (null: none did). */
  mean: number | null;
  /** Sample standard deviation over those seeds: the task's training noise (null: fewer than two). */
  trainSd: number | null;
  /** Root mean square of their evaluation standard errors (0 when none was reported). */
  evalSe: number;
  /** Uncertainty of `mean`: sqrt(evalSe² + trainSd²/n). */
  uncertainty: number;
  /** Seeds that scored, and seeds asked for. */
  scored: number;
  seeds: number;
  /** Spread (max − min) over the seeds that scored. */
  spread: number | null;
  /** Why there is no reference (every seed failed, or none has run yet); null when there is one. */
  missing: string | null;
  /** The baseline spec's identity (`specIdentity`): a spec with this identity is the baseline, reseeded. */
  spec: string | null;
}

/**
 * Which harness seed a baseline job trains on: attempt `k` of seed `i` is stored in slot
 * `k · BASELINE_SEEDS + i` (a job's slot is unique within its task and iteration).
 */
export function seedIndex(row: Pick<JobRow, 'slot'>): number {
  return row.slot % BASELINE_SEEDS;
}

/** The latest attempt of every baseline seed among `rows` (one task's baseline jobs), by seed. */
export function latestAttempts(rows: JobRow[]): JobRow[] {
  const bySeed = new Map<number, JobRow>();
  for (const r of rows) if (!bySeed.has(seedIndex(r)) || bySeed.get(seedIndex(r))!.id < r.id) bySeed.set(seedIndex(r), r);
  return [...bySeed.values()].sort((a, b) => seedIndex(a) - seedIndex(b));
}

/** The training noise a score of this task is compared under (UNKNOWN_TRAIN_SD when unmeasured). */
export function trainNoise(ref: TaskReference): number {
  return ref.trainSd ?? UNKNOWN_TRAIN_SD;
}

/** The task's reference from its baseline jobs (every attempt; the latest per seed counts). */
export function taskReference(baselineRows: JobRow[]): TaskReference {
  const latest = latestAttempts(baselineRows);
  const spec = latest.length ? specIdentity(latest[0].spec, latest[0].task) : null;
  const ok = latest.filter((r) => r.status === 'succeeded' && finite(r.normalized));
  const values = ok.map((r) => r.normalized as number);
  const evalSe = rms(ok.map((r) => (finite(r.stderr) && r.stderr > 0 ? r.stderr : 0)));
  if (!values.length) {
    const failed = latest.find((r) => r.status === 'failed' || r.status === 'invalid');
    return {
      mean: null,
      trainSd: null,
      evalSe,
      uncertainty: Number.POSITIVE_INFINITY,
      scored: 0,
      seeds: latest.length,
      spread: null,
      missing: failed
        ? `the baseline spec failed on every seed (${failed.failureKind ?? failed.status}: ${failed.error ?? 'no reason'})`
        : 'the baseline spec has not been scored',
      spec,
    };
  }
  const trainSd = sampleSd(values);
  const sd = trainSd ?? UNKNOWN_TRAIN_SD;
  return {
    mean: mean(values),
    trainSd,
    evalSe,
    uncertainty: Math.sqrt(evalSe ** 2 + sd ** 2 / values.length),
    scored: values.length,
    seeds: latest.length,
    spread: Math.max(...values) - Math.min(...values),
    missing: null,
    spec,
  };
}

/** The uncertainty of one job's score: its evaluation standard error and the task's training noise. */
export function scoreUncertainty(stderr: number | null | undefined, ref: TaskReference): number {
  const se = finite(stderr) && stderr > 0 ? stderr : 0;
  return Math.sqrt(se ** 2 + trainNoise(ref) ** 2);
}

/**
 * What a confirmation seed whose job failed of its own (a NaN, its time or memory limit, an error)
 * counts as: the score the `improvement` rule pays −1 for, the reference less one. A failed seed
 * is a failure of the spec like any other, never a seed left out: a spec that trains well on one
 * seed in five is paid for five.
 */
export function failedSeedScore(ref: TaskReference): number {
  return (ref.mean ?? 0) - 1;
}

/** A candidate's score over the harness's confirmation seeds. */
export interface Confirmation {
  /**
   * Mean normalised score over the confirmation seeds, each failed seed counted at
   * `failedSeedScore`; seeds lost to the harness's own failures (outer/unscorable.ts) are left out
   * (null: every seed was).
   */
  normalized: number | null;
  /** Its uncertainty: sqrt(evalSe² + max(trainSd, sd of the seeds)² / n). */
  uncertainty: number;
  /** Every confirmation seed trained and scored. */
  complete: boolean;
  /** Seeds that scored. */
  scored: number;
  /** Seeds whose job failed of its own (counted at `failedSeedScore`). */
  failed: number;
  /** Seeds lost to the harness's own failures (left out). */
  unscorable: number;
  /** The confirmation jobs. */
  jobIds: number[];
}

/**
 * The confirmation of one candidate from its `confirm` jobs (null while any is pending): every
 * seed counts, a failed one as the failure it is (`failedSeedScore`); only the harness's own
 * failures are left out, and a confirmation is complete only when every seed scored.
 */
export function confirmation(rows: JobRow[], ref: TaskReference): Confirmation | null {
  if (!rows.length || rows.some((r) => r.status === 'pending')) return null;
  const ok = rows.filter((r) => r.status === 'succeeded' && finite(r.normalized));
  const lost = rows.filter((r) => harnessFailure(r));
  const failed = rows.length - ok.length - lost.length;
  const values = [...ok.map((r) => r.normalized as number), ...Array.from({ length: failed }, () => failedSeedScore(ref))];
  const evalSe = rms(ok.map((r) => (finite(r.stderr) && r.stderr > 0 ? r.stderr : 0)));
  const sd = Math.max(trainNoise(ref), sampleSd(values) ?? 0);
  return {
    normalized: values.length ? mean(values) : null,
    uncertainty: values.length ? Math.sqrt(evalSe ** 2 + sd ** 2 / values.length) : Number.POSITIVE_INFINITY,
    complete: ok.length === rows.length && rows.length >= CONFIRM_SEEDS,
    scored: ok.length,
    failed,
    unscorable: lost.length,
    jobIds: rows.map((r) => r.id),
  };
}
