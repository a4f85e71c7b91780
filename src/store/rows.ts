/** The rows of the store as its readers see them (store/store.ts, store/job-store.ts). */

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
  /** The round the job was proposed in: the iteration of `rrl train`, or the request id of `rrl serve`. */
  round: number;
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

/** A request of `rrl serve` as stored. */
export interface RequestRow {
  id: number;
  task: string;
  completions: number;
  status: string;
  response: unknown;
  createdAt: string;
  finishedAt: string | null;
}

/** A request as its idempotency key or digest finds it. */
export interface RequestMatch {
  id: number;
  task: string;
  completions: number;
  digest: string | null;
}

/** The reward of one job as recorded, with what it was computed from. */
export interface RewardEntry {
  jobId: number;
  reward: number;
  advantage: number | null;
  detail: unknown;
  groupId?: string | null;
}

/** A job to record (Store `addJobs`). */
export interface NewJob extends Pick<JobRow, 'round' | 'slot' | 'task' | 'kind' | 'agent' | 'spec' | 'trace'> {
  rejected?: { kind: string; error: string };
  /** `rung` jobs: the rung, the proposal they train and the share of its budget. */
  rung?: number;
  parentId?: number;
  share?: number;
  /** The merge patch the spec was written as (null or absent: a full spec). */
  patch?: unknown;
}

/** An iteration of a run with its summary. */
export interface IterationRow {
  idx: number;
  status: string;
  meanReward: number | null;
  meanNormalized: number | null;
  bestNormalized: number | null;
}
