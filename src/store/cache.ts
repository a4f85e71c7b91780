/**
 * The result cache: jobs are deterministic (same spec and seed, same engine, same hidden
 * evaluation → same result), so a spec that was already trained and scored reuses its recorded
 * result instead of training again. Keys hash the validated spec (defaults filled, keys sorted)
 * with the engine identity (a hash of the code that trains and scores), the evaluation
 * identity (which secret scored it) and the task's fingerprint (its definition and data:
 * a task file's bytes and its data files', tasks/fingerprint.ts). The cache lives in the run's
 * store by default, or in a file shared between runs (`--cache FILE`).
 *
 * Each entry records its **origin**: whether an agent's job (a proposal) has produced or reused
 * it, or so far only the harness's own jobs (baseline and confirmation seeds, on the harness's
 * secret seeds). A job that reuses a result says `cached` only when an agent's job had it before:
 * a hit on a harness seed's result would otherwise tell an agent which seeds are the harness's.
 */
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { join, relative } from 'node:path';
import type { CacheOrigin, JobRow } from './store.js';
import { canonicalJson } from '../util/canonical.js';

/** The compiled code a job's result depends on, relative to this module (dist/src/store/). */
const ENGINE_DIRS = ['../inner', '../spec', '../tasks', '../util'];
/** Packages whose installed version changes what a spec trains to. */
const ENGINE_PACKAGES = ['@tensorflow/tfjs', '@tensorflow/tfjs-backend-wasm'];

function walk(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : []));
}

let engineId: string | null = null;

/**
 * The engine identity: sha256 over the compiled JavaScript (tests excluded) of inner/, spec/,
 * tasks/, util/ and outer/scoring/, each file's path and content in sorted order, plus the
 * installed versions of tfjs and its wasm backend. Computed once per process.
 */
export function engineIdentity(): string {
  if (engineId) return engineId;
  const here = fileURLToPath(new URL('.', import.meta.url));
  const root = join(here, '..');
  const isCode = (f: string): boolean => f.endsWith('.js') && !f.endsWith('.test.js');
  const files = [...ENGINE_DIRS.flatMap((d) => walk(join(here, d))), ...walk(join(root, 'outer', 'scoring'))]
    .filter(isCode)
    .map((f) => relative(root, f).split('\\').join('/'))
    .sort();
  const h = createHash('sha256').update('rrl-engine/1\n');
  for (const f of files)
    h.update(`${f}\n`)
      .update(readFileSync(join(root, f)))
      .update('\n');
  const require = createRequire(import.meta.url);
  for (const p of ENGINE_PACKAGES) {
    let version = 'absent';
    try {
      version = (require(`${p}/package.json`) as { version: string }).version;
    } catch {
      // not installed: recorded as absent
    }
    h.update(`${p}@${version}\n`);
  }
  engineId = `rrl-engine/${h.digest('hex').slice(0, 16)}`;
  return engineId;
}

/**
 * The cache key of a validated spec under this engine, an evaluation identity (the secret's,
 * `evalIdentity()` of tasks/secret.ts) and the fingerprint of the task's definition and data
 * (`taskFingerprint(task)` of tasks/fingerprint.ts). The store knows neither: the harness passes both.
 */
export function specKey(spec: unknown, evaluation: string, fingerprint: string): string {
  return createHash('sha256').update(`${engineIdentity()}\n${evaluation}\n${fingerprint}\n`).update(canonicalJson(spec)).digest('hex');
}

/** A recorded result that a later identical job may reuse. */
export interface CachedResult
  extends Pick<
    JobRow,
    'task' | 'failureKind' | 'error' | 'envSteps' | 'examples' | 'wallSeconds' | 'cpuSeconds' | 'raw' | 'normalized' | 'stderr' | 'artifactDir'
  > {
  key: string;
  status: 'succeeded' | 'failed';
  /** `proposal` once an agent's job has produced or reused it; `harness` while only the harness's jobs have (entries older than the column: `harness`). */
  origin: CacheOrigin;
}

/** The origin of a job's result in the cache: an agent's job (a proposal or one of its rungs) or the harness's own. */
export function originOf(kind: JobRow['kind']): CacheOrigin {
  return kind === 'proposal' || kind === 'rung' ? 'proposal' : 'harness';
}

/**
 * Failures that a rerun would repeat: only a NaN loss. An `error` may come from a broken worker
 * (a WebAssembly abort left by an earlier job) rather than the spec; timeouts, memory,
 * cancellations and every scorer failure depend on the machine, so none of them is cached.
 */
export const DETERMINISTIC_FAILURES = new Set(['nan']);

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
    const columns = this.db.prepare('PRAGMA table_info(results)').all() as { name: string }[];
    if (!columns.some((c) => c.name === 'stderr')) this.db.exec('ALTER TABLE results ADD COLUMN stderr REAL');
    if (!columns.some((c) => c.name === 'origin')) this.db.exec('ALTER TABLE results ADD COLUMN origin TEXT');
  }

  /** The recorded result for a key, if any. */
  get(key: string): CachedResult | undefined {
    return this.db
      .prepare(
        `SELECT key, task, status, failure_kind AS failureKind, error, env_steps AS envSteps, examples, wall_seconds AS wallSeconds,
                cpu_seconds AS cpuSeconds, raw, normalized, stderr, artifact_dir AS artifactDir,
                CASE origin WHEN 'proposal' THEN 'proposal' ELSE 'harness' END AS origin FROM results WHERE key = ?`,
      )
      .get(key) as CachedResult | undefined;
  }

  /** Records that an agent's job has reused the entry of `key`: from now on a hit on it is shown as cached. */
  markProposed(key: string): void {
    this.db.prepare("UPDATE results SET origin = 'proposal' WHERE key = ?").run(key);
  }

  /** Records a result (successes and deterministic failures only); the first record wins (its origin too; default `harness`). */
  put(r: Omit<CachedResult, 'origin'> & { origin?: CacheOrigin }): void {
    if (r.status === 'failed' && !DETERMINISTIC_FAILURES.has(r.failureKind ?? '')) return;
    this.db
      .prepare(
        `INSERT OR IGNORE INTO results (key, task, status, failure_kind, error, env_steps, examples, wall_seconds, cpu_seconds, raw, normalized, stderr,
                                          artifact_dir, origin, created_at)
         VALUES (@key, @task, @status, @failureKind, @error, @envSteps, @examples, @wallSeconds, @cpuSeconds, @raw, @normalized, @stderr,
                 @artifactDir, @origin, @createdAt)`,
      )
      .run({ ...r, origin: r.origin ?? 'harness', createdAt: new Date().toISOString() });
  }

  /** Closes the file. */
  close(): void {
    this.db.close();
  }
}
