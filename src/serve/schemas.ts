/**
 * The HTTP API of `rrl serve` as zod schemas: requests are parsed with them, and
 * `/openapi.json` (OpenAPI 3.1) is generated from the same objects, so the document and the
 * server cannot drift apart.
 */
import { z } from 'zod';

/** Most completions in one request (a GRPO group, or a few). */
export const MAX_COMPLETIONS = 256;
/** Longest task id. */
export const MAX_TASK_CHARS = 128;
/** Longest idempotency key. */
export const MAX_KEY_CHARS = 128;

/** `POST /v1/rewards` body. */
export const RewardsRequest = z
  .object({
    task: z.string().min(1).max(MAX_TASK_CHARS).describe('the task id (see GET /v1/tasks)'),
    completions: z
      .array(
        z
          .string()
          .describe(
            'raw model text; its answer is the first complete JSON object in it: a full job spec (it has a "task" field) or a JSON Merge Patch ' +
              "(RFC 7396) over the task's baseline spec (any other object)",
          ),
      )
      .min(1)
      .max(MAX_COMPLETIONS)
      .describe('completions for the task, usually one GRPO group'),
    idempotencyKey: z
      .string()
      .min(1)
      .max(MAX_KEY_CHARS)
      .optional()
      .describe('a key of the client (or the Idempotency-Key header): a request with the key of an earlier one gets that answer again, never new rewards'),
  })
  .strict()
  .describe('completions to turn into jobs, train, score and reward');

/** A job's hidden score as the caller may see it: the normalised number and its standard error. */
export const Score = z
  .object({
    normalized: z.number().describe('0 = random or trivial, 1 = the reference'),
    stderr: z.number().nullable().describe("standard error of `normalized` (the evaluation's bootstrap); null when unknown"),
    uncertainty: z
      .number()
      .nullable()
      .optional()
      .describe(
        "the score's uncertainty with the task's training noise included: sqrt(stderr² + sd²), sd = the baseline's spread over the harness's " +
          'seeds; for a confirmed candidate, that of its confirmed mean',
      ),
  })
  .describe('the normalised hidden score');

/** Final status of one job. */
export const JobStatus = z.enum(['succeeded', 'failed', 'invalid']).describe('invalid: no JSON object or a spec that fails validation');

/** The merge patch an answer was written as. */
export const Patch = z
  .record(z.string(), z.unknown())
  .nullable()
  .describe("the JSON Merge Patch over the task's baseline spec the completion was written as; null for a full spec");

/** Whether a job is the baseline's. */
export const Unchanged = z.boolean().describe("the spec trains the same job as the task's baseline spec, seed aside (false for an invalid one)");

/** One completion's outcome. */
export const RewardResult = z.object({
  status: JobStatus,
  score: Score.nullable(),
  reason: z.string().nullable().describe('why a job is invalid or failed, one line; null when it succeeded'),
  job: z.number().int().describe('the job id (GET /v1/jobs/{id})'),
  patch: Patch,
  unchanged: Unchanged,
});

/** `POST /v1/rewards` answer. */
export const RewardsResponse = z
  .object({
    request: z.number().int().describe('the request id'),
    replayed: z
      .boolean()
      .describe('true when this is the stored answer of an earlier request (same idempotency key, or the same task and completions within the replay window)'),
    rewards: z
      .array(z.number().nullable())
      .describe(
        "the outer reward of each completion, in order; null when the harness could not score it for its own reasons (its result's reason says " +
          "why, starting 'unscorable:'): zero advantage, never −1",
      ),
    results: z.array(RewardResult).describe('what became of each completion, in order'),
  })
  .describe('rewards once every job of the request is done');

/** `POST /v1/jobs` answer (202): the request and its jobs, at once. */
export const JobsAccepted = z
  .object({
    request: z.number().int().describe('the request id'),
    replayed: z.boolean().describe('true when this is an earlier request (same idempotency key, or the same task and completions within the replay window)'),
    status: z.enum(['pending', 'done']),
    jobs: z.array(z.number().int()).describe('the job id of each completion, in order (GET /v1/jobs/{id})'),
    links: z.object({ request: z.string(), events: z.string() }).describe('where to poll the request, and its server-sent events'),
  })
  .describe('the request is recorded and its jobs queued; the rewards come by GET /v1/requests/{id} or its event stream');

