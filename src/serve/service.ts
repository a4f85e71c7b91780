/**
 * The harness behind `rrl serve`: completions in, outer rewards out, on the same step as
 * `rrl train` (outer/pipeline.ts), settled through the same round (outer/round.ts). Each request
 * is recorded with its jobs before any of them runs; jobs spread over the executor (identical
 * specs train once); rewards follow the run's rule against the task's baseline jobs (trained once
 * per task, on first use) and the best confirmed score of requests answered before it. A
 * restarted service (`--resume`) finishes the requests it left pending, keeping the jobs that
 * had finished.
 */
import { EventEmitter } from 'node:events';
import type { z } from 'zod';
import type { Executor } from '../run/executor.js';
import type { Store, JobRow } from '../store/store.js';
import type { ResultCache } from '../store/cache.js';
import { getPublicTask, listTasks } from '../tasks/briefs.js';
import { buildPrompt, compactExample } from '../outer/agents/prompt.js';
import type { ChatMessage } from '../outer/agents/types.js';
import { examplePatch } from '../outer/agents/patch-prompt.js';
import { type SpaceDescription, describeSpace } from '../outer/agents/space.js';
import { grammarSchema, patchGrammarSchema } from '../spec/grammar-schema.js';
import type { Scorer } from '../outer/scoring/scorer-pool.js';
import type { JobPipeline } from '../outer/pipeline.js';
import { CONFIRM_SEEDS } from '../outer/noise.js';
import { type PreparedRound, type RoundGroup, RoundInterrupted, type RoundOptions, Rounds } from '../outer/round.js';
import { CompletionBudget, INTAKE_DEFAULTS, parseProposals, requestDigest, traceOf } from './intake.js';
import { HttpError } from './http.js';
import { oneLine } from '../spec/bounds.js';
import { Episodes } from './episodes.js';
import type { JobResponse, JobsAccepted, RequestStatus, TaskRow } from './schemas.js';
import type { PromptForm, ServeConfig, ServiceEvents, ServiceOptions } from './service-types.js';
import { type ServiceParts, openServiceRun } from './open-service.js';
import { type ConfirmationAnswer, ReportConfirmations, proposalConfirms } from './confirm.js';
import { type RewardsAnswer, jobView, requestAnswer } from './answers.js';

export type { RewardsAnswer, PromptForm, ServeConfig, ServiceEvents, ServiceOptions };
export { requestDigest };

/** The error the HTTP layer answers with its status (and, for 429, a Retry-After). */
export { HttpError };

/** The rewards service over one run directory. */
export class RewardService {
  private readonly active = new Set<Promise<unknown>>();
  /** Requests being answered, by id: a replayed request waits for the same answer. */
  private readonly answers = new Map<number, Promise<RewardsAnswer>>();
  /** Job finished, request settled, service stopped: what the event streams of `GET /v1/requests/{id}/events` follow. */
  readonly events = new EventEmitter<ServiceEvents>();
  /** Requests the harness failed on in this process (its own error), with the one-line reason. */
  private readonly failures = new Map<number, string>();
  private readonly taskIds = new Set(listTasks().map((t) => t.brief.id));
  private outstanding = 0;
  private jobSeconds = { sum: 0, n: 0 };
  private budget: CompletionBudget | null = null;
  private readonly reports: ReportConfirmations;
  readonly maxQueue: number;
  /** The episodes of `/v1/episodes`: each submission a one-completion request of this service, the episode paid their mean. */
  readonly episodes: Episodes;
  /** The run's directory. */
  readonly dir: string;
  /** The run's id in its store. */
  readonly runId: string;
  /** The run's configuration, as stored. */
  readonly config: ServeConfig;
  private readonly store: Store;
  private readonly cache: ResultCache | null;
  private readonly scorer: Scorer;
  private readonly executor: Executor;
  private readonly pipeline: JobPipeline;
  private readonly abort: AbortController;
  private readonly options: ServiceOptions;
  /** Every request is played as a round of one group, the way `rrl train` plays its iterations. */
  private readonly rounds: Rounds;

