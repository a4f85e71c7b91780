/**
 * The harness behind `rrl serve`: completions in, outer rewards out, on the same step as
 * `rrl train` (outer/evaluate.ts). Each request is recorded with its jobs before any of them
 * runs; jobs spread over the executor (identical specs train once); rewards follow the run's
 * rule against the task's baseline job (trained once per task, on first use) and the best score
 * of earlier requests. A restarted service (`--resume`) finishes the requests it left pending,
 * keeping the jobs that had finished.
 */
import { createHash } from 'node:crypto';
import { EventEmitter, setMaxListeners } from 'node:events';
import { join } from 'node:path';
import type { z } from 'zod';
import type { Executor } from '../run/executor.js';
import type { ExecutorConfig } from '../run/config.js';
import { Store, type JobRow } from '../store/store.js';
import { ResultCache } from '../store/cache.js';
import { getPublicTask, listTasks } from '../tasks/briefs.js';
import { type FamilyDraw, registerFamilyTasks } from '../tasks/families/index.js';
import { buildPrompt, compactExample } from '../outer/agents/prompt.js';
import type { ChatMessage } from '../outer/agents/types.js';
import { examplePatch } from '../outer/agents/patch-prompt.js';
import { type SpaceDescription, describeSpace } from '../outer/agents/space.js';
import { isUnchanged } from '../outer/answer.js';
import { isJsonObject } from '../spec/patch.js';
import { grammarSchema, patchGrammarSchema } from '../spec/grammar-schema.js';
import type { RewardRuleName } from '../outer/reward.js';
import { Scorer, type ScorerOptions } from '../outer/scoring/scorer-pool.js';
import { Evaluator } from '../outer/evaluate.js';
import { openRun } from '../outer/open-run.js';
import { CONFIRM_SEEDS } from '../outer/noise.js';
import { baselineJobs, baselineRetries, bonusCandidates, confirmJobs, rewardGroup, taskStanding } from '../outer/settle.js';
import { CompletionBudget, INTAKE_DEFAULTS, parseProposals, traceOf } from './intake.js';
import { HttpError } from './http.js';
import { oneLine } from '../spec/bounds.js';
import { pinTaskFingerprints } from '../outer/fingerprints.js';
import { Episodes } from './episodes.js';
import type { JobResponse, JobsAccepted, RequestStatus, RewardsResponse, TaskRow } from './schemas.js';
import { type ConfirmationAnswer, ReportConfirmations, isReportConfirmation, proposalConfirms } from './confirm.js';

/** The answer to a request: its rewards and results. */
export type RewardsAnswer = z.infer<typeof RewardsResponse>;

/** What the service tells listeners: a job of a request finished, a request was settled, the service stopped. */
export interface ServiceEvents {
  job: [request: number, job: number];
  done: [request: number];
  /** The harness failed on the request for a reason of its own (a bug): it stays pending for --resume. */
  failed: [request: number, message: string];
  interrupted: [];
}

/** A serve run's configuration, stored with the run and reused on resume. */
export interface ServeConfig {
  mode: 'serve';
  seed: number;
  reward: { rule: RewardRuleName; lambda: number };
  /** Where jobs run (absent: local worker threads). */
  executor?: ExecutorConfig;
  /** Generated tasks served beside the built-in ones (`rrl serve --family`); registered again on resume. */
  families?: FamilyDraw[];
}

/** The forms of `GET /v1/tasks/{id}/prompt`. */
export type PromptForm = 'full' | 'compact' | 'patch';

/** The error the HTTP layer answers with its status (and, for 429, a Retry-After). */
export { HttpError };

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
  /**
   * Seconds within which a request identical to an earlier one (same task, same completions in
   * the same order) and without an idempotency key is answered with the earlier answer (default
   * 600): a client's retry after a timeout gets the rewards it missed, not new ones.
   */
  replayWindowSeconds?: number;
  /** Completion bytes accepted per window, invalid ones included; past it 429 with Retry-After (default 16 MiB). */
  completionBytes?: number;
  /** The sliding window of `completionBytes` in ms (default 10 000). */
  completionWindowMs?: number;
}

