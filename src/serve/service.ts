/**
 * The harness behind `rrl serve`: completions in, outer rewards out, on the same step as
 * `rrl train` (outer/evaluate.ts). Each request is recorded with its jobs before any of them
 * runs; jobs spread over the executor (identical specs train once); rewards follow the run's
 * rule against the task's baseline job (trained once per task, on first use) and the best score
 * of earlier requests. A restarted service (`--resume`) finishes the requests it left pending,
 * keeping the jobs that had finished.
 */
import { join } from 'node:path';
import type { z } from 'zod';
import type { Executor } from '../run/executor.js';
import type { ExecutorConfig } from '../run/config.js';
import { Store, type JobRow } from '../store/store.js';
import { ResultCache } from '../store/cache.js';
import { getPublicTask, listTasks } from '../tasks/briefs.js';
import { MAX_REPLY_CHARS } from '../spec/bounds.js';
import { buildPrompt, compactExample, type ChatMessage } from '../outer/agents/prompt.js';
import type { RewardRuleName } from '../outer/reward.js';
import { Scorer, type ScorerOptions } from '../outer/scorer.js';
import { Evaluator, openRun, proposalFromCompletion, rewardGroup } from '../outer/evaluate.js';
import type { JobResponse, RewardsResponse, TaskRow } from './schemas.js';

/** A serve run's configuration, stored with the run and reused on resume. */
export interface ServeConfig {
  mode: 'serve';
  seed: number;
  reward: { rule: RewardRuleName; lambda: number };
  /** Where jobs run (absent: local worker threads). */
  executor?: ExecutorConfig;
}

/** An error the HTTP layer answers with its status (and, for 429, a Retry-After). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** Options of the service. */
export interface ServiceOptions {
  /** Most jobs accepted and not yet finished; a request past it gets 429 (default 256). */
  maxQueue?: number;
  /** Result cache file (default: the run's store); null turns the cache off. */
  cache?: string | null;
  scoring?: ScorerOptions;
  /** Per-job time limit (default: from the task's cap). */
  timeoutMs?: number;
  /** Lines for the operator (stderr). */
  log?: (message: string) => void;
}

/** The rewards service over one run directory. */
export class RewardService {
  private readonly active = new Set<Promise<unknown>>();
  private readonly baselines = new Map<string, Promise<boolean>>();
  private readonly taskIds = new Set(listTasks().map((t) => t.brief.id));
  private outstanding = 0;
  private jobSeconds = { sum: 0, n: 0 };
  readonly maxQueue: number;

  private constructor(
    readonly dir: string,
    readonly runId: string,
    readonly config: ServeConfig,
    private readonly store: Store,
    private readonly cache: ResultCache | null,
    private readonly scorer: Scorer,
    private readonly executor: Executor,
    private readonly evaluator: Evaluator,
    private readonly abort: AbortController,
    private readonly options: ServiceOptions,
  ) {
    this.maxQueue = options.maxQueue ?? 256;
  }

  /**
   * Opens the run in `dir` (a new one from `config`, or the stored one when `config` is null)
   * and starts finishing the requests a killed server left pending.
   */
  static open(dir: string, config: ServeConfig | null, executor: Executor, options: ServiceOptions = {}): RewardService {
    const log = options.log ?? (() => {});
    const store = new Store(dir);
    let cache: ResultCache | null = null;
    try {
      const existing = store.getRun();
      if (existing && config) throw new Error(`${dir} already holds a run; continue it with --resume`);
      const { runId, config: stored, secret, evalId } = openRun(store, dir, config, log);
      if ((stored as { mode?: string }).mode !== 'serve') throw new Error(`the run in ${dir} is a training run, not a serve run`);
      store.setRunStatus(runId, 'running');
      cache = options.cache === null ? null : new ResultCache(options.cache ?? join(dir, 'store.db'));
      const scorer = new Scorer(options.scoring);
      const abort = new AbortController();
      const evaluator = new Evaluator({ dir, runId, store, executor, scorer, cache, secret, evalId, signal: abort.signal, timeoutMs: options.timeoutMs });
      const service = new RewardService(dir, runId, stored as ServeConfig, store, cache, scorer, executor, evaluator, abort, options);
      service.resumePending();
      return service;
    } catch (err) {
      cache?.close();
      store.close();
      throw err;
    }
  }

