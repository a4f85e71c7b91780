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

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/** A spec's identity with its seed left out: two specs that differ only by their seed share it. */
export function seedlessKey(spec: unknown): string {
  return JSON.stringify(canonical(withSeed(spec, 0)));
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
  /** The baseline spec's identity without its seed (`seedlessKey`): a spec with this key is the baseline, reseeded. */
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
  const spec = latest.length ? seedlessKey(latest[0].spec) : null;
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

/** A candidate's score over the harness's confirmation seeds. */
export interface Confirmation {
  /** Mean normalised score over the confirmation seeds that scored (null: none did). */
  normalized: number | null;
  /** Its uncertainty: sqrt(evalSe² + max(trainSd, sd of the seeds)² / n). */
  uncertainty: number;
  /** Every confirmation seed trained and scored. */
  complete: boolean;
  scored: number;
  /** The confirmation jobs. */
  jobIds: number[];
}

/** The confirmation of one candidate from its `confirm` jobs (null while any is pending). */
export function confirmation(rows: JobRow[], ref: TaskReference): Confirmation | null {
  if (!rows.length || rows.some((r) => r.status === 'pending')) return null;
  const ok = rows.filter((r) => r.status === 'succeeded' && finite(r.normalized));
  const values = ok.map((r) => r.normalized as number);
  const evalSe = rms(ok.map((r) => (finite(r.stderr) && r.stderr > 0 ? r.stderr : 0)));
  const sd = Math.max(trainNoise(ref), sampleSd(values) ?? 0);
  return {
    normalized: values.length ? mean(values) : null,
    uncertainty: values.length ? Math.sqrt(evalSe ** 2 + sd ** 2 / values.length) : Number.POSITIVE_INFINITY,
    complete: values.length === rows.length && rows.length >= CONFIRM_SEEDS,
    scored: values.length,
    jobIds: rows.map((r) => r.id),
  };
}
