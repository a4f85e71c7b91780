/**
 * The noise table: each task's training noise as measured (its baseline spec on the harness's
 * seeds), kept once per task, engine and evaluation secret so that `rrl tasks` can show it
 * without training anything. Every training run records the references it measured;
 * `rrl tasks --measure-noise` measures the tasks that have none. The file is
 * `RRL_NOISE_FILE`, else `${XDG_CACHE_HOME:-~/.cache}/recursive-rl/noise.db`; the rewards never
 * read it (a run always measures its own reference), so it is a record, not an input.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** One task's measured noise. */
export interface NoiseRecord {
  task: string;
  /** Seeds that scored. */
  seeds: number;
  /** Mean normalised score of the baseline spec over them (the task's reference). */
  mean: number | null;
  /** Sample standard deviation over the seeds: the training noise (null: fewer than two). */
  sd: number | null;
  /** Max − min over the seeds. */
  spread: number | null;
  /** Root mean square of the evaluation's bootstrap standard errors. */
  evalSe: number;
  measuredAt: string;
}

/** Where the noise table lives. */
export function noiseFile(): string {
  if (process.env.RRL_NOISE_FILE) return process.env.RRL_NOISE_FILE;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'recursive-rl', 'noise.db');
}

/** The noise table on an SQLite file, keyed by task, engine identity and evaluation identity. */
export class NoiseStore {
  private readonly db: Database.Database;

  /** Opens (or creates) the table in `path` (default `noiseFile()`). */
  constructor(readonly path: string = noiseFile()) {
    mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`CREATE TABLE IF NOT EXISTS noise (
      task TEXT NOT NULL, engine TEXT NOT NULL, evaluation TEXT NOT NULL, seeds INTEGER NOT NULL, mean REAL, sd REAL, spread REAL,
      eval_se REAL NOT NULL, measured_at TEXT NOT NULL, PRIMARY KEY (task, engine, evaluation))`);
  }

  /** Records (or replaces) a task's measurement under an engine and evaluation identity. */
  put(engine: string, evaluation: string, r: Omit<NoiseRecord, 'measuredAt'>): void {
    this.db
      .prepare('INSERT OR REPLACE INTO noise (task, engine, evaluation, seeds, mean, sd, spread, eval_se, measured_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(r.task, engine, evaluation, r.seeds, r.mean, r.sd, r.spread, r.evalSe, new Date().toISOString());
  }

  /** The measurements under an engine and evaluation identity, by task. */
  all(engine: string, evaluation: string): Map<string, NoiseRecord> {
    const rows = this.db
      .prepare('SELECT task, seeds, mean, sd, spread, eval_se AS evalSe, measured_at AS measuredAt FROM noise WHERE engine = ? AND evaluation = ?')
      .all(engine, evaluation) as NoiseRecord[];
    return new Map(rows.map((r) => [r.task, r]));
  }

  /** Closes the file. */
  close(): void {
    this.db.close();
  }
}