  private constructor(parts: ServiceParts) {
    const { dir, runId, config, store, cache, scorer, executor, pipeline, abort, options, secret } = parts;
    this.dir = dir;
    this.runId = runId;
    this.config = config;
    this.store = store;
    this.cache = cache;
    this.scorer = scorer;
    this.executor = executor;
    this.pipeline = pipeline;
    this.abort = abort;
    this.options = options;
    this.rounds = new Rounds({
      store,
      runId,
      secret,
      baselineSpec: (task) => getPublicTask(task).baseline,
      runRow: (row) => this.runRow(row),
      stopped: () => this.abort.signal.aborted,
    });
    this.reports = new ReportConfirmations({
      store,
      runId,
      secret,
      rounds: this.rounds,
      stopped: () => this.abort.signal.aborted,
      note: (message) => this.log(message),
    });
    this.maxQueue = options.maxQueue ?? 256;
    this.events.setMaxListeners(0); // one listener per open event stream
    this.episodes = new Episodes({
      store,
      runId,
      stopped: () => this.abort.signal.aborted,
      knownTask: (task) => void this.known(task),
      admit: (task, completions, key, episode, base) => this.admit(task, completions, key, episode, base),
      answerOf: (request) => this.answerOf(request),
      digest: requestDigest,
    });
  }

  /**
   * Opens the run in `dir` (a new one from `config`, or the stored one when `config` is null)
   * and starts finishing the requests a killed server left pending.
   */
  static open(dir: string, config: ServeConfig | null, executor: Executor, options: ServiceOptions = {}): RewardService {
    const parts = openServiceRun(dir, config, executor, options);
    try {
      const service = new RewardService(parts);
      service.resumePending();
      return service;
    } catch (err) {
      parts.cache?.close();
      parts.store.close();
      throw err;
    }
  }

  /** True once the service stops taking work (shutting down). */
  get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  /** Jobs accepted and not yet finished. */
  get queued(): number {
    return this.outstanding;
  }

  /** The task rows (as `rrl tasks --json` prints them). */
  tasks(): z.infer<typeof TaskRow>[] {
    return listTasks().map(({ brief: b }) => ({ id: b.id, family: b.family, kind: b.kind, split: b.split, data: b.data }));
  }

  /** The public task `id`, or 404. */
  private known(task: string): ReturnType<typeof getPublicTask> {
    if (!this.taskIds.has(task)) throw new HttpError(404, `unknown task "${task.slice(0, 128)}"; see GET /v1/tasks`);
    return getPublicTask(task);
  }

  /**
   * The prompt for a task (as `rrl prompt` prints it), its compact form, or its patch form (whose
   * example is a patch; `docChars`, its documentation budget).
   */
  prompt(task: string, form: PromptForm = 'full', docChars?: number): { messages: ChatMessage[]; example: Record<string, unknown> | null } {
    const t = this.known(task);
    if (form === 'full') return { messages: buildPrompt(t.brief), example: null };
    if (form === 'patch') return { messages: buildPrompt(t.brief, { patch: true, example: t.baseline, docChars }), example: examplePatch(t.brief, t.baseline) };
    return { messages: buildPrompt(t.brief, { compact: true, example: t.baseline }), example: compactExample(t.baseline, t.brief) as Record<string, unknown> };
  }

  /** The answer's JSON Schema for guided decoding: the full spec narrowed to the task, or a merge patch over its baseline. */
  schema(task: string, form: 'spec' | 'patch' = 'spec'): Record<string, unknown> {
    const { brief, baseline } = this.known(task);
    return form === 'patch' ? patchGrammarSchema(brief, baseline) : grammarSchema(brief);
  }

  /** The task's design space as the embedded agents and the optimisers see it (as `rrl space --task` prints it). */
  space(task: string): SpaceDescription {
    const { brief, baseline } = this.known(task);
    return describeSpace(brief, baseline);
  }

  /** One job of the run, or 404. */
  job(id: number): z.infer<typeof JobResponse> {
    const r = this.store.job(this.runId, id);
    if (!r) throw new HttpError(404, `no job ${id} in this run`);
    return jobView(this.store, this.runId, r);
  }

