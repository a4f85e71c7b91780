import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SCHEMA } from './schema.js';

/** Status of a job row. */
export type JobStatus = 'pending' | 'succeeded' | 'failed' | 'invalid';

/**
 * What a job is: the agent's `proposal`, a task's `baseline` (one per harness seed and attempt),
 * a `rung` of successive halving (a proposal trained by the harness at a share of its budget, see
 * outer/fidelity.ts), or a `confirm` job (a bonus candidate trained again by the harness on one of
 * its own seeds, see outer/settle.ts; `parentId` names the candidate).
 */
export type JobKind = 'proposal' | 'baseline' | 'rung' | 'confirm';

/** One job as stored. */
export interface JobRow {
  id: number;
  runId: string;
  iteration: number;
  slot: number;
  task: string;
  kind: JobKind;
  agent: string;
  spec: unknown;
  trace: unknown;
  status: JobStatus;
  failureKind: string | null;
  error: string | null;
  envSteps: number | null;
  examples: number | null;
  wallSeconds: number | null;
  cpuSeconds: number | null;
  artifactDir: string | null;
  /** When the result was reused from an identical earlier job: where it came from. */
  cacheHit: string | null;
  /**
   * For a reused result: who first produced it, an agent's job (`proposal`, also a rung) or the
   * harness's own (`harness`: a baseline or confirmation seed); null when not reused or unknown
   * (stores before it). Only a hit on an agent's job is shown as cached (store/cache.ts).
   */
  cacheOrigin: CacheOrigin | null;
  raw: number | null;
  normalized: number | null;
  /** Standard error of `normalized` (bootstrap over held-out episodes or rows); null when unknown. */
  stderr: number | null;
  reward: number | null;
  advantage: number | null;
  /** The group the reward was normalised in (one task in one iteration). */
  groupId: string | null;
  finishedAt: string | null;
  /** A `rung` job: its rung (0 = the lowest fidelity); null for other kinds. */
  rung: number | null;
  /** A `rung` or `confirm` job: the proposal it trains. */
  parentId: number | null;
  /**
   * Share of the spec's budget the job's result stands for: a rung job's share; a proposal
   * settled by successive halving, the share of the highest rung it reached (1: full budget);
   * null when the job itself trained at the budget it was written with.
   */
  share: number | null;
  /** The merge patch over the task's baseline spec the answer was written as (outer/answer.ts); null for a full spec. */
  patch: unknown;
}

/** Who first produced a cached result: an agent's job, or the harness's own (a baseline or confirmation seed). */
export type CacheOrigin = 'proposal' | 'harness';

/** What a job's execution produced, as recorded. */
export interface JobOutcome {
  status: Exclude<JobStatus, 'pending'>;
  failureKind?: string | null;
  error?: string | null;
  envSteps?: number | null;
  examples?: number | null;
  wallSeconds?: number | null;
  cpuSeconds?: number | null;
  artifactDir?: string | null;
  cacheHit?: string | null;
  /** Who first produced the reused result (with `cacheHit`). */
  cacheOrigin?: CacheOrigin | null;
  score?: { raw: number; normalized: number; stderr?: number | null } | null;
  curve?: { name: string; step: number; wallTime: number; value: number }[];
  /** The share of the budget the result stands for (a proposal settled from its rungs). */
  share?: number | null;
}

/** An episode of `rrl serve` as stored (serve/episodes.ts). */
export interface EpisodeRow {
  id: number;
  task: string;
  maxSubmissions: number;
  status: 'open' | 'closed';
  /** The idempotency key it was created with, if any. */
  key: string | null;
  /** Once closed: the mean of its submissions' rewards (null when none could be scored). */
  reward: number | null;
  reason: string | null;
  /** Once closed: the answer its close gave, returned again to every later close. */
  answer: unknown;
  createdAt: string;
  closedAt: string | null;
}

/** One submission of an episode: its 1-based index, the one-completion request it was settled as, and its feedback once settled. */
export interface SubmissionRow {
  idx: number;
  request: number;
  /** The client's idempotency key, if it sent one. */
  key: string | null;
  /** The digest of the request's task and completion (serve/service.ts `requestDigest`). */
  digest: string | null;
  feedback: unknown;
}

const now = (): string => new Date().toISOString();

