/**
 * The HTTP layer of `rrl serve`: its routes on the shared layer of serve/http.ts (Hono under the
 * front door of serve/front-door.ts: Host, Origin, time and connection limits), a bearer token,
 * bounded JSON bodies parsed with the zod schemas of serve/schemas.ts, and one-line JSON errors.
 * Whatever a client sends, the answer is a status and a JSON body; nothing it sends stops the server.
 */
import { MAX_DOC_CHARS } from '../outer/agents/patch-prompt.js';
import { oneLine } from '../spec/bounds.js';
import type { RewardService } from './service.js';
import { ConfirmationRequest, EpisodeRequest, RewardsRequest, SubmissionRequest } from './schemas.js';
import { openApiDocument } from './openapi.js';
import { isLoopback } from './auth.js';
import { type DoorLimits, StreamGate, type StreamLimits, createDoorServer } from './front-door.js';
import {
  HttpError,
  type HttpContext,
  JSON_TYPE,
  type Listening,
  bearerToken,
  createApp,
  errorHeaders,
  frontDoor,
  jsonBody,
  jsonContent,
  jsonResponse,
  limitBody,
  listen,
  methodOf,
  nodeListener,
  rawParam,
  refuseUnreadable,
  requireTokenBeyondLoopback,
} from './http.js';
import { warmIntake } from './intake.js';
import { KEEPALIVE_SECONDS, requestEvents } from './events.js';

/** True for the loopback addresses, where a token is optional (from auth.ts). */
export { isLoopback };

/** The port `rrl serve` listens on unless told otherwise; the Python client's default address reads it (python/rrl_client/contracts.json). */
export const DEFAULT_SERVE_PORT = 8377;

/** Largest request body (bytes): a full group of completions at the reply limit fits. */
export const MAX_BODY_BYTES = 8 << 20;

/**
 * Where and how the server listens, the limits of its connections, and the caps of its event
 * streams (`maxStreamsPerKey`: per request; default 4 per request, 64 in all, apart from the
 * connections' 64).
 */
export interface ServerOptions extends DoorLimits, StreamLimits {
  host?: string;
  port?: number;
  /** Bearer token every request must carry (null: none, loopback only). */
  token?: string | null;
  maxBodyBytes?: number;
  version?: string;
  /** Seconds between keepalive comments on an event stream (default 15). */
  keepaliveSeconds?: number;
}

/** A running server; close() stops accepting connections and ends open ones (the service is closed by its owner). */
export type RunningServer = Listening;

/** The routes that take POST (`/v1/jobs` alone: `/v1/jobs/{id}` is GET). */
const REWARDS = '/v1/rewards';
const JOBS = '/v1/jobs';
const EPISODES = '/v1/episodes';

/** Paths that take one method only, with that method: another method there is 405. */
const ONE_METHOD: [RegExp, string][] = [
  [/^\/v1\/(rewards|jobs|episodes)$/, 'POST'],
  [/^\/v1\/episodes\/[^/]+\/(submissions|close)$/, 'POST'],
  [/^\/v1\/episodes\/[^/]+$/, 'GET'],
];

/** Largest body of the episode routes without a completion (`POST /v1/episodes`, its close). */
const SMALL_BODY_BYTES = 4 << 10;

/** The answer to a method a path does not take: 405 on a route of one method, else 404. */
function noRoute(c: HttpContext): HttpError {
  const method = methodOf(c);
  const path = c.get('url')?.pathname ?? c.req.path;
  const allow = ONE_METHOD.find(([re]) => re.test(path))?.[1];
  if (allow && allow !== method) return new HttpError(405, `${method} ${oneLine(path, 100)}: use ${allow}`, undefined, { allow });
  return new HttpError(404, `no route ${method} ${oneLine(path, 100)}; see GET /openapi.json`);
}

/** The `form` query parameter: one of `forms` (the first by default), else 400. */
function formOf<F extends string>(c: HttpContext, forms: readonly F[], words: string): F {
  const form = c.get('url').searchParams.get('form') ?? forms[0];
  if (!(forms as readonly string[]).includes(form)) throw new HttpError(400, `form: expected ${words}, got "${oneLine(form, 40)}"`);
  return form as F;
}

/** The `doc` query parameter of a patch prompt: characters of documentation, 0 to `MAX_DOC_CHARS` (absent: the default), else 400. */
function docOf(c: HttpContext): number | undefined {
  const raw = c.get('url').searchParams.get('doc');
  if (raw === null) return undefined;
  const n = Number(raw);
  if (!/^\d{1,5}$/.test(raw) || n > MAX_DOC_CHARS)
    throw new HttpError(400, `doc: expected characters of documentation, 0 to ${MAX_DOC_CHARS}, got "${oneLine(raw, 40)}"`);
  return n;
}

/** A positive integer path parameter `id`, else 400 naming `what`. */
function idOf(c: HttpContext, what: string): number {
  const raw = rawParam(c, 'id');
  const id = Number(raw);
  if (!/^\d{1,15}$/.test(raw) || !Number.isSafeInteger(id)) {
    throw new HttpError(400, `${what} id: expected a positive integer, got "${oneLine(c.req.param('id'), 40)}"`);
  }
  return id;
}

