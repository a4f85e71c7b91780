/**
 * The result cache: jobs are deterministic (same spec and seed, same engine → same
 * result), so a spec that was already trained and scored reuses its recorded result
 * instead of training again. Keys hash the validated spec (defaults filled, keys sorted)
 * with the engine version. The cache lives in the run's store by default, or in a file
 * shared between runs (`--cache FILE`).
 */
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { JobRow } from './store.js';

/** Bumped whenever a change to the inner engine changes what a spec trains to. */
export const ENGINE_VERSION = `rrl-engine/${(JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version}`;

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  return v;
}

/** The cache key of a validated spec. */
export function specKey(spec: unknown): string {
  return createHash('sha256').update(ENGINE_VERSION).update(JSON.stringify(canonical(spec))).digest('hex');
}

/** A recorded result that a later identical job may reuse. */
export interface CachedResult
  extends Pick<JobRow, 'task' | 'failureKind' | 'error' | 'envSteps' | 'examples' | 'wallSeconds' | 'cpuSeconds' | 'raw' | 'normalized' | 'artifactDir'> {
  key: string;
  status: 'succeeded' | 'failed';
}

/** Failures that a rerun would repeat (timeouts, memory and cancellations are not cached). */
export const DETERMINISTIC_FAILURES = new Set(['nan', 'error']);

/** Result cache on an SQLite file. */
export class ResultCache {
  private readonly db: Database.Database;

  /** Opens (or creates) the cache table in `path`. */
  constructor(readonly path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS results (
      key TEXT PRIMARY KEY, task TEXT NOT NULL, status TEXT NOT NULL, failure_kind TEXT, error TEXT,
      env_steps INTEGER, examples INTEGER, wall_seconds REAL, cpu_seconds REAL, raw REAL, normalized REAL,
      artifact_dir TEXT, created_at TEXT NOT NULL)`);
  }

  /** The recorded result for a key, if any. */
  get(key: string): CachedResult | undefined {
    return this.db
      .prepare(
        `SELECT key, task, status, failure_kind AS failureKind, error, env_steps AS envSteps, examples, wall_seconds AS wallSeconds,
                cpu_seconds AS cpuSeconds, raw, normalized, artifact_dir AS artifactDir FROM results WHERE key = ?`,
      )
      .get(key) as CachedResult | undefined;
  }

  /** Records a result (successes and deterministic failures only); the first record wins. */
  put(r: CachedResult): void {
    if (r.status === 'failed' && !DETERMINISTIC_FAILURES.has(r.failureKind ?? '')) return;
    this.db
      .prepare(
        `INSERT OR IGNORE INTO results (key, task, status, failure_kind, error, env_steps, examples, wall_seconds, cpu_seconds, raw, normalized, artifact_dir, created_at)
         VALUES (@key, @task, @status, @failureKind, @error, @envSteps, @examples, @wallSeconds, @cpuSeconds, @raw, @normalized, @artifactDir, @createdAt)`,
      )
      .run({ ...r, createdAt: new Date().toISOString() });
  }

  /** Closes the file. */
  close(): void {
    this.db.close();
  }
}