/** The run's record in SQLite (WAL mode, every write in a transaction). */
export class Store {
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
    this.migrate();
  }

  /** Adds columns that stores written by earlier versions lack. */
  private migrate(): void {
    const has = (table: string, column: string): boolean =>
      (this.db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).some((c) => c.name === column);
    if (!has('rewards', 'group_id')) this.db.exec('ALTER TABLE rewards ADD COLUMN group_id TEXT');
    if (!has('scores', 'stderr')) this.db.exec('ALTER TABLE scores ADD COLUMN stderr REAL');
    if (!has('runs', 'eval_identity')) this.db.exec('ALTER TABLE runs ADD COLUMN eval_identity TEXT');
    // Successive halving (outer/fidelity.ts): rung jobs and the share a result stands for.
    if (!has('jobs', 'rung')) this.db.exec('ALTER TABLE jobs ADD COLUMN rung INTEGER');
    if (!has('jobs', 'parent_id')) this.db.exec('ALTER TABLE jobs ADD COLUMN parent_id INTEGER');
    if (!has('jobs', 'share')) this.db.exec('ALTER TABLE jobs ADD COLUMN share REAL');
    // The patch form of an answer (outer/answer.ts): the merge patch as written.
    if (!has('jobs', 'patch')) this.db.exec('ALTER TABLE jobs ADD COLUMN patch TEXT');
    // Idempotent requests of `rrl serve`: the client's key and the digest of task and completions.
    if (!has('requests', 'idem_key')) this.db.exec('ALTER TABLE requests ADD COLUMN idem_key TEXT');
    if (!has('requests', 'digest')) this.db.exec('ALTER TABLE requests ADD COLUMN digest TEXT');
    // Who produced a reused result (store/cache.ts): `cached` shows only hits on agents' jobs.
    if (!has('jobs', 'cache_origin')) this.db.exec('ALTER TABLE jobs ADD COLUMN cache_origin TEXT');
  }

  /**
   * Records a request of `rrl serve` (a group of completions for one task) with its jobs, all or
   * none: job `i` of request `r` is stored with iteration `r` and slot `i`. A request that is a
   * submission of an episode (`episode`) is recorded as its next submission in the same
   * transaction. Returns the request id.
   */
  addRequest(
    runId: string,
    task: string,
    jobs: { spec: unknown; trace: unknown; rejected?: { kind: string; error: string }; patch?: unknown }[],
    match: { key: string | null; digest: string | null } = { key: null, digest: null },
    episode?: { id: number; key: string | null },
  ): number {
    return this.db.transaction(() => {
      const id = Number(
        this.db
          .prepare("INSERT INTO requests (run_id, task, completions, status, created_at, idem_key, digest) VALUES (?, ?, ?, 'pending', ?, ?, ?)")
          .run(runId, task, jobs.length, now(), match.key, match.digest).lastInsertRowid,
      );
      this.addJobs(
        runId,
        jobs.map((j, slot) => ({ ...j, iteration: id, slot, task, kind: 'proposal' as const, agent: 'external' })),
      );
      if (episode) {
        this.db
          .prepare(
            'INSERT INTO episode_submissions (episode_id, idx, request_id, idem_key) SELECT ?, COUNT(*) + 1, ?, ? FROM episode_submissions WHERE episode_id = ?',
          )
          .run(episode.id, id, episode.key, episode.id);
      }
      return id;
    })();
  }

  /** Records an open episode of `rrl serve` (up to `maxSubmissions` jobs of one task); returns its id. */
  addEpisode(runId: string, task: string, maxSubmissions: number, key: string | null): number {
    return Number(
      this.db
        .prepare("INSERT INTO episodes (run_id, task, max_submissions, status, idem_key, created_at) VALUES (?, ?, ?, 'open', ?, ?)")
        .run(runId, task, maxSubmissions, key, now()).lastInsertRowid,
    );
  }

  /** One episode of a run by id, if any. */
  episode(runId: string, id: number): EpisodeRow | undefined {
    return this.episodeWhere('run_id = ? AND id = ?', runId, id);
  }

  /** The episode made with an idempotency key, if any. */
  episodeByKey(runId: string, key: string): EpisodeRow | undefined {
    return this.episodeWhere('run_id = ? AND idem_key = ? ORDER BY id LIMIT 1', runId, key);
  }

  private episodeWhere(where: string, ...args: unknown[]): EpisodeRow | undefined {
    const r = this.db
      .prepare(
        `SELECT id, task, max_submissions AS maxSubmissions, status, idem_key AS key, reward, reason, answer, created_at AS createdAt, closed_at AS closedAt FROM episodes WHERE ${where}`,
      )
      .get(...args) as (Omit<EpisodeRow, 'answer'> & { answer: string | null }) | undefined;
    return r && { ...r, answer: r.answer === null ? null : JSON.parse(r.answer) };
  }

  /** The submissions of an episode, in order, each with its request and (once settled) its stored feedback. */
  episodeSubmissions(episodeId: number): SubmissionRow[] {
    const rows = this.db
      .prepare(
        'SELECT e.idx, e.request_id AS request, e.idem_key AS key, e.feedback, r.digest FROM episode_submissions e JOIN requests r ON r.id = e.request_id WHERE e.episode_id = ? ORDER BY e.idx',
      )
      .all(episodeId) as (Omit<SubmissionRow, 'feedback'> & { feedback: string | null })[];
    return rows.map((r) => ({ ...r, feedback: r.feedback === null ? null : JSON.parse(r.feedback) }));
  }

  /** Keeps the feedback of a settled submission (what its reply showed), so later reads need neither its request nor its artifact. */
  setSubmissionFeedback(episodeId: number, idx: number, feedback: unknown): void {
    this.db.prepare('UPDATE episode_submissions SET feedback = ? WHERE episode_id = ? AND idx = ?').run(JSON.stringify(feedback), episodeId, idx);
  }

  /** Closes an open episode with its reward and the answer its close gave; false when it was closed already (nothing changes). */
  closeEpisode(id: number, reward: number | null, reason: string | null, answer: unknown): boolean {
    const r = this.db
      .prepare("UPDATE episodes SET status = 'closed', reward = ?, reason = ?, answer = ?, closed_at = ? WHERE id = ? AND status = 'open'")
      .run(reward, reason, JSON.stringify(answer), now(), id);
    return r.changes === 1;
  }

  /** Closes a request: its rewards and the response it answered land together. */
  finishRequest(
    id: number,
    rewards: { jobId: number; reward: number; advantage: number | null; detail: unknown; groupId?: string | null }[],
    response: unknown,
  ): void {
    this.db.transaction(() => {
      const ins = this.db.prepare('INSERT OR REPLACE INTO rewards (job_id, reward, advantage, detail, group_id) VALUES (?, ?, ?, ?, ?)');
      for (const r of rewards) ins.run(r.jobId, r.reward, r.advantage, JSON.stringify(r.detail), r.groupId ?? null);
      this.db.prepare("UPDATE requests SET status = 'done', response = ?, finished_at = ? WHERE id = ?").run(JSON.stringify(response), now(), id);
    })();
  }

  /** The request made with an idempotency key, if any. */
  requestByKey(runId: string, key: string): { id: number; task: string; completions: number; digest: string | null } | undefined {
    return this.db.prepare('SELECT id, task, completions, digest FROM requests WHERE run_id = ? AND idem_key = ? ORDER BY id LIMIT 1').get(runId, key) as
      | { id: number; task: string; completions: number; digest: string | null }
      | undefined;
  }

  /** The latest request with this digest made within the last `withinSeconds`, if any. */
  requestByDigest(runId: string, digest: string, withinSeconds: number): { id: number; task: string; completions: number; digest: string | null } | undefined {
    const since = new Date(Date.now() - withinSeconds * 1000).toISOString();
    return this.db
      .prepare('SELECT id, task, completions, digest FROM requests WHERE run_id = ? AND digest = ? AND created_at >= ? ORDER BY id DESC LIMIT 1')
      .get(runId, digest, since) as { id: number; task: string; completions: number; digest: string | null } | undefined;
  }

  /** One request of a run by id (as `requests` lists it), if any. */
  request(runId: string, id: number): ReturnType<Store['requests']>[number] | undefined {
    return this.requests(runId, undefined, id)[0];
  }

  /** Requests of a run, optionally only those with a status (`pending` / `done`), in order. */
  requests(
    runId: string,
    status?: string,
    id?: number,
  ): { id: number; task: string; completions: number; status: string; response: unknown; createdAt: string; finishedAt: string | null }[] {
    const args: unknown[] = [runId, ...(status ? [status] : []), ...(id !== undefined ? [id] : [])];
    const rows = this.db
      .prepare(
        `SELECT id, task, completions, status, response, created_at AS createdAt, finished_at AS finishedAt FROM requests WHERE run_id = ?${status ? ' AND status = ?' : ''}${id !== undefined ? ' AND id = ?' : ''} ORDER BY id`,
      )
      .all(...args) as {
      id: number;
      task: string;
      completions: number;
      status: string;
      response: string | null;
      createdAt: string;
      finishedAt: string | null;
    }[];
    return rows.map((r) => ({ ...r, response: r.response === null ? null : JSON.parse(r.response) }));
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
  iterations(runId: string): { idx: number; status: string; meanReward: number | null; meanNormalized: number | null; bestNormalized: number | null }[] {
    return this.db
      .prepare(
        'SELECT idx, status, mean_reward AS meanReward, mean_normalized AS meanNormalized, best_normalized AS bestNormalized FROM iterations WHERE run_id = ? ORDER BY idx',
      )
      .all(runId) as { idx: number; status: string; meanReward: number | null; meanNormalized: number | null; bestNormalized: number | null }[];
  }

  /**
   * Inserts proposed jobs, all or none; returns their ids in order. Jobs are pending unless
   * `rejected` says the agent already found them unusable: those are recorded as invalid.
   */
  addJobs(
    runId: string,
    jobs: {
      iteration: number;
      slot: number;
      task: string;
      kind: JobKind;
      agent: string;
      spec: unknown;
      trace: unknown;
      rejected?: { kind: string; error: string };
      /** `rung` jobs: the rung, the proposal they train and the share of its budget. */
      rung?: number;
      parentId?: number;
      share?: number;
      /** The merge patch the spec was written as (null or absent: a full spec). */
      patch?: unknown;
    }[],
  ): number[] {
    const ins = this.db.prepare(
      'INSERT INTO jobs (run_id, iteration, slot, task, kind, agent, spec, trace, status, failure_kind, error, created_at, finished_at, rung, parent_id, share, patch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    return this.db.transaction(() =>
      jobs.map((j) => {
        const t = now();
        const r = j.rejected;
        return Number(
          ins.run(
            runId,
            j.iteration,
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
          'UPDATE jobs SET status = ?, failure_kind = ?, error = ?, env_steps = ?, examples = ?, wall_seconds = ?, cpu_seconds = ?, artifact_dir = ?, cache_hit = ?, cache_origin = ?, finished_at = ? WHERE id = ?',
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
          "UPDATE jobs SET status = 'pending', failure_kind = NULL, error = NULL, env_steps = NULL, examples = NULL, wall_seconds = NULL, cpu_seconds = NULL, artifact_dir = NULL, cache_hit = NULL, cache_origin = NULL, finished_at = NULL WHERE id = ?",
        )
        .run(id);
      for (const table of ['scores', 'curves', 'rewards']) this.db.prepare(`DELETE FROM ${table} WHERE job_id = ?`).run(id);
    })();
  }

  /** One job by id, joined with its score and reward. */
  job(runId: string, id: number): JobRow | undefined {
    return this.jobs(runId, { id })[0];
  }

  /** Jobs of a run, optionally of one iteration and kind, joined with score and reward. */
  jobs(runId: string, filter: { iteration?: number; kind?: JobKind; id?: number } = {}): JobRow[] {
    const where = ['j.run_id = ?'];
    const args: unknown[] = [runId];
    if (filter.iteration !== undefined) {
      where.push('j.iteration = ?');
      args.push(filter.iteration);
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
        `SELECT j.id, j.run_id AS runId, j.iteration, j.slot, j.task, j.kind, j.agent, j.spec, j.trace, j.status,
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
    rewards: { jobId: number; reward: number; advantage: number | null; detail: unknown; groupId?: string | null }[],
    checkpoint: { agent: string; state: unknown },
    summary: { meanReward: number; meanNormalized: number | null; bestNormalized: number | null; updateStats: unknown },
  ): void {
    this.db.transaction(() => {
      const ins = this.db.prepare('INSERT OR REPLACE INTO rewards (job_id, reward, advantage, detail, group_id) VALUES (?, ?, ?, ?, ?)');
      for (const r of rewards) ins.run(r.jobId, r.reward, r.advantage, JSON.stringify(r.detail), r.groupId ?? null);
      this.db
        .prepare('INSERT OR REPLACE INTO checkpoints (run_id, iteration, agent, state, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(runId, idx, checkpoint.agent, JSON.stringify(checkpoint.state), now());
      this.db
        .prepare(
          "UPDATE iterations SET status = 'done', mean_reward = ?, mean_normalized = ?, best_normalized = ?, update_stats = ?, finished_at = ? WHERE run_id = ? AND idx = ?",
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
}