  /** Seconds after which a refused request may find room: the queue's jobs over the executor's slots. */
  private retryAfter(): number {
    const perJob = this.jobSeconds.n ? this.jobSeconds.sum / this.jobSeconds.n : 5;
    return Math.max(1, Math.min(600, Math.ceil((this.outstanding / Math.max(1, this.executor.slots)) * perJob)));
  }

  /** The earlier request this one is (by its idempotency key, else by its digest within the replay window), or null; 422 for a key reused. */
  private replayOf(digest: string, idempotencyKey: string | undefined): number | null {
    const e =
      idempotencyKey !== undefined
        ? this.store.requestByKey(this.runId, idempotencyKey)
        : this.store.requestByDigest(this.runId, digest, this.options.replayWindowSeconds ?? 600);
    if (!e) return null;
    if (e.digest !== digest) {
      const key = idempotencyKey?.slice(0, 64);
      throw new HttpError(422, `idempotency key "${key}" was used for request ${e.id}, whose task or completions differ; use a new key for a new request`);
    }
    return e.id;
  }

  /** Throws 503 when shutting down, 429 when `n` more jobs (of `what`) would overfill the queue. */
  private roomFor(n: number, what: string): void {
    if (this.abort.signal.aborted) throw new HttpError(503, 'the server is shutting down');
    if (this.outstanding + n <= this.maxQueue) return;
    const message = `the job queue is full (${this.outstanding} of ${this.maxQueue} jobs waiting or running; ${what} has ${n})`;
    throw new HttpError(429, message, this.retryAfter());
  }

  /**
   * Records completions for `task` as a request with its jobs and starts them; resolves with the
   * request's id once it is recorded, before any job runs. A request with the `idempotencyKey` of
   * an earlier one, or identical to one made within the replay window, is that request
   * (`replayed`), never a new one. Throws HttpError 404 (unknown task), 422 (a key reused for
   * another request), 429 (queue full, or too many completion bytes of late), 503 (shutting down).
   * The completions are parsed in a worker thread. A submission of an episode (`episode`) is
   * recorded as the episode's next submission with the request; its patch applies to `base`
   * (the episode's last valid job) rather than the baseline.
   */
  private async admit(
    task: string,
    completions: string[],
    idempotencyKey?: string,
    episode?: { id: number; key: string | null },
    base?: unknown,
  ): Promise<{ id: number; replayed: boolean }> {
    if (!this.taskIds.has(task)) throw new HttpError(404, `unknown task "${task.slice(0, 128)}"; see GET /v1/tasks`);
    if (this.abort.signal.aborted) throw new HttpError(503, 'the server is shutting down');
    const digest = requestDigest(task, completions);
    const n = completions.length;
    const before = this.replayOf(digest, idempotencyKey);
    if (before !== null) return { id: before, replayed: true };
    this.roomFor(n, 'this request');
    this.budget ??= new CompletionBudget(
      this.options.completionBytes ?? INTAKE_DEFAULTS.completionBytes,
      this.options.completionWindowMs ?? INTAKE_DEFAULTS.windowMs,
    );
    const admitted = this.budget.admit(completions);
    if (!admitted.ok) throw new HttpError(429, admitted.message, admitted.retryAfterSeconds);
    const { brief, baseline } = getPublicTask(task);
    const parsed = await parseProposals(completions, brief, baseline, undefined, base);
    // Again: an identical request may have been recorded, and the queue may have filled, while the worker parsed.
    const meanwhile = this.replayOf(digest, idempotencyKey);
    if (meanwhile !== null) return { id: meanwhile, replayed: true };
    this.roomFor(n, 'this request');
    const proposals = parsed.map((p, i) => ({ ...p, trace: traceOf(completions[i], p) }));
    const id = this.store.addRequest(this.runId, task, proposals, { key: idempotencyKey ?? null, digest }, episode);
    this.track(id, task, n);
    return { id, replayed: false };
  }