  /** Jobs accepted and not yet finished. */
  get queued(): number {
    return this.outstanding;
  }

  /** The task rows (as `rrl tasks --json` prints them). */
  tasks(): z.infer<typeof TaskRow>[] {
    return listTasks().map(({ brief: b }) => ({ id: b.id, family: b.family, kind: b.kind, split: b.split, data: b.data }));
  }

  /** The prompt for a task (as `rrl prompt` prints it, or its compact form). */
  prompt(task: string, form: 'full' | 'compact' = 'full'): { messages: ChatMessage[]; example: Record<string, unknown> | null } {
    if (!this.taskIds.has(task)) throw new HttpError(404, `unknown task "${task.slice(0, 128)}"; see GET /v1/tasks`);
    const t = getPublicTask(task);
    if (form === 'full') return { messages: buildPrompt(t.brief), example: null };
    return { messages: buildPrompt(t.brief, { compact: true, example: t.baseline }), example: compactExample(t.baseline, t.brief) as Record<string, unknown> };
  }

  /** One job of the run, or 404. */
  job(id: number): z.infer<typeof JobResponse> {
    const r = this.store.job(this.runId, id);
    if (!r) throw new HttpError(404, `no job ${id} in this run`);
    return {
      job: r.id,
      request: r.kind === 'proposal' ? r.iteration : null,
      task: r.task,
      kind: r.kind as 'proposal' | 'baseline', // `rrl serve` runs store no rung jobs (successive halving is `rrl train`'s)
      status: r.status,
      failureKind: r.failureKind,
      score: r.normalized === null ? null : { normalized: r.normalized, stderr: r.stderr },
      reason: r.error,
      reward: r.reward,
      cached: r.cacheHit !== null,
      cost: { envSteps: r.envSteps, examples: r.examples, wallSeconds: r.wallSeconds },
    };
  }

  /** Seconds after which a refused request may find room: the queue's jobs over the executor's slots. */
  private retryAfter(): number {
    const perJob = this.jobSeconds.n ? this.jobSeconds.sum / this.jobSeconds.n : 5;
    return Math.max(1, Math.min(600, Math.ceil((this.outstanding / Math.max(1, this.executor.slots)) * perJob)));
  }

  /**
   * Turns completions for `task` into jobs, runs them and answers with their rewards once every
   * one is done. Throws HttpError 404 (unknown task), 429 (queue full), 503 (shutting down).
   */
  async rewards(task: string, completions: string[]): Promise<z.infer<typeof RewardsResponse>> {
    if (!this.taskIds.has(task)) throw new HttpError(404, `unknown task "${task.slice(0, 128)}"; see GET /v1/tasks`);
    if (this.abort.signal.aborted) throw new HttpError(503, 'the server is shutting down');
    const n = completions.length;
    if (this.outstanding + n > this.maxQueue) {
      throw new HttpError(429, `the job queue is full (${this.outstanding} of ${this.maxQueue} jobs waiting or running; this request has ${n})`, this.retryAfter());
    }
    const proposals = completions.map((text) => ({
      ...proposalFromCompletion(text),
      trace: { completion: text.length > MAX_REPLY_CHARS ? `${text.slice(0, 1024)}…[${text.length - 1024} more characters not kept]` : text },
    }));
    const id = this.store.addRequest(this.runId, task, proposals);
    return this.track(id, task, n);
  }

  /** Runs a recorded request to its answer, counting its jobs in the queue meanwhile. */
  private track(id: number, task: string, n: number): Promise<z.infer<typeof RewardsResponse>> {
    this.outstanding += n;
    const p = this.finish(id, task).finally(() => {
      this.outstanding -= n;
      this.active.delete(p);
    });
    this.active.add(p);
    return p;
  }

