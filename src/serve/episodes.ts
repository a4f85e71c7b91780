/**
 * The episodes of `rrl serve`: an episode is up to `maxSubmissions` jobs of one task by one agent
 * rollout, in rounds: each submission's patch applies to the episode's last valid job (the task's
 * baseline before any), so a submission waits for the ones before it. Each submission is settled as a one-completion request on the service's own path
 * (RewardService's admit and finish: the task's baseline, confirmation, the run's reward rule), so
 * a submission is paid exactly what `/v1/rewards` pays for its completion. The episode is paid the
 * mean of those rewards when it closes (`episodeReward`, the one place of that rule). Between
 * submissions the agent sees only what a practitioner sees of a job it ran (`Feedback`): its
 * status, reason, cost and its own figure on its training pool — never a hidden score, its
 * standard error or uncertainty, or a reward, so no rule of the trainer's can select on the
 * hidden evaluation. The feedback's `next` is the next round's user turn, written from those fields.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import type { EpisodeRow, JobRow, Store, SubmissionRow } from '../store/store.js';
import type { TaskBrief } from '../spec/brief.js';
import { ARTIFACT_FILES } from '../spec/artifact.js';
import { getPublicTask } from '../tasks/briefs.js';
import { roundTurn } from '../outer/agents/patch-prompt.js';
import { compactExample } from '../outer/agents/prompt.js';
import { HttpError } from './http.js';
import type { EpisodeClosed, EpisodeCreated, EpisodeStatus, Feedback, RewardsResponse } from './schemas.js';

/** The reason of an episode closed without a submission (paid −1, as prose sent as a completion is). */
export const NO_SUBMISSION = 'no job submitted';

/** A submission's feedback as stored: all but `submissionsLeft`, which is the episode's at the time of a reply. */
type StoredFeedback = Omit<z.infer<typeof Feedback>, 'submissionsLeft'>;
type Answer = z.infer<typeof RewardsResponse>;
type Closed = z.infer<typeof EpisodeClosed>;

/**
 * An episode's reward from its submissions' rewards (each the harness's own for a one-completion
 * request: invalid or failed −1): their mean, a null (the harness could not score that job) left
 * out; null when every submission is null (no advantage); −1 with "no job submitted" when there
 * is none.
 */
export function episodeReward(rewards: (number | null)[]): { reward: number | null; reason: string | null } {
  if (!rewards.length) return { reward: -1, reason: NO_SUBMISSION };
  const paid = rewards.filter((r): r is number => r !== null);
  if (!paid.length) return { reward: null, reason: `unscorable: the harness could not score any of the ${rewards.length} submission(s)` };
  return { reward: paid.reduce((a, b) => a + b, 0) / paid.length, reason: null };
}

/** Largest status file read for a job's own figure: the harness writes a few hundred bytes. */
const MAX_STATUS_BYTES = 64 << 10;

/**
 * The job's own figure on its training pool, as its artifact records it (`trainReturn` in the
 * status file the engine writes): for a control task the mean return of its last (up to) 20
 * training episodes, for a supervised one its metric on its own validation split. Null when the
 * job left none (invalid, failed before the end, or the file is gone).
 */
export function validationOf(job: Pick<JobRow, 'artifactDir'>, brief: TaskBrief): { name: string; value: number } | null {
  if (!job.artifactDir) return null;
  try {
    const path = join(job.artifactDir, ARTIFACT_FILES.status);
    if (statSync(path).size > MAX_STATUS_BYTES) return null;
    const value = (JSON.parse(readFileSync(path, 'utf8')) as { trainReturn?: unknown }).trainReturn;
    if (typeof value !== 'number' || !Number.isFinite(value)) return null;
    const name = brief.kind === 'control' ? 'train/episodic_return' : brief.supervised?.target.type === 'classification' ? 'val/accuracy' : 'val/rmse';
    return { name, value };
  } catch {
    return null;
  }
}

