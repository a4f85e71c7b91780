/**
 * The OpenAPI document of `rrl serve` (`openApiDocument`): the component schemas from the zod
 * schemas of serve/schemas.ts, and the paths, one function per resource: the tasks, the rewards
 * with their jobs and requests, and the episodes.
 */
import { DOC_CHARS, MAX_DOC_CHARS } from '../outer/agents/patch-prompt.js';
import { z } from 'zod';
import { SCHEMAS, type SchemaId } from './schemas.js';

/** A reference to one of the document's component schemas. */
const ref = (id: SchemaId) => ({ $ref: `#/components/schemas/${id}` });

/** A JSON answer of one component schema. */
const json = (id: SchemaId, description: string) => ({ description, content: { 'application/json': { schema: ref(id) } } });

/** The error answers every path may give. */
const errors = {
  '400': json('ErrorResponse', 'a malformed request'),
  '401': json('ErrorResponse', 'a missing or wrong bearer token'),
  '403': json('ErrorResponse', "a browser request from another origin than the server's own"),
  '421': json('ErrorResponse', 'without a token: a Host other than 127.0.0.1, localhost or [::1] with the server port'),
};

/** The `{id}` path parameter. */
const idParam = (description: string, integer = false) => ({
  name: 'id',
  in: 'path',
  required: true,
  description,
  schema: { type: integer ? 'integer' : 'string' },
});

/** A JSON request body of one component schema. */
const body = (id: SchemaId) => ({ required: true, content: { 'application/json': { schema: ref(id) } } });

/** The 429 answer: the queue is full (`why` says what else may cause it). */
const tooMany = (why: string) => ({
  ...json('ErrorResponse', why),
  headers: { 'Retry-After': { schema: { type: 'integer' } } },
});

/** The tasks: the list, a task's prompt, answer schema and design space, and its confirmations. */
export function taskPaths(): Record<string, unknown> {
  return {
    '/v1/tasks': {
      get: {
        operationId: 'listTasks',
        summary: 'the tasks',
        responses: {
          '200': { description: 'the task rows', content: { 'application/json': { schema: { type: 'array', items: ref('TaskRow') } } } },
          ...errors,
        },
      },
    },
    '/v1/tasks/{id}/prompt': {
      get: {
        operationId: 'taskPrompt',
        summary: 'the chat messages that ask for a job spec for the task',
        parameters: [
          idParam('task id'),
          {
            name: 'form',
            in: 'query',
            required: false,
            description:
              'full (default), compact (one spec to edit, for small models) or patch (the current job and what may change; the answer is a merge patch)',
            schema: { type: 'string', enum: ['full', 'compact', 'patch'] },
          },
          {
            name: 'doc',
            in: 'query',
            required: false,
            description: `patch form: characters of the task's documentation shown (default ${DOC_CHARS}; 0 drops the title, description and meanings)`,
            schema: { type: 'integer', minimum: 0, maximum: MAX_DOC_CHARS },
          },
        ],
        responses: { '200': json('PromptResponse', 'the messages'), '404': json('ErrorResponse', 'no such task'), ...errors },
      },
    },
    '/v1/tasks/{id}/schema': {
      get: {
        operationId: 'taskSchema',
        summary: 'a JSON Schema of the answer for guided decoding, narrowed to the task',
        parameters: [
          idParam('task id'),
          {
            name: 'form',
            in: 'query',
            required: false,
            description: 'spec (default: the full job spec) or patch (a merge patch over the baseline: no task field, no field required)',
            schema: { type: 'string', enum: ['spec', 'patch'] },
          },
        ],
        responses: {
          '200': { description: 'a JSON Schema (plain features only, for grammar engines)', content: { 'application/json': { schema: { type: 'object' } } } },
          '404': json('ErrorResponse', 'no such task'),
          ...errors,
        },
      },
    },
    '/v1/tasks/{id}/space': {
      get: {
        operationId: 'taskSpace',
        summary: "the task's design space: each head (one decision) with its spec path, options, kind, range and log scale, and the baseline's point",
        parameters: [idParam('task id')],
        responses: {
          '200': { description: 'the description `rrl space --task ID` prints', content: { 'application/json': { schema: { type: 'object' } } } },
          '404': json('ErrorResponse', 'no such task'),
          ...errors,
        },
      },
    },
    '/v1/tasks/{id}/confirmations': {
      post: {
        operationId: 'confirm',
        summary:
          "train a spec on the task's confirmation seeds (the harness's, never shown) and answer its confirmed score once done: for reports, never a reward",
        parameters: [idParam('task id')],
        requestBody: body('ConfirmationRequest'),
        responses: {
          '200': json('ConfirmationResponse', 'the confirmation'),
          '404': json('ErrorResponse', 'no such task'),
          '413': json('ErrorResponse', 'the body is over the size limit'),
          '415': json('ErrorResponse', 'the body is not application/json'),
          '429': tooMany('the job queue is full; retry after the Retry-After header'),
          '503': json('ErrorResponse', 'the server is shutting down; the jobs are kept and run when asked again after --resume'),
          ...errors,
        },
      },
    },
  };
}