/** The digest a request is matched by: sha256 over its task and completions. */
export function requestDigest(task: string, completions: string[]): string {
  const h = createHash('sha256').update(`rrl-request/1\n${task}\n`);
  for (const c of completions) h.update(`${Buffer.byteLength(c)}\n`).update(c);
  return h.digest('hex');
}

/** The rewards service over one run directory. */
export class RewardService {
  private readonly active = new Set<Promise<unknown>>();
  private readonly baselines = new Map<string, Promise<boolean>>();
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
  private reports: ReportConfirmations | null = null;
  readonly maxQueue: number;
  /** The episodes of `/v1/episodes`: each submission a one-completion request of this service, the episode paid their mean. */
  readonly episodes: Episodes;

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
    private readonly secret: string,
  ) {
    this.maxQueue = options.maxQueue ?? 256;
    this.events.setMaxListeners(0); // one listener per open event stream
    this.episodes = new Episodes({
      store,
      runId,
      stopped: () => this.abort.signal.aborted,
      knownTask: (task) => void this.known(task),
      admit: (task, completions, key, episode) => this.admit(task, completions, key, episode),
      answerOf: (request) => this.answerOf(request),
      digest: requestDigest,
    });
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
      // Generated tasks of the run (`rrl serve --family`), new or resumed: registered before anything looks a task up.
      for (const d of (stored as ServeConfig).families ?? []) registerFamilyTasks(d.family, d.count, d.seed);
      pinTaskFingerprints(
        store,
        runId,
        listTasks().map((t) => t.brief.id),
      ); // a resumed run refuses tasks whose files changed
      store.setRunStatus(runId, 'running');
      cache = options.cache === null ? null : new ResultCache(options.cache ?? join(dir, 'store.db'));
      const scorer = new Scorer(options.scoring);
      const abort = new AbortController();
      // Every job in flight listens to it; a queue of thousands is normal. (Not 0, "unlimited": Node 20's
      // getMaxListeners throws on an AbortSignal set so, and the worker pool reads it.)
      setMaxListeners(1 << 20, abort.signal);
      const evaluator = new Evaluator({ dir, runId, store, executor, scorer, cache, secret, evalId, signal: abort.signal, timeoutMs: options.timeoutMs, log });
      const service = new RewardService(dir, runId, stored as ServeConfig, store, cache, scorer, executor, evaluator, abort, options, secret);
      service.resumePending();
      return service;
    } catch (err) {
      cache?.close();
      store.close();
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

  /** The prompt for a task (as `rrl prompt` prints it), its compact form, or its patch form (whose example is a patch). */
  prompt(task: string, form: PromptForm = 'full'): { messages: ChatMessage[]; example: Record<string, unknown> | null } {
    const t = this.known(task);
    if (form === 'full') return { messages: buildPrompt(t.brief), example: null };
    if (form === 'patch') return { messages: buildPrompt(t.brief, { patch: true, example: t.baseline }), example: examplePatch(t.brief, t.baseline) };
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

  /** What a stored job was written as: the patch (null for a full spec) and whether it is the baseline's job. */
  private answerFields(r: JobRow): { patch: Record<string, unknown> | null; unchanged: boolean } {
    const patch = isJsonObject(r.patch) ? r.patch : null;
    const t = getPublicTask(r.task);
    return { patch, unchanged: r.status !== 'invalid' && isUnchanged(r.spec, t.brief, t.baseline) };
  }

  /** One job of the run, or 404. */
  job(id: number): z.infer<typeof JobResponse> {
    const r = this.store.job(this.runId, id);
    if (!r) throw new HttpError(404, `no job ${id} in this run`);
    return {
      job: r.id,
      request: r.kind === 'proposal' || (r.kind === 'confirm' && !isReportConfirmation(r)) ? r.iteration : null,
      task: r.task,
      kind: r.kind as 'proposal' | 'baseline' | 'confirm', // `rrl serve` runs store no rung jobs (successive halving is `rrl train`'s)
      status: r.status,
      failureKind: r.failureKind,
      score: r.normalized === null ? null : { normalized: r.normalized, stderr: r.stderr },
      reason: r.error,
      reward: r.reward,
      unscorable: r.reward === null ? this.unscorableOf(r) : null,
      // Only a proposal's hit on an earlier proposal's result: a hit on a harness seed's would name that seed.
      cached: r.kind === 'proposal' && r.cacheHit !== null && r.cacheOrigin === 'proposal',
      ...this.answerFields(r),
      cost: { envSteps: r.envSteps, examples: r.examples, wallSeconds: r.wallSeconds },
    };
  }

  /** Why a proposal of a settled request has no reward (its answer's reason), or null. */
  private unscorableOf(r: JobRow): string | null {
    if (r.kind !== 'proposal') return null;
    const answer = this.store.request(this.runId, r.iteration)?.response as RewardsAnswer | null | undefined;
    const reason = answer?.results.find((x) => x.job === r.id)?.reason ?? null;
    return reason?.startsWith('unscorable:') ? reason : null;
  }

  /** Seconds after which a refused request may find room: the queue's jobs over the executor's slots. */
  private retryAfter(): number {
    const perJob = this.jobSeconds.n ? this.jobSeconds.sum / this.jobSeconds.n : 5;
    return Math.max(1, Math.min(600, Math.ceil((this.outstanding / Math.max(1, this.executor.slots)) * perJob)));
  }

  /**
   * Records completions for `task` as a request with its jobs and starts them; resolves with the
   * request's id once it is recorded, before any job runs. A request with the `idempotencyKey` of
   * an earlier one, or identical to one made within the replay window, is that request
   * (`replayed`), never a new one. Throws HttpError 404 (unknown task), 422 (a key reused for
   * another request), 429 (queue full, or too many completion bytes of late), 503 (shutting down).
   * The completions are parsed in a worker thread. A submission of an episode (`episode`) is
   * recorded as the episode's next submission with the request.
   */
  private async admit(
    task: string,
    completions: string[],
    idempotencyKey?: string,
    episode?: { id: number; key: string | null },
  ): Promise<{ id: number; replayed: boolean }> {
    if (!this.taskIds.has(task)) throw new HttpError(404, `unknown task "${task.slice(0, 128)}"; see GET /v1/tasks`);
    if (this.abort.signal.aborted) throw new HttpError(503, 'the server is shutting down');
    const digest = requestDigest(task, completions);
    // Looked up again after parsing: an identical request may have been recorded meanwhile.
    const earlier = (): number | null => {
      const e =
        idempotencyKey !== undefined
          ? this.store.requestByKey(this.runId, idempotencyKey)
          : this.store.requestByDigest(this.runId, digest, this.options.replayWindowSeconds ?? 600);
      if (!e) return null;
      if (e.digest !== digest)
        throw new HttpError(
          422,
          `idempotency key "${idempotencyKey?.slice(0, 64)}" was used for request ${e.id}, whose task or completions differ; use a new key for a new request`,
        );
      return e.id;
    };
    const n = completions.length;
    const room = (): void => {
      if (this.abort.signal.aborted) throw new HttpError(503, 'the server is shutting down');
      if (this.outstanding + n > this.maxQueue) {
        throw new HttpError(
          429,
          `the job queue is full (${this.outstanding} of ${this.maxQueue} jobs waiting or running; this request has ${n})`,
          this.retryAfter(),
        );
      }
    };
    const before = earlier();
    if (before !== null) return { id: before, replayed: true };
    room();
    this.budget ??= new CompletionBudget(
      this.options.completionBytes ?? INTAKE_DEFAULTS.completionBytes,
      this.options.completionWindowMs ?? INTAKE_DEFAULTS.windowMs,
    );
    const admitted = this.budget.admit(completions);
    if (!admitted.ok) throw new HttpError(429, admitted.message, admitted.retryAfterSeconds);
    const { brief, baseline } = getPublicTask(task);
    const parsed = await parseProposals(completions, brief, baseline);
    const meanwhile = earlier();
    if (meanwhile !== null) return { id: meanwhile, replayed: true };
    room(); // again: the queue and the service may have changed while the worker parsed
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
    const jobs = this.store.jobs(this.runId, { iteration: id, kind: 'proposal' });
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
      (this.options.log ?? (() => {}))(`${message}; the request stays pending and is tried again on --resume`);
      this.events.emit('failed', id, message);
    });
    this.active.add(p);
    this.answers.set(id, p);
    return p;
  }

  /** Restarts the requests a killed server left pending (their finished jobs are kept). */
  private resumePending(): void {
    const pending = this.store.requests(this.runId, 'pending');
    if (pending.length) (this.options.log ?? (() => {}))(`resuming ${pending.length} unfinished request(s)`);
    for (const r of pending) this.track(r.id, r.task, r.completions);
  }

  /**
   * The task's baseline jobs (its baseline spec on the harness's seeds), trained once on first
   * use, with seeds that failed for a reason of the machine tried again; false when interrupted.
   * When no seed scored, the next request tries again until every seed has used its attempts.
   */
  private baseline(task: string): Promise<boolean> {
    let p = this.baselines.get(task);
    if (!p) {
      p = (async () => {
        const rows = (): JobRow[] => this.store.jobs(this.runId, { kind: 'baseline' }).filter((r) => r.task === task);
        if (!rows().length) this.store.addJobs(this.runId, baselineJobs(task, getPublicTask(task).baseline, this.secret));
        for (;;) {
          const oks = await Promise.all(
            rows()
              .filter((r) => r.status === 'pending')
              .map((r) => this.runJob(r)),
          );
          if (oks.some((ok) => !ok)) return false;
          const retries = baselineRetries(rows());
          if (!retries.length) return true;
          (this.options.log ?? (() => {}))(`${task}: retrying ${retries.length} baseline job(s) that failed for a reason of the machine`);
          this.store.addJobs(this.runId, retries);
        }
      })();
      this.baselines.set(task, p);
      p.then(
        (ok) => ok || this.baselines.delete(task),
        () => this.baselines.delete(task),
      );
    }
    return p;
  }

  /**
   * Runs one job through the shared evaluation step (which tries a job the harness failed on
   * again, outer/evaluate.ts), timing it for Retry-After; a finished proposal is announced to
   * the request's event streams.
   */
  private async runJob(row: JobRow): Promise<boolean> {
    const t0 = performance.now();
    const ok = await this.evaluator.run(row, getPublicTask(row.task).brief);
    const done = this.store.job(this.runId, row.id);
    if (ok && done?.cacheHit === null && done.status !== 'invalid') {
      this.jobSeconds.sum += (performance.now() - t0) / 1000;
      this.jobSeconds.n += 1;
    }
    if (ok && row.kind === 'proposal') this.events.emit('job', row.iteration, row.id);
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
    if (this.abort.signal.aborted) throw new HttpError(503, 'the server is shutting down');
    const n = CONFIRM_SEEDS;
    if (this.outstanding + n > this.maxQueue) {
      throw new HttpError(
        429,
        `the job queue is full (${this.outstanding} of ${this.maxQueue} jobs waiting or running; a confirmation has ${n})`,
        this.retryAfter(),
      );
    }
    this.reports ??= new ReportConfirmations({
      store: this.store,
      runId: this.runId,
      secret: this.secret,
      baseline: (t) => this.baseline(t),
      runJob: (r) => this.runJob(r),
      stopped: () => this.abort.signal.aborted,
    });
    this.outstanding += n;
    const p = this.reports.confirm(task, brief, baseline, completion).finally(() => {
      this.outstanding -= n;
      this.active.delete(p);
    });
    this.active.add(p);
    return p;
  }

  /** The task's standing for request `id`: the best confirmed score of requests answered before it settles. */
  private standing(task: string, id: number): ReturnType<typeof taskStanding> {
    const answered = new Set(this.store.requests(this.runId, 'done').map((r) => r.id));
    const earlier = this.store.jobs(this.runId, { kind: 'proposal' }).filter((j) => j.task === task && j.iteration !== id && answered.has(j.iteration));
    const baselines = this.store.jobs(this.runId, { kind: 'baseline' }).filter((r) => r.task === task);
    return taskStanding(baselines, earlier, this.proposalConfirms());
  }

  private async finish(id: number, task: string): Promise<RewardsAnswer> {
    const brief = getPublicTask(task).brief;
    const interrupted = (): HttpError =>
      new HttpError(503, `the server is shutting down; request ${id} is kept and finishes when the server is started again with --resume`);
    const pending = this.store.jobs(this.runId, { iteration: id, kind: 'proposal' }).filter((r) => r.status === 'pending');
    const oks = await Promise.all([this.baseline(task), ...pending.map((r) => this.runJob(r))]);
    if (oks.some((ok) => !ok) || this.abort.signal.aborted) throw interrupted();
    // Candidates for the bonus are trained again on the harness's seeds before anything is paid.
    const candidates = bonusCandidates(this.store.jobs(this.runId, { iteration: id, kind: 'proposal' }), this.standing(task, id), this.proposalConfirms());
    const added = confirmJobs(candidates, this.proposalConfirms(), this.secret);
    if (added.length) this.store.addJobs(this.runId, added);
    const confirming = this.store.jobs(this.runId, { iteration: id, kind: 'confirm' }).filter((r) => r.status === 'pending');
    if ((await Promise.all(confirming.map((r) => this.runJob(r)))).some((ok) => !ok) || this.abort.signal.aborted) throw interrupted();
    // From here to the stored answer nothing awaits: requests settle one at a time, so two of them
    // cannot both take one bonus (the later one is compared with the earlier one's confirmed score).
    const rows = this.store.jobs(this.runId, { iteration: id, kind: 'proposal' });
    const group = rewardGroup(rows, brief, this.standing(task, id), this.proposalConfirms(), `r${id}/${task}`, this.config.reward);
    // A job the harness could not score is neither paid nor charged: reward null, no advantage, no rewards row.
    const unscorable = group.map((g) => g.unscorable);
    const paid = group.filter((g) => g.unscorable === null);
    const response: RewardsAnswer = {
      request: id,
      replayed: false,
      rewards: group.map((g, i) => (unscorable[i] === null ? g.reward : null)),
      results: rows.map((r, i) => ({
        status: r.status as 'succeeded' | 'failed' | 'invalid',
        score:
          r.normalized === null ? null : { normalized: r.normalized, stderr: r.stderr, uncertainty: (group[i].detail.uncertainty as number | null) ?? null },
        reason: unscorable[i] ?? (r.status === 'succeeded' ? null : (r.error ?? r.failureKind ?? 'failed')),
        job: r.id,
        ...this.answerFields(r),
      })),
    };
    this.store.finishRequest(
      id,
      paid.map(({ jobId, reward, advantage, detail, groupId }) => ({ jobId, reward, advantage, detail, groupId })),
      response,
    );
    this.events.emit('done', id);
    return response;
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
    await Promise.allSettled([...this.active, ...this.baselines.values()]);
    this.store.setRunStatus(this.runId, 'interrupted');
    this.cache?.close();
    await this.scorer.close();
    this.store.close();
  }
}
