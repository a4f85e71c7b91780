/**
 * A run's store read from outside, the way a second process sees it while `rrl train` writes
 * (or after it was killed): a read-only SQLite connection on `store.db`, never the `Store` class,
 * which would create tables. Used by the kill-anywhere harness (./crash.ts).
 */
import Database from 'better-sqlite3';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** One job as an outside reader sees it, with its artifact's `status.json` (when it has an artifact). */
export interface JobView {
  id: number;
  kind: string;
  round: number;
  slot: number;
  task: string;
  spec: string;
  status: string;
  failureKind: string | null;
  error: string | null;
  artifactDir: string | null;
  finishedAt: string | null;
  raw: number | null;
  normalized: number | null;
  scoredAt: string | null;
  /** Points of its training curve in the store (written with its result, in the same transaction). */
  curvePoints: number;
  reward: number | null;
  advantage: number | null;
  groupId: string | null;
  /** `status.json` of the job's artifact: modification time (ns) and text; null when absent. */
  artifactStatus: { mtimeNs: string; text: string } | null;
}

/** An iteration row. */
export interface IterationView {
  idx: number;
  status: string;
  meanReward: number | null;
  meanNormalized: number | null;
  bestNormalized: number | null;
  finishedAt: string | null;
}

/** Everything the harness compares: the run row, its jobs, iterations and agent checkpoints. */
export interface StoreView {
  run: { id: string; status: string } | null;
  jobs: JobView[];
  iterations: IterationView[];
  checkpoints: { iteration: number; createdAt: string; state: string }[];
}

const EMPTY: StoreView = { run: null, jobs: [], iterations: [], checkpoints: [] };

/** The directory a job trains in: `jobs/j00042` under the run directory (as the outer loop names it). */
export function jobDir(runDir: string, id: number): string {
  return join(runDir, 'jobs', `j${String(id).padStart(5, '0')}`);
}

/** `status.json` in an artifact directory, with its modification time in nanoseconds. */
export function artifactStatus(dir: string | null): JobView['artifactStatus'] {
  if (!dir) return null;
  const file = join(dir, 'status.json');
  try {
    const mtimeNs = statSync(file, { bigint: true }).mtimeNs.toString();
    return { mtimeNs, text: readFileSync(file, 'utf8') };
  } catch {
    return null;
  }
}

function open(runDir: string): Database.Database | null {
  const file = join(runDir, 'store.db');
  if (!existsSync(file)) return null;
  try {
    return new Database(file, { readonly: true, fileMustExist: true });
  } catch {
    return null;
  }
}

/** True when a store error only means the writer has not created the schema yet. */
const notYet = (err: unknown): boolean => /no such table/i.test(String((err as Error).message));

/**
 * How far the run is: finished jobs + iterations done + 1 once the run is finished. It only
 * grows while nothing is lost, so the harness uses it to place kills along the run.
 */
export function progressOf(runDir: string): number {
  const db = open(runDir);
  if (!db) return 0;
  try {
    const r = db
      .prepare(
        `SELECT (SELECT count(*) FROM jobs WHERE status != 'pending') + (SELECT count(*) FROM iterations WHERE status = 'done')
              + (SELECT count(*) FROM runs WHERE status = 'finished') AS p`,
      )
      .get() as { p: number };
    return r.p;
  } catch {
    return 0; // no schema yet, or the writer holds a lock for a moment: no progress seen this time
  } finally {
    db.close();
  }
}

/** Reads the whole run (empty before the first process created it). */
export function readStore(runDir: string): StoreView {
  const db = open(runDir);
  if (!db) return EMPTY;
  try {
    const run = (db.prepare('SELECT id, status FROM runs LIMIT 1').get() as StoreView['run'] | undefined) ?? null;
    const jobs = (
      db
        .prepare(
          `SELECT j.id, j.kind, j.round, j.slot, j.task, j.spec, j.status, j.failure_kind AS failureKind, j.error,
                  j.artifact_dir AS artifactDir, j.finished_at AS finishedAt, s.raw, s.normalized, s.scored_at AS scoredAt,
                  (SELECT count(*) FROM curves c WHERE c.job_id = j.id) AS curvePoints, r.reward, r.advantage, r.group_id AS groupId
             FROM jobs j LEFT JOIN scores s ON s.job_id = j.id LEFT JOIN rewards r ON r.job_id = j.id ORDER BY j.id`,
        )
        .all() as Omit<JobView, 'artifactStatus'>[]
    ).map((j) => ({ ...j, artifactStatus: artifactStatus(j.status === 'pending' ? jobDir(runDir, j.id) : j.artifactDir) }));
    const iterations = db
      .prepare(
        `SELECT idx, status, mean_reward AS meanReward, mean_normalized AS meanNormalized, best_normalized AS bestNormalized, finished_at AS finishedAt
           FROM iterations ORDER BY idx`,
      )
      .all() as IterationView[];
    const checkpoints = db.prepare('SELECT iteration, created_at AS createdAt, state FROM checkpoints ORDER BY iteration').all() as StoreView['checkpoints'];
    return { run, jobs, iterations, checkpoints };
  } catch (err) {
    if (notYet(err)) return EMPTY;
    throw err;
  } finally {
    db.close();
  }
}