  /**
   * Turns completions for `task` into jobs, runs them and answers with their rewards once every
   * one is done (`POST /v1/rewards`); a replayed request gets the earlier request's answer,
   * waiting for it if need be. Throws as `submit`, and 503 when the server stops meanwhile.
   */
  async rewards(task: string, completions: string[], idempotencyKey?: string): Promise<RewardsAnswer> {
    const { id, replayed } = await this.admit(task, completions, idempotencyKey);
    const answer = await this.answerOf(id);
    return replayed ? { ...answer, replayed: true } : answer;
  }

  /**
   * Records completions for `task` as jobs and answers at once with their ids (`POST /v1/jobs`);
   * the rewards come with the request (`request`, `events`). Idempotent like `rewards`.
   */
  async submit(task: string, completions: string[], idempotencyKey?: string): Promise<z.infer<typeof JobsAccepted>> {
    const { id, replayed } = await this.admit(task, completions, idempotencyKey);
    const { status, jobs } = this.request(id);
    return { request: id, replayed, status, jobs, links: { request: `/v1/requests/${id}`, events: `/v1/requests/${id}/events` } };
  }

  /** One request: its status, its jobs and, once it is done, its answer; 404 when there is none. */
  request(id: number): z.infer<typeof RequestStatus> {
    const r = this.store.request(this.runId, id);
    if (!r) throw new HttpError(404, `no request ${id} in this run`);
    const jobs = this.store.jobs(this.runId, { round: id, kind: 'proposal' });
    const done = r.status === 'done' && r.response !== null;
    return {
      request: id,
      task: r.task,
      status: done ? 'done' : 'pending',
      jobs: jobs.map((j) => j.id),
      finished: jobs.filter((j) => j.status !== 'pending').length,
      answer: done ? (r.response as RewardsAnswer) : null,
    };
  }

  /** Why the harness failed on request `id` in this process (null: it did not). */
  failure(id: number): string | null {
    return this.failures.get(id) ?? null;
  }

  /** The answer of a recorded request: stored when it is done, else the one being computed (or resumed). */
  private answerOf(id: number): Promise<RewardsAnswer> {
    const r = this.store.request(this.runId, id);
    if (!r) return Promise.reject(new HttpError(404, `no request ${id} in this run`));
    if (r.status === 'done' && r.response) return Promise.resolve(r.response as RewardsAnswer);
    return this.answers.get(id) ?? this.track(id, r.task, r.completions);
  }

  /** Runs a recorded request to its answer, counting its jobs in the queue meanwhile. */
  private track(id: number, task: string, n: number): Promise<RewardsAnswer> {
    this.outstanding += n;
    const p = this.finish(id, task).finally(() => {
      this.outstanding -= n;
      this.active.delete(p);
      this.answers.delete(id);
    });
    // A request nobody waits for (POST /v1/jobs) stays pending when interrupted; its callers see the rejection.
    // Any other error is the harness's own: said to the operator and to the request's event streams.
    p.catch((err: unknown) => {
      if (err instanceof HttpError || this.abort.signal.aborted) return;
      const message = oneLine(`the harness failed on request ${id}: ${(err as Error)?.message ?? String(err)}`, 500);
      this.failures.set(id, message);
      this.log(`${message}; the request stays pending and is tried again on --resume`);
      this.events.emit('failed', id, message);
    });
    this.active.add(p);
    this.answers.set(id, p);
    return p;
  }

  /** Restarts the requests a killed server left pending (their finished jobs are kept). */
  private resumePending(): void {
    const pending = this.store.requests(this.runId, 'pending');
    if (pending.length) this.log(`resuming ${pending.length} unfinished request(s)`);
    for (const r of pending) this.track(r.id, r.task, r.completions);
  }