/** What the episodes need of the service: its store, its request path and its state. */
export interface EpisodePort {
  store: Store;
  runId: string;
  /** True once the service stops taking work. */
  stopped(): boolean;
  /** Throws 404 for a task the service does not serve. */
  knownTask(task: string): void;
  /**
   * Records one completion as a request (RewardService.admit), as the episode's next submission in
   * the same transaction; its patch applies to `base`, the episode's last valid job.
   */
  admit(
    task: string,
    completions: string[],
    key: string,
    episode: { id: number; key: string | null },
    base: unknown,
  ): Promise<{ id: number; replayed: boolean }>;
  /** The answer of a recorded request, once it is settled (RewardService.answerOf). */
  answerOf(request: number): Promise<Answer>;
  /** The digest a request is matched by (service.ts requestDigest). */
  digest(task: string, completions: string[]): string;
}

/** A submission being admitted or settled in this process. */
interface Flight {
  digest: string;
  /** False until its request is recorded: it holds one of the episode's submissions meanwhile. */
  recorded: boolean;
  done: Promise<StoredFeedback>;
}

/** The episode resource of `rrl serve` (`/v1/episodes`). */
export class Episodes {
  /** Submissions in flight, by episode and by the client's key (a random one without): a retry joins its flight, a close waits for them. */
  private readonly flights = new Map<number, Map<string, Flight>>();
  /** Closes in progress: a second close gets the same answer, and no submission is taken meanwhile. */
  private readonly closing = new Map<number, Promise<Closed>>();

  constructor(private readonly port: EpisodePort) {}

  /**
   * Opens an episode (`POST /v1/episodes`). The same idempotency key is the same episode; with
   * another task or maxSubmissions it is 422.
   */
  create(task: string, maxSubmissions: number, key?: string): z.infer<typeof EpisodeCreated> {
    this.port.knownTask(task);
    if (this.port.stopped()) throw new HttpError(503, 'the server is shutting down');
    const { store, runId } = this.port;
    const earlier = key === undefined ? undefined : store.episodeByKey(runId, key);
    if (earlier && (earlier.task !== task || earlier.maxSubmissions !== maxSubmissions)) {
      throw new HttpError(422, `idempotency key "${key?.slice(0, 64)}" was used for episode ${earlier.id}, whose task or maxSubmissions differ; use a new key`);
    }
    const ep = earlier ?? store.episode(runId, store.addEpisode(runId, task, maxSubmissions, key ?? null))!;
    return { episode: ep.id, task: ep.task, maxSubmissions: ep.maxSubmissions, submitted: store.episodeSubmissions(ep.id).length, status: ep.status };
  }

  /** One episode (`GET /v1/episodes/{id}`): its settled submissions' feedback and, once closed, its reward. */
  get(id: number): z.infer<typeof EpisodeStatus> {
    const ep = this.episode(id);
    const subs = this.port.store.episodeSubmissions(id);
    const left = this.left(ep, subs.length);
    const settled = subs.map((s) => this.settledNow(ep, s)).filter((f): f is StoredFeedback => f !== null);
    const closed = ep.status === 'closed';
    return {
      episode: ep.id,
      task: ep.task,
      maxSubmissions: ep.maxSubmissions,
      submitted: subs.length,
      status: ep.status,
      submissions: settled.map((f) => ({ ...f, submissionsLeft: left })),
      reward: closed ? ep.reward : null,
      reason: closed ? ep.reason : null,
    };
  }