/** `GET /v1/requests/{id}` answer. */
export const RequestStatus = z
  .object({
    request: z.number().int(),
    task: z.string(),
    status: z.enum(['pending', 'done']).describe('pending until every job is done and the request is settled (a stopped server keeps it pending for --resume)'),
    jobs: z.array(z.number().int()).describe('the job id of each completion, in order'),
    finished: z.number().int().describe('jobs of the request that are done'),
    answer: RewardsResponse.nullable().describe('the rewards once the request is done (what POST /v1/rewards answers), else null'),
  })
  .describe('one request of POST /v1/jobs or POST /v1/rewards');

/** A row of `GET /v1/tasks` (as `rrl tasks --json` prints it). */
export const TaskRow = z.object({
  id: z.string(),
  family: z.string(),
  kind: z.enum(['control', 'supervised']),
  split: z.string(),
  data: z.string(),
});

/** `GET /v1/tasks/{id}/prompt` answer. */
export const PromptResponse = z.object({
  messages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() })).describe('chat messages asking for one job spec'),
  example: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe(
      'the valid job spec the compact form shows, or the example patch the patch form shows (null in the full form): what a trainer-side format ' +
        'reward can compare structure with',
    ),
});

/** `GET /v1/jobs/{id}` answer. */
export const JobResponse = z.object({
  job: z.number().int(),
  request: z.number().int().nullable().describe('the request that made it; null for a baseline job'),
  task: z.string(),
  kind: z.enum(['proposal', 'baseline', 'confirm']).describe('confirm: a bonus candidate trained again by the harness on one of its own seeds'),
  status: z.enum(['pending', 'succeeded', 'failed', 'invalid']),
  failureKind: z.string().nullable(),
  score: Score.nullable(),
  reason: z.string().nullable(),
  reward: z.number().nullable().describe("null until the job's request is settled, or when the job is unscorable"),
  unscorable: z.string().nullable().describe('why a settled job has no reward (the harness could not score it for its own reasons); else null'),
  cached: z
    .boolean()
    .describe(
      "a proposal's result was reused from an identical earlier proposal (a result the harness's own jobs produced is not said to be reused; " +
        "false for the harness's jobs)",
    ),
  patch: Patch,
  spec: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe("a valid proposal's spec as the harness trained it (its patch applied); null for an invalid one and for the harness's own jobs"),
  unchanged: Unchanged,
  cost: z.object({ envSteps: z.number().nullable(), examples: z.number().nullable(), wallSeconds: z.number().nullable() }),
});

/** Most submissions an episode may allow. */
export const MAX_EPISODE_SUBMISSIONS = 8;

/** `POST /v1/episodes` body. */
export const EpisodeRequest = z
  .object({
    task: z.string().min(1).max(MAX_TASK_CHARS).describe('the task id (see GET /v1/tasks)'),
    maxSubmissions: z.number().int().min(1).max(MAX_EPISODE_SUBMISSIONS).default(1).describe('how many jobs the episode may submit (default 1)'),
  })
  .strict()
  .describe('opens an episode: up to maxSubmissions jobs of one task by one agent rollout, paid the mean of their rewards when it closes');

/** `POST /v1/episodes` answer (201). */
export const EpisodeCreated = z.object({
  episode: z.number().int().describe('the episode id'),
  task: z.string(),
  maxSubmissions: z.number().int(),
  submitted: z.number().int().describe('submissions recorded so far (0 for a new episode; a retry with its key tells the current count)'),
  status: z.enum(['open', 'closed']),
});

/** `POST /v1/episodes/{id}/submissions` body. */
export const SubmissionRequest = z
  .object({
    completion: z
      .string()
      .describe(
        'raw model text; its answer is the first complete JSON object in it: a full job spec (it has a "task" field) or a JSON Merge Patch over ' +
          "the episode's last valid job (the task's baseline spec before any)",
      ),
  })
  .strict()
  .describe('one job of the episode (the Idempotency-Key header makes a retry the same submission)');

/**
 * What an agent may see of one submission between submissions: what a practitioner sees of a job it
 * ran (status, reason, cost, the job's own figure on its training pool), never a hidden score,
 * its standard error or uncertainty, or a reward.
 */