  /**
   * Runs one job through the shared evaluation step (which tries a job the harness failed on
   * again, outer/pipeline.ts), timing it for Retry-After; a finished proposal is announced to
   * the request's event streams.
   */
  private async runRow(row: JobRow): Promise<boolean> {
    const t0 = performance.now();
    const ok = await this.pipeline.run(row, getPublicTask(row.task).brief);
    const done = this.store.job(this.runId, row.id);
    if (ok && done?.cacheHit === null && done.status !== 'invalid') {
      this.jobSeconds.sum += (performance.now() - t0) / 1000;
      this.jobSeconds.n += 1;
    }
    if (ok && row.kind === 'proposal') this.events.emit('job', row.round, row.id);
    return ok;
  }

  /** The run's confirmation jobs of proposals (a report's confirmations are never a proposal's reward, serve/confirm.ts). */
  private proposalConfirms(): JobRow[] {
    return proposalConfirms(this.store.jobs(this.runId, { kind: 'confirm' }));
  }

  /**
   * `POST /v1/tasks/{id}/confirmations`: the spec of `completion` trained on the task's
   * confirmation seeds, answered once done (serve/confirm.ts); its jobs count in the queue.
   * Throws 404 (unknown task), 429 (queue full), 503 (shutting down).
   */
  async confirm(task: string, completion: string): Promise<ConfirmationAnswer> {
    const { brief, baseline } = this.known(task);
    const n = CONFIRM_SEEDS;
    this.roomFor(n, 'a confirmation');
    this.outstanding += n;
    const p = this.reports.confirm(task, brief, baseline, completion).finally(() => {
      this.outstanding -= n;
      this.active.delete(p);
    });
    this.active.add(p);
    return p;
  }

  /**
   * Plays request `id` as a round of one group (outer/round.ts: baselines → run → confirm →
   * settle) and stores its answer. The standing is the task's baseline and the confirmed scores
   * of requests answered before this one settles.
   */
  private async finish(id: number, task: string): Promise<RewardsAnswer> {
    const group: RoundGroup = {
      brief: getPublicTask(task).brief,
      rows: this.store.jobs(this.runId, { round: id, kind: 'proposal' }),
      groupId: `r${id}/${task}`,
    };
    let round: PreparedRound;
    try {
      round = await this.rounds.prepare([group], this.roundOptions(id, task));
    } catch (err) {
      if (!(err instanceof RoundInterrupted)) throw err;
      throw new HttpError(503, `the server is shutting down; request ${id} is kept and finishes when the server is started again with --resume`);
    }
    // From here to the stored answer nothing awaits: requests settle one at a time, so two of them
    // cannot both take one bonus (the later one is compared with the earlier one's confirmed score).
    const [{ rewards }] = round.settle();
    const response = requestAnswer(id, rewards);
    const paid = rewards.filter((g) => g.unscorable === null);
    this.store.finishRequest(
      id,
      paid.map(({ jobId, reward, advantage, detail, groupId }) => ({ jobId, reward, advantage, detail, groupId })),
      response,
    );
    this.events.emit('done', id);
    return response;
  }

  /** How a request's round is played: against requests answered before it, on proposals' confirmations only, under the run's rule. */
  private roundOptions(id: number, task: string): RoundOptions {
    return {
      earlier: (t) => {
        const answered = new Set(this.store.requests(this.runId, 'done').map((r) => r.id));
        return this.store.jobs(this.runId, { kind: 'proposal' }).filter((j) => j.task === t && j.round !== id && answered.has(j.round));
      },
      confirmRows: () => this.proposalConfirms(),
      reward: this.config.reward,
      note: (message) => this.log(`${task}: ${message}`),
    };
  }

  /** A line for the operator. */
  private log(message: string): void {
    (this.options.log ?? (() => {}))(message);
  }

  /** Stops taking work: cancels running jobs (their requests stay pending for --resume) and tells the event streams. */
  stop(): void {
    if (this.abort.signal.aborted) return;
    this.abort.abort();
    this.executor.cancelAll('the server is shutting down');
    this.events.emit('interrupted');
  }

  /** Stops: cancels running jobs (their requests stay pending for --resume) and closes the run. */
  async close(): Promise<void> {
    this.stop();
    await Promise.allSettled([...this.active]);
    this.store.setRunStatus(this.runId, 'interrupted');
    this.cache?.close();
    await this.scorer.close();
    this.store.close();
  }
}