  /**
   * One job of an episode (`POST /v1/episodes/{id}/submissions`): recorded as a one-completion
   * request, answered with its feedback once it is settled. A retry with the same key is the same
   * submission (422 with another completion); 409 when the episode is closed or has no
   * submissions left; the request's own 429 and 503.
   */
  async submit(id: number, completion: string, key?: string): Promise<z.infer<typeof Feedback>> {
    const ep = this.episode(id);
    if (this.port.stopped()) throw new HttpError(503, 'the server is shutting down');
    const digest = this.port.digest(ep.task, [completion]);
    const same = (d: string | null, where: string): void => {
      if (d !== digest) throw new HttpError(422, `idempotency key "${key?.slice(0, 64)}" was used for ${where} of episode ${id}, whose completion differs`);
    };
    // Phase 1: a retry is the submission it repeats.
    if (key !== undefined) {
      const stored = this.port.store.episodeSubmissions(id).find((s) => s.key === key);
      if (stored) {
        same(stored.digest, `submission ${stored.idx}`);
        return this.reply(id, await this.settle(ep, stored));
      }
      const flying = this.flights.get(id)?.get(key);
      if (flying) {
        same(flying.digest, 'a submission');
        return this.reply(id, await flying.done);
      }
    }
    // Phase 2: room in the episode, counting the submissions being recorded.
    if (ep.status === 'closed' || this.closing.has(id)) throw new HttpError(409, `episode ${id} is closed; open a new one`);
    if (this.left(ep, this.port.store.episodeSubmissions(id).length) <= 0) {
      throw new HttpError(409, `episode ${id} has no submissions left (it allows ${ep.maxSubmissions}); close it`);
    }
    // Phase 3: record and settle it on the service's request path.
    const name = key ?? `#${randomUUID()}`;
    const flights = this.flights.get(id) ?? new Map<string, Flight>();
    this.flights.set(id, flights);
    const earlier = [...flights.values()].map((f) => f.done);
    const flight: Flight = { digest, recorded: false, done: Promise.resolve() as never };
    flight.done = (async () => {
      let request: number;
      try {
        // Rounds are sequential: a patch applies to the last valid job of the submissions before it, settled.
        await Promise.allSettled(earlier);
        const base = await this.lastValidJob(ep, Number.POSITIVE_INFINITY);
        // The request's key is the episode's own: the key space and the identical-request replay of /v1/rewards stay apart.
        request = (await this.port.admit(ep.task, [completion], `episode/${id}/${name}`, { id, key: key ?? null }, base)).id;
      } finally {
        flight.recorded = true;
      }
      const sub = this.port.store.episodeSubmissions(id).find((s) => s.request === request);
      // Only a /v1/rewards request made with this episode's own form of the key gets here.
      if (!sub) throw new HttpError(422, `idempotency key "${key?.slice(0, 64)}" was used for request ${request}, which is not a submission of episode ${id}`);
      return this.settle(ep, sub);
    })();
    flights.set(name, flight);
    const forget = (): void => {
      flights.delete(name);
      if (!flights.size) this.flights.delete(id);
    };
    flight.done.then(forget, forget);
    return this.reply(id, await flight.done);
  }

  /**
   * Settles and closes an episode (`POST /v1/episodes/{id}/close`): waits for its submissions,
   * pays it the mean of their rewards (`episodeReward`) and keeps the answer; closing again gives
   * the same answer. 503 when the server stops meanwhile (the episode stays open).
   */
  close(id: number): Promise<Closed> {
    const ep = this.episode(id);
    if (ep.status === 'closed') return Promise.resolve(ep.answer as Closed);
    const running = this.closing.get(id);
    if (running) return running;
    if (this.port.stopped()) return Promise.reject(new HttpError(503, 'the server is shutting down; the episode stays open'));
    const p = (async (): Promise<Closed> => {
      await Promise.allSettled([...(this.flights.get(id)?.values() ?? [])].map((f) => f.done));
      const subs = this.port.store.episodeSubmissions(id);
      const rewards: (number | null)[] = [];
      for (const s of subs) {
        await this.settle(ep, s);
        rewards.push(this.rewardOf(s));
      }
      const { reward, reason } = episodeReward(rewards);
      const answer: Closed = { episode: id, reward, submitted: subs.length, reason };
      if (!this.port.store.closeEpisode(id, reward, reason, answer)) return this.episode(id).answer as Closed;
      return answer;
    })();
    this.closing.set(id, p);
    const forget = (): void => {
      this.closing.delete(id);
    };
    p.then(forget, forget);
    return p;
  }

  /**
   * The spec the episode's next patch applies to after its submissions up to index `upTo`: the
   * last one whose spec was valid, else the task's baseline. Settles them first.
   */
  private async lastValidJob(ep: EpisodeRow, upTo: number): Promise<unknown> {
    for (const s of this.port.store.episodeSubmissions(ep.id)) if (s.idx <= upTo) await this.settle(ep, s);
    return this.lastValidNow(ep, upTo);
  }