  /** Restarts the requests a killed server left pending (their finished jobs are kept). */
  private resumePending(): void {
    const pending = this.store.requests(this.runId, 'pending');
    if (pending.length) (this.options.log ?? (() => {}))(`resuming ${pending.length} unfinished request(s)`);
    for (const r of pending) this.track(r.id, r.task, r.completions).catch(() => {});
  }

  /** The task's baseline job, trained once on first use; false when interrupted. */
  private baseline(task: string): Promise<boolean> {
    let p = this.baselines.get(task);
    if (!p) {
      p = (async () => {
        const find = (): JobRow | undefined => this.store.jobs(this.runId, { kind: 'baseline' }).find((r) => r.task === task);
        if (!find()) {
          this.store.addJobs(this.runId, [{ iteration: 0, slot: 0, task, kind: 'baseline', agent: 'baseline', spec: getPublicTask(task).baseline, trace: null }]);
        }
        const row = find()!;
        return row.status !== 'pending' || (await this.runJob(row));
      })();
      this.baselines.set(task, p);
      p.then((ok) => ok || this.baselines.delete(task), () => this.baselines.delete(task));
    }
    return p;
  }

  /** Runs one job through the shared evaluation step, timing it for Retry-After. */
  private async runJob(row: JobRow): Promise<boolean> {
    const t0 = performance.now();
    const ok = await this.evaluator.run(row, getPublicTask(row.task).brief);
    const done = this.store.job(this.runId, row.id);
    if (ok && done?.cacheHit === null && done.status !== 'invalid') {
      this.jobSeconds.sum += (performance.now() - t0) / 1000;
      this.jobSeconds.n += 1;
    }
    return ok;
  }

  private async finish(id: number, task: string): Promise<z.infer<typeof RewardsResponse>> {
    const brief = getPublicTask(task).brief;
    const pending = this.store.jobs(this.runId, { iteration: id, kind: 'proposal' }).filter((r) => r.status === 'pending');
    const oks = await Promise.all([this.baseline(task), ...pending.map((r) => this.runJob(r))]);
    if (oks.some((ok) => !ok) || this.abort.signal.aborted) {
      throw new HttpError(503, `the server is shutting down; request ${id} is kept and finishes when the server is started again with --resume`);
    }
    const rows = this.store.jobs(this.runId, { iteration: id, kind: 'proposal' });
    const baseRow = this.store.jobs(this.runId, { kind: 'baseline' }).find((r) => r.task === task);
    const earlier = this.store.jobs(this.runId, { kind: 'proposal' }).filter((j) => j.task === task && j.iteration < id);
    const group = rewardGroup(rows, brief, baseRow, earlier, `r${id}/${task}`, this.config.reward);
    const response = {
      rewards: group.map((g) => g.reward),
      results: rows.map((r) => ({
        status: r.status as 'succeeded' | 'failed' | 'invalid',
        score: r.normalized === null ? null : { normalized: r.normalized, stderr: r.stderr },
        reason: r.status === 'succeeded' ? null : (r.error ?? r.failureKind ?? 'failed'),
        job: r.id,
      })),
    };
    this.store.finishRequest(
      id,
      group.map(({ jobId, reward, advantage, detail, groupId }) => ({ jobId, reward, advantage, detail, groupId })),
      response,
    );
    return response;
  }

  /** Stops: cancels running jobs (their requests stay pending for --resume) and closes the run. */
  async close(): Promise<void> {
    if (!this.abort.signal.aborted) {
      this.abort.abort();
      this.executor.cancelAll('the server is shutting down');
    }
    await Promise.allSettled([...this.active, ...this.baselines.values()]);
    this.store.setRunStatus(this.runId, 'interrupted');
    this.cache?.close();
    await this.scorer.close();
    this.store.close();
  }
}
