import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { migrate } from './migrate.js';
import type { IterationRow, JobKind, JobOutcome, JobRow, NewJob, RewardEntry } from './rows.js';
import { SCHEMA } from './schema.js';

/** The time of a write, as stored. */
export const now = (): string => new Date().toISOString();

/**
 * The record of a run in SQLite (WAL mode, every write in a transaction): the run, its iterations,
 * jobs and checkpoints. Readers open it as `Store` (store/store.ts), which adds `rrl serve`'s records.
 */
export class JobStore {
  readonly db: Database.Database;
  readonly path: string;

  /** Opens (or creates) `store.db` in the run directory. */
  constructor(runDir: string) {
    mkdirSync(runDir, { recursive: true });
    this.path = join(runDir, 'store.db');
    this.db = new Database(this.path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.db.exec(SCHEMA);
    migrate(this.db);
  }

  /** Closes the database. */
  close(): void {
    this.db.close();
  }

  /**
   * Creates the run row; throws if a run already exists here. `evalIdentity` names the
   * evaluation secret that scores it (the first 16 hex digits of sha256("rrl-eval/" + secret)).
   */
  createRun(id: string, config: unknown, evalIdentity: string | null = null): void {
    this.db
      .prepare('INSERT INTO runs (id, created_at, config, status, eval_identity) VALUES (?, ?, ?, ?, ?)')
      .run(id, now(), JSON.stringify(config), 'running', evalIdentity);
  }

  /** The run recorded in this store, if any. */
  getRun(): { id: string; config: unknown; status: string; createdAt: string; evalIdentity: string | null } | undefined {
    const r = this.db.prepare('SELECT id, config, status, created_at, eval_identity FROM runs LIMIT 1').get() as
      | { id: string; config: string; status: string; created_at: string; eval_identity: string | null }
      | undefined;
    return r && { id: r.id, config: JSON.parse(r.config), status: r.status, createdAt: r.created_at, evalIdentity: r.eval_identity };
  }

  /** Records which evaluation secret scores a run (for runs stored before it was recorded). */
  setEvalIdentity(id: string, evalIdentity: string): void {
    this.db.prepare('UPDATE runs SET eval_identity = ? WHERE id = ?').run(evalIdentity, id);
  }

  /**
   * The task fingerprints a run recorded (tasks/fingerprint.ts: the task's definition and data
   * when the run first used it), by task. A store written before fingerprints has none.
   */
  taskFingerprints(runId: string): Map<string, { fingerprint: string; detail: unknown }> {
    const rows = this.db.prepare('SELECT task, fingerprint, detail FROM task_fingerprints WHERE run_id = ?').all(runId) as {
      task: string;
      fingerprint: string;
      detail: string;
    }[];
    return new Map(rows.map((r) => [r.task, { fingerprint: r.fingerprint, detail: JSON.parse(r.detail) }]));
  }

  /** Records (or replaces) the fingerprint of a task in a run. */
  setTaskFingerprint(runId: string, task: string, fingerprint: string, detail: unknown): void {
    this.db
      .prepare('INSERT OR REPLACE INTO task_fingerprints (run_id, task, fingerprint, detail, recorded_at) VALUES (?, ?, ?, ?, ?)')
      .run(runId, task, fingerprint, JSON.stringify(detail), now());
  }

  /** The tasks a run has jobs on (of any kind and status). */
  jobTasks(runId: string): Set<string> {
    return new Set((this.db.prepare('SELECT DISTINCT task FROM jobs WHERE run_id = ?').all(runId) as { task: string }[]).map((r) => r.task));
  }

  /** Sets the run's status (running / finished / interrupted). */
  setRunStatus(id: string, status: string): void {
    this.db.prepare('UPDATE runs SET status = ?, finished_at = ? WHERE id = ?').run(status, status === 'running' ? null : now(), id);
  }

  /** Records the start of an iteration (idempotent). */
  startIteration(runId: string, idx: number): void {
    this.db.prepare("INSERT OR IGNORE INTO iterations (run_id, idx, status, started_at) VALUES (?, ?, 'running', ?)").run(runId, idx, now());
  }

  /** Iterations with their summaries, in order. */
  iterations(runId: string): IterationRow[] {
    return this.db
      .prepare(
        `SELECT idx, status, mean_reward AS meanReward, mean_normalized AS meanNormalized, best_normalized AS bestNormalized
           FROM iterations WHERE run_id = ? ORDER BY idx`,
      )
      .all(runId) as IterationRow[];
  }

  /**
   * Inserts proposed jobs, all or none; returns their ids in order. Jobs are pending unless
   * `rejected` says the agent already found them unusable: those are recorded as invalid.
   */
  addJobs(runId: string, jobs: NewJob[]): number[] {
    const ins = this.db.prepare(
      `INSERT INTO jobs (run_id, round, slot, task, kind, agent, spec, trace, status, failure_kind, error, created_at, finished_at,
                         rung, parent_id, share, patch)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    return this.db.transaction(() =>
      jobs.map((j) => {
        const t = now();
        const r = j.rejected;
        return Number(
          ins.run(
            runId,
            j.round,
            j.slot,
            j.task,
            j.kind,
            j.agent,
            JSON.stringify(j.spec ?? null),
            JSON.stringify(j.trace ?? null),
            r ? 'invalid' : 'pending',
            r?.kind ?? null,
            r?.error ?? null,
            t,
            r ? t : null,
            j.rung ?? null,
            j.parentId ?? null,
            j.share ?? null,
            j.patch == null ? null : JSON.stringify(j.patch),
          ).lastInsertRowid,
        );
      }),
    )();
  }

  /** Records the outcomes of several jobs, all or none. */
  finishJobs(outcomes: { id: number; outcome: JobOutcome }[]): void {
    this.db.transaction(() => {
      for (const o of outcomes) this.finishJob(o.id, o.outcome);
    })();
  }

  /** Records a job's outcome, score and curve in one transaction. */
  finishJob(id: number, o: JobOutcome): void {
    this.db.transaction(() => {
      this.db
        .prepare(
          `UPDATE jobs SET status = ?, failure_kind = ?, error = ?, env_steps = ?, examples = ?, wall_seconds = ?, cpu_seconds = ?, artifact_dir = ?,
                           cache_hit = ?, cache_origin = ?, finished_at = ?
            WHERE id = ?`,
        )
        .run(
          o.status,
          o.failureKind ?? null,
          o.error ?? null,
          o.envSteps ?? null,
          o.examples ?? null,
          o.wallSeconds ?? null,
          o.cpuSeconds ?? null,
          o.artifactDir ?? null,
          o.cacheHit ?? null,
          o.cacheHit ? (o.cacheOrigin ?? null) : null,
          now(),
          id,
        );
      if (o.share !== undefined) this.db.prepare('UPDATE jobs SET share = ? WHERE id = ?').run(o.share, id);
      if (o.score) {
        this.db
          .prepare('INSERT OR REPLACE INTO scores (job_id, raw, normalized, stderr, scored_at) VALUES (?, ?, ?, ?, ?)')
          .run(id, o.score.raw, o.score.normalized, o.score.stderr ?? null, now());
      }
      if (o.curve?.length) {
        const ins = this.db.prepare('INSERT INTO curves (job_id, name, step, wall_time, value) VALUES (?, ?, ?, ?, ?)');
        for (const p of o.curve) ins.run(id, p.name, p.step, p.wallTime, p.value);
      }
    })();
  }

  /** Makes a finished job pending again, its outcome, score and curve removed: another attempt of the same spec. */
  resetJob(id: number): void {
    this.db.transaction(() => {
      this.db
        .prepare(
          `UPDATE jobs SET status = 'pending', failure_kind = NULL, error = NULL, env_steps = NULL, examples = NULL, wall_seconds = NULL, cpu_seconds = NULL,
                           artifact_dir = NULL, cache_hit = NULL, cache_origin = NULL, finished_at = NULL
            WHERE id = ?`,
        )
        .run(id);
      for (const table of ['scores', 'curves', 'rewards']) this.db.prepare(`DELETE FROM ${table} WHERE job_id = ?`).run(id);
    })();
  }

  /** One job by id, joined with its score and reward. */
  job(runId: string, id: number): JobRow | undefined {
    return this.jobs(runId, { id })[0];
  }

  /** Jobs of a run, optionally of one round (an iteration, or a request of `rrl serve`) and kind, joined with score and reward. */
  jobs(runId: string, filter: { round?: number; kind?: JobKind; id?: number } = {}): JobRow[] {
    const where = ['j.run_id = ?'];
    const args: unknown[] = [runId];
    if (filter.round !== undefined) {
      where.push('j.round = ?');
      args.push(filter.round);
    }
    if (filter.kind) {
      where.push('j.kind = ?');
      args.push(filter.kind);
    }
    if (filter.id !== undefined) {
      where.push('j.id = ?');
      args.push(filter.id);
    }
    const rows = this.db
      .prepare(
        `SELECT j.id, j.run_id AS runId, j.round, j.slot, j.task, j.kind, j.agent, j.spec, j.trace, j.status,
                j.failure_kind AS failureKind, j.error, j.env_steps AS envSteps, j.examples, j.wall_seconds AS wallSeconds,
                j.cpu_seconds AS cpuSeconds, j.artifact_dir AS artifactDir, j.cache_hit AS cacheHit, j.cache_origin AS cacheOrigin, j.finished_at AS finishedAt,
                j.rung, j.parent_id AS parentId, j.share, j.patch,
                s.raw, s.normalized, s.stderr, r.reward, r.advantage, r.group_id AS groupId
           FROM jobs j LEFT JOIN scores s ON s.job_id = j.id LEFT JOIN rewards r ON r.job_id = j.id
          WHERE ${where.join(' AND ')} ORDER BY j.id`,
      )
      .all(...args) as (Omit<JobRow, 'spec' | 'trace' | 'patch'> & { spec: string; trace: string | null; patch: string | null })[];
    return rows.map((r) => ({
      ...r,
      spec: JSON.parse(r.spec),
      trace: r.trace === null ? null : JSON.parse(r.trace),
      patch: r.patch === null ? null : JSON.parse(r.patch),
    }));
  }

  /**
   * Closes an iteration atomically: its rewards, the agent's checkpoint and the
   * iteration summary land together or not at all.
   */
  completeIteration(
    runId: string,
    idx: number,
    rewards: RewardEntry[],
    checkpoint: { agent: string; state: unknown },
    summary: { meanReward: number; meanNormalized: number | null; bestNormalized: number | null; updateStats: unknown },
  ): void {
    this.db.transaction(() => {
      this.insertRewards(rewards);
      this.db
        .prepare('INSERT OR REPLACE INTO checkpoints (run_id, iteration, agent, state, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(runId, idx, checkpoint.agent, JSON.stringify(checkpoint.state), now());
      this.db
        .prepare(
          `UPDATE iterations SET status = 'done', mean_reward = ?, mean_normalized = ?, best_normalized = ?, update_stats = ?, finished_at = ?
            WHERE run_id = ? AND idx = ?`,
        )
        .run(summary.meanReward, summary.meanNormalized, summary.bestNormalized, JSON.stringify(summary.updateStats), now(), runId, idx);
    })();
  }

  /** Replaces the agent checkpoint of a completed iteration (after work the agent did past it). */
  saveCheckpoint(runId: string, iteration: number, checkpoint: { agent: string; state: unknown }): void {
    this.db
      .prepare('INSERT OR REPLACE INTO checkpoints (run_id, iteration, agent, state, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(runId, iteration, checkpoint.agent, JSON.stringify(checkpoint.state), now());
  }

  /** The agent state saved after the latest completed iteration. */
  latestCheckpoint(runId: string): { iteration: number; agent: string; state: unknown } | undefined {
    const r = this.db.prepare('SELECT iteration, agent, state FROM checkpoints WHERE run_id = ? ORDER BY iteration DESC LIMIT 1').get(runId) as
      | { iteration: number; agent: string; state: string }
      | undefined;
    return r && { iteration: r.iteration, agent: r.agent, state: JSON.parse(r.state) };
  }

  /** Records (or replaces) the rewards of jobs; the caller's transaction makes them land with the rest. */
  protected insertRewards(rewards: RewardEntry[]): void {
    const ins = this.db.prepare('INSERT OR REPLACE INTO rewards (job_id, reward, advantage, detail, group_id) VALUES (?, ?, ?, ?, ?)');
    for (const r of rewards) ins.run(r.jobId, r.reward, r.advantage, JSON.stringify(r.detail), r.groupId ?? null);
  }
}