/** The rewards: answered at once or later through the request, its events and its jobs. */
export function rewardPaths(): Record<string, unknown> {
  return {
    '/v1/rewards': {
      post: {
        operationId: 'rewards',
        summary: 'train, score and reward completions; answers once every job is done',
        requestBody: body('RewardsRequest'),
        responses: {
          '200': json('RewardsResponse', 'the rewards and results, in the order of the completions'),
          '404': json('ErrorResponse', 'no such task'),
          '413': json('ErrorResponse', 'the body is over the size limit'),
          '415': json('ErrorResponse', 'the body is not application/json'),
          '429': tooMany('the job queue is full, or too many completion bytes came of late; retry after the Retry-After header'),
          '503': json('ErrorResponse', 'the server is shutting down; the request is kept and finishes on --resume'),
          ...errors,
        },
      },
    },
    '/v1/jobs': {
      post: {
        operationId: 'submitJobs',
        summary: 'record completions as jobs and answer at once; the rewards come by GET /v1/requests/{id} or its events',
        requestBody: body('RewardsRequest'),
        responses: {
          '202': json('JobsAccepted', 'the request and its job ids'),
          '404': json('ErrorResponse', 'no such task'),
          '413': json('ErrorResponse', 'the body is over the size limit'),
          '415': json('ErrorResponse', 'the body is not application/json'),
          '422': json('ErrorResponse', 'the idempotency key was used for another request'),
          '429': tooMany('the job queue is full, or too many completion bytes came of late; retry after the Retry-After header'),
          '503': json('ErrorResponse', 'the server is shutting down'),
          ...errors,
        },
      },
    },
    '/v1/requests/{id}': {
      get: {
        operationId: 'request',
        summary: 'one request: its status, its jobs and, once done, its rewards',
        parameters: [idParam('request id', true)],
        responses: { '200': json('RequestStatus', 'the request'), '404': json('ErrorResponse', 'no such request'), ...errors },
      },
    },
    '/v1/requests/{id}/events': {
      get: {
        operationId: 'requestEvents',
        summary: 'server-sent events of a request: `job` (a JobResponse) as each job finishes, then `rewards` (a RewardsResponse) and the end',
        description:
          'Jobs done before the stream opened come first. `interrupted` (an ErrorResponse) ends the stream when the server stops: the request is ' +
          'kept and finishes after --resume. A `: keepalive` comment comes every --keepalive seconds.',
        parameters: [idParam('request id', true)],
        responses: {
          '200': { description: 'the event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          '404': json('ErrorResponse', 'no such request'),
          ...errors,
        },
      },
    },
    '/v1/jobs/{id}': {
      get: {
        operationId: 'job',
        summary: 'one job',
        parameters: [idParam('job id', true)],
        responses: { '200': json('JobResponse', 'the job'), '404': json('ErrorResponse', 'no such job'), ...errors },
      },
    },
  };
}

/** The episodes: opened, read, submitted to and closed. */
export function episodePaths(): Record<string, unknown> {
  return {
    '/v1/episodes': {
      post: {
        operationId: 'openEpisode',
        summary: 'open an episode of up to maxSubmissions jobs of one task; the Idempotency-Key header makes a retry the same episode',
        requestBody: body('EpisodeRequest'),
        responses: {
          '201': json('EpisodeCreated', 'the episode'),
          '404': json('ErrorResponse', 'no such task'),
          '422': json('ErrorResponse', 'the idempotency key was used for another episode'),
          '503': json('ErrorResponse', 'the server is shutting down'),
          ...errors,
        },
      },
    },
    '/v1/episodes/{id}': {
      get: {
        operationId: 'episode',
        summary: 'one episode: its submissions (feedback only) and, once closed, its reward',
        parameters: [idParam('episode id', true)],
        responses: { '200': json('EpisodeStatus', 'the episode'), '404': json('ErrorResponse', 'no such episode'), ...errors },
      },
    },
    '/v1/episodes/{id}/submissions': {
      post: {
        operationId: 'submitToEpisode',
        summary: 'one job of the episode; answers once it is done with its feedback (never a hidden score or a reward)',
        parameters: [idParam('episode id', true)],
        requestBody: body('SubmissionRequest'),
        responses: {
          '200': json('Feedback', 'what the job shows'),
          '404': json('ErrorResponse', 'no such episode'),
          '409': json('ErrorResponse', 'the episode is closed or has no submissions left'),
          '413': json('ErrorResponse', 'the body is over the size limit'),
          '415': json('ErrorResponse', 'the body is not application/json'),
          '422': json('ErrorResponse', 'the idempotency key was used for another completion'),
          '429': tooMany('the job queue is full, or too many completion bytes came of late; retry after the Retry-After header'),
          '503': json('ErrorResponse', 'the server is shutting down; a recorded submission is kept and finishes on --resume'),
          ...errors,
        },
      },
    },
    '/v1/episodes/{id}/close': {
      post: {
        operationId: 'closeEpisode',
        summary: "settles and closes the episode: its reward is the mean of its submissions' rewards; closing again answers the same",
        parameters: [idParam('episode id', true)],
        responses: {
          '200': json('EpisodeClosed', 'the reward'),
          '404': json('ErrorResponse', 'no such episode'),
          '503': json('ErrorResponse', 'the server is shutting down; the episode stays open'),
          ...errors,
        },
      },
    },
  };
}

/** The OpenAPI 3.1 document of the API, generated from the zod schemas of serve/schemas.ts. */
export function openApiDocument(version: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'rrl serve', version, description: 'recursive-rl as the environment and reward of an LLM RL framework: completions in, outer rewards out.' },
    components: {
      schemas: componentSchemas(),
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'required when the server listens beyond loopback or was given --token-env' } },
    },
    security: [{ bearer: [] }, {}],
    paths: {
      ...taskPaths(),
      ...rewardPaths(),
      ...episodePaths(),
      '/openapi.json': { get: { operationId: 'openapi', summary: 'this document', responses: { '200': { description: 'OpenAPI 3.1' } } } },
    },
  };
}

/** The zod schemas as JSON Schemas, referring to one another by component path. */
function componentSchemas(): Record<string, Record<string, unknown>> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(SCHEMAS)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { target: 'draft-2020-12', uri: (id) => `#/components/schemas/${id}` }) as {
    schemas: Record<string, Record<string, unknown>>;
  };
  for (const s of Object.values(schemas)) {
    delete s.$schema;
    delete s.$id;
  }
  return schemas;
}