  /** `lastValidJob` over the submissions settled now (an unsettled one is passed over). */
  private lastValidNow(ep: EpisodeRow, upTo: number): unknown {
    let spec: unknown = getPublicTask(ep.task).baseline;
    for (const s of this.port.store.episodeSubmissions(ep.id)) {
      if (s.idx > upTo) continue;
      const answer = this.port.store.request(this.port.runId, s.request)?.response as Answer | null | undefined;
      const job = answer ? this.port.store.job(this.port.runId, answer.results[0].job) : undefined;
      if (job && job.status !== 'invalid') spec = job.spec;
    }
    return spec;
  }

  /** The stored episode, or 404. */
  private episode(id: number): EpisodeRow {
    const ep = this.port.store.episode(this.port.runId, id);
    if (!ep) throw new HttpError(404, `no episode ${id} in this run`);
    return ep;
  }

  /** Submissions the episode takes now: none once closed or closing, else its allowance less those recorded and being recorded. */
  private left(ep: EpisodeRow, recorded: number): number {
    if (ep.status === 'closed' || this.closing.has(ep.id)) return 0;
    const recording = [...(this.flights.get(ep.id)?.values() ?? [])].filter((f) => !f.recorded).length;
    return Math.max(0, ep.maxSubmissions - recorded - recording);
  }

  /** A reply: the stored feedback with the episode's submissions left now. */
  private reply(id: number, f: StoredFeedback): z.infer<typeof Feedback> {
    const ep = this.episode(id);
    return { ...f, submissionsLeft: this.left(ep, this.port.store.episodeSubmissions(id).length) };
  }

  /** The reward the harness paid a settled submission (its one-completion request's). */
  private rewardOf(s: SubmissionRow): number | null {
    const answer = this.port.store.request(this.port.runId, s.request)?.response as Answer | null | undefined;
    if (!answer) throw new Error(`submission ${s.idx} has no settled request`);
    return answer.rewards[0] ?? null;
  }

  /** A submission's feedback once its request is settled (waiting for it), kept with the submission. */
  private async settle(ep: EpisodeRow, s: SubmissionRow): Promise<StoredFeedback> {
    const now = this.settledNow(ep, s);
    if (now) return now;
    await this.port.answerOf(s.request);
    return this.settledNow(ep, s) as StoredFeedback;
  }

  /** A submission's feedback if its request is settled, else null; built once from the answer, the job and its artifact, then kept. */
  private settledNow(ep: EpisodeRow, s: SubmissionRow): StoredFeedback | null {
    if (s.feedback) return s.feedback as StoredFeedback;
    const r = this.port.store.request(this.port.runId, s.request);
    if (r?.status !== 'done' || !r.response) return null;
    const feedback = this.feedback(ep, s, r.response as Answer);
    this.port.store.setSubmissionFeedback(ep.id, s.idx, feedback);
    s.feedback = feedback;
    return feedback;
  }

  /**
   * What a practitioner sees of the job: built field by field, so nothing of the hidden evaluation
   * can ride along; `next` is the next round's user turn, written from these fields and the job
   * the next patch applies to.
   */
  private feedback(ep: EpisodeRow, s: SubmissionRow, answer: Answer): StoredFeedback {
    const result = answer.results[0];
    const job = this.port.store.job(this.port.runId, result.job);
    if (!job) throw new Error(`job ${result.job} of submission ${s.idx} is missing`);
    const { brief } = getPublicTask(ep.task);
    const seen = {
      submission: s.idx,
      status: answer.rewards[0] === null ? ('unscorable' as const) : result.status,
      reason: result.reason,
      unchanged: result.unchanged,
      cost: { envSteps: job.envSteps, examples: job.examples, wallSeconds: job.wallSeconds },
      validation: validationOf(job, brief),
    };
    const left = ep.maxSubmissions - s.idx;
    return { episode: ep.id, job: job.id, ...seen, next: roundTurn(seen, compactExample(this.lastValidNow(ep, s.idx), brief, 'defaults'), left) };
  }
}