export const Feedback = z
  .object({
    episode: z.number().int(),
    submission: z.number().int().describe('1-based index of the submission in its episode'),
    job: z.number().int().describe('the job id'),
    status: z
      .enum(['succeeded', 'invalid', 'failed', 'unscorable'])
      .describe("unscorable: the harness could not score the job for its own reasons (left out of the episode's reward)"),
    reason: z.string().nullable().describe('why the job is invalid, failed or unscorable, one line; null when it succeeded'),
    unchanged: Unchanged,
    cost: z.object({ envSteps: z.number().int().nullable(), examples: z.number().int().nullable(), wallSeconds: z.number().nullable() }),
    validation: z
      .object({ name: z.string(), value: z.number() })
      .nullable()
      .describe(
        "the job's own figure on its training pool: control, the mean return of its last (up to) 20 training episodes (train/episodic_return); " +
          'supervised, its metric on its own validation split (val/accuracy or val/rmse); null when it has none',
      ),
    submissionsLeft: z.number().int().describe('how many more submissions the episode takes now (0 once closed)'),
    next: z
      .string()
      .describe(
        "the next round's user turn, written from the fields above: this job in one line, then (while jobs are left) the episode's last valid job, " +
          'which the next patch applies to, and the request for a patch',
      ),
  })
  .strict()
  .describe('what one submission shows: never a hidden score or a reward');

/** `POST /v1/episodes/{id}/close` answer. */
export const EpisodeClosed = z.object({
  episode: z.number().int(),
  reward: z
    .number()
    .nullable()
    .describe(
      "the mean of the submissions' rewards (invalid or failed −1), unscorable ones left out; null when every submission was unscorable; −1 when " +
        'none was submitted',
    ),
  submitted: z.number().int(),
  reason: z.string().nullable().describe('"no job submitted", or why the reward is null; else null'),
});

/** `GET /v1/episodes/{id}` answer. */
export const EpisodeStatus = z.object({
  episode: z.number().int(),
  task: z.string(),
  maxSubmissions: z.number().int(),
  submitted: z.number().int().describe('submissions recorded, settled or not'),
  status: z.enum(['open', 'closed']),
  submissions: z.array(Feedback).describe('the feedback of each settled submission, in order'),
  reward: z.number().nullable().describe("the episode's reward once closed (as its close answered); null while open"),
  reason: z.string().nullable().describe('once closed, the reason its close gave; null while open'),
});

/** `POST /v1/tasks/{id}/confirmations` body. */
export const ConfirmationRequest = z
  .object({
    completion: z
      .string()
      .describe(
        "raw model text, read as a completion of POST /v1/rewards is: a full job spec, or a merge patch over the task's baseline spec; its seed is ignored",
      ),
  })
  .strict()
  .describe("a spec to train on the harness's confirmation seeds of the task");

/** `POST /v1/tasks/{id}/confirmations` answer. */
export const ConfirmationResponse = z
  .object({
    confirmed: z
      .object({
        normalized: z
          .number()
          .nullable()
          .describe(
            'the mean normalised score over the confirmation seeds, a failed seed counted as a failure (the reference less 1); null when the ' +
              'harness lost every seed',
          ),
        uncertainty: z.number().nullable().describe('the uncertainty of that mean (evaluation error and training noise); null when there is none'),
        complete: z.boolean().describe('every seed trained and scored'),
        scored: z.number().int().describe('seeds that scored'),
        seeds: z.number().int().describe('confirmation seeds (the harness chooses them; they are never shown)'),
        failed: z.number().int().describe('seeds whose job failed of its own (a NaN, its limits, an error): each counts as a failure'),
        unscorable: z.number().int().describe("seeds lost to the harness's own failures, left out of the mean"),
      })
      .nullable()
      .describe('null when the completion is no valid spec'),
    status: z.enum(['succeeded', 'failed', 'invalid']).describe('succeeded: every seed scored; failed: some did not; invalid: no valid spec, nothing trained'),
    reason: z.string().nullable().describe('one line: why the spec is invalid, or what became of the seeds that did not score; null when every seed scored'),
  })
  .describe("a spec's quality on the harness's seeds, for reports (never a proposal's reward)");

/** Every error answer: one line. */
export const ErrorResponse = z.object({ error: z.string().describe('one line saying what was wrong') });

/** The component schemas of the OpenAPI document (serve/openapi.ts), by id. */
export const SCHEMAS = {
  RewardsRequest,
  RewardsResponse,
  RewardResult,
  Score,
  TaskRow,
  PromptResponse,
  JobResponse,
  JobsAccepted,
  RequestStatus,
  EpisodeRequest,
  EpisodeCreated,
  SubmissionRequest,
  Feedback,
  EpisodeStatus,
  EpisodeClosed,
  ConfirmationRequest,
  ConfirmationResponse,
  ErrorResponse,
} as const;

/** The id of one of the document's component schemas. */
export type SchemaId = keyof typeof SCHEMAS;