/** Starts the HTTP server for `service`; resolves once it listens. */
export function startServer(service: RewardService, o: ServerOptions = {}): Promise<RunningServer> {
  const host = o.host ?? '127.0.0.1';
  const token = o.token ?? null;
  requireTokenBeyondLoopback(host, token);
  const openapi = JSON.stringify(openApiDocument(o.version ?? '0.0.0'));
  const keepaliveMs = (o.keepaliveSeconds ?? KEEPALIVE_SECONDS) * 1000;
  const streams = new Set<Promise<void>>();
  const gate = new StreamGate(o, 'event streams', (key) => `request ${key}`);

  const app = createApp((c, err) => jsonResponse({ error: oneLine(err.message, 500) }, err.status, errorHeaders(c, err)), noRoute);
  const tokenMessage = 'a bearer token is required (Authorization: Bearer TOKEN)';
  app.use(frontDoor({ token: token !== null, listenHost: host }), bearerToken(token, tokenMessage), refuseUnreadable);
  // Hono answers HEAD with a GET route; this API has no HEAD.
  app.use(async (c, next) => {
    if (methodOf(c) === 'HEAD') throw noRoute(c);
    await next();
  });

  app.get('/openapi.json', () => new Response(openapi, { headers: { 'content-type': JSON_TYPE } }));
  app.get('/v1/tasks', () => jsonResponse(service.tasks()));
  app.get('/v1/tasks/:id/prompt', (c) => {
    const form = formOf(c, ['full', 'compact', 'patch'], 'full, compact or patch');
    return jsonResponse(service.prompt(c.req.param('id'), form, docOf(c)));
  });
  app.get('/v1/tasks/:id/schema', (c) => {
    const form = formOf(c, ['spec', 'patch'], 'spec or patch');
    return jsonResponse(service.schema(c.req.param('id'), form));
  });
  app.get('/v1/tasks/:id/space', (c) => jsonResponse(service.space(c.req.param('id'))));
  app.get('/v1/jobs/:id', (c) => jsonResponse(service.job(idOf(c, 'job'))));
  app.get('/v1/requests/:id', (c) => jsonResponse(service.request(idOf(c, 'request'))));
  app.get('/v1/requests/:id/events', (c) => requestEvents(c, service, idOf(c, 'request'), { keepaliveMs, open: streams, gate }));
  const completions = [jsonContent, limitBody(o.maxBodyBytes ?? MAX_BODY_BYTES)] as const;
  /** The Idempotency-Key header, if any. */
  const keyOf = (c: HttpContext): string | undefined => {
    const header = c.req.header('idempotency-key');
    return header ? header.slice(0, 128) : undefined;
  };
  /** The request body and its idempotency key (the body's, else the Idempotency-Key header). */
  const completionsOf = async (c: HttpContext) => {
    const body = await jsonBody(c, RewardsRequest);
    return { ...body, key: body.idempotencyKey ?? keyOf(c) };
  };
  app.post(REWARDS, ...completions, async (c) => {
    const b = await completionsOf(c);
    return jsonResponse(await service.rewards(b.task, b.completions, b.key));
  });
  app.post(JOBS, ...completions, async (c) => {
    const b = await completionsOf(c);
    const accepted = await service.submit(b.task, b.completions, b.key);
    return jsonResponse(accepted, 202, { location: accepted.links.request });
  });
  // Episodes: each submission settles as a one-completion request; the replies show no hidden score or reward.
  app.post(EPISODES, jsonContent, limitBody(SMALL_BODY_BYTES), async (c) => {
    const b = await jsonBody(c, EpisodeRequest);
    return jsonResponse(service.episodes.create(b.task, b.maxSubmissions, keyOf(c)), 201);
  });
  app.get(`${EPISODES}/:id`, (c) => jsonResponse(service.episodes.get(idOf(c, 'episode'))));
  app.post(`${EPISODES}/:id/submissions`, ...completions, async (c) => {
    const id = idOf(c, 'episode');
    const b = await jsonBody(c, SubmissionRequest);
    return jsonResponse(await service.episodes.submit(id, b.completion, keyOf(c)));
  });
  app.post(`${EPISODES}/:id/close`, limitBody(SMALL_BODY_BYTES), async (c) => jsonResponse(await service.episodes.close(idOf(c, 'episode'))));
  app.post('/v1/tasks/:id/confirmations', ...completions, async (c) => {
    const b = await jsonBody(c, ConfirmationRequest);
    return jsonResponse(await service.confirm(c.req.param('id'), b.completion));
  });
  for (const path of [REWARDS, JOBS, EPISODES, `${EPISODES}/:id`, `${EPISODES}/:id/submissions`, `${EPISODES}/:id/close`]) {
    app.all(path, (c) => {
      throw noRoute(c);
    });
  }

  // The request must arrive within the body timeout; the answer to a rewards request may take minutes (its jobs).
  const server = createDoorServer(o, (message) => ({ type: JSON_TYPE, text: JSON.stringify({ error: message }) }), nodeListener(app), gate);
  warmIntake();
  return listen(server, host, o.port ?? DEFAULT_SERVE_PORT).then((listening) => ({
    ...listening,
    // Event streams get a second to end (a stopped service makes them say `interrupted`) before connections are cut.
    close: async () => {
      if (streams.size) await Promise.race([Promise.allSettled([...streams]), new Promise((r) => setTimeout(r, 1000).unref())]);
      await listening.close();
    },
  }));
}
