/**
 * The HTTP layer of `rrl serve` on node:http: the front door (serve/front-door.ts: Host, Origin,
 * time and connection limits), routes, a bearer token, bounded JSON bodies parsed with the zod
 * schemas of serve/schemas.ts, and one-line JSON errors. Whatever a client sends, the answer is a
 * status and a JSON body; nothing it sends stops the server.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import { oneLine } from '../spec/bounds.js';
import { HttpError, type RewardService } from './service.js';
import { RewardsRequest, openApiDocument } from './schemas.js';
import { bearerOf, isLoopback, tokenChecker } from './auth.js';
import { type DoorLimits, admit, createDoorServer, jsonBodyRefusal } from './front-door.js';
import { warmIntake } from './intake.js';

export { isLoopback };

/** Largest request body (bytes): a full group of completions at the reply limit fits. */
export const MAX_BODY_BYTES = 8 << 20;

/** Where and how the server listens (and the limits of its connections). */
export interface ServerOptions extends DoorLimits {
  host?: string;
  port?: number;
  /** Bearer token every request must carry (null: none, loopback only). */
  token?: string | null;
  maxBodyBytes?: number;
  version?: string;
}

/** A running server. */
export interface RunningServer {
  url: string;
  port: number;
  /** Stops accepting connections and ends open ones (the service is closed by its owner). */
  close(): Promise<void>;
}

/** The first issue of a zod error as one line naming the field. */
function zodMessage(err: z.ZodError): string {
  const issue = err.issues[0];
  const path = issue?.path.length ? issue.path.join('.') : 'body';
  return oneLine(`${path}: ${issue?.message ?? 'invalid'}`, 300);
}

/** Reads a body up to `max` bytes; throws 413 past it (the rest is discarded). */
function readBody(req: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      reject(new HttpError(413, `the body is ${declared} bytes; the limit is ${max}`));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      if (over) return;
      size += c.length;
      if (size > max) {
        over = true;
        chunks.length = 0;
        reject(new HttpError(413, `the body is over the limit of ${max} bytes`));
      } else chunks.push(c);
    });
    req.on('end', () => over || resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', (err) => reject(new HttpError(400, `the body could not be read: ${err.message}`)));
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Starts the HTTP server for `service`; resolves once it listens. */
export function startServer(service: RewardService, o: ServerOptions = {}): Promise<RunningServer> {
  const host = o.host ?? '127.0.0.1';
  const token = o.token ?? null;
  if (!isLoopback(host) && !token) throw new Error(`listening on ${host} (beyond loopback) needs a bearer token: pass --token-env VAR with the token in $VAR`);
  const max = o.maxBodyBytes ?? MAX_BODY_BYTES;
  const authorised = tokenChecker(token);
  const openapi = JSON.stringify(openApiDocument(o.version ?? '0.0.0'));

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const door = admit(req, { token: token !== null, listenHost: host });
    if (!door.ok) {
      req.resume();
      throw new HttpError(door.status, door.message);
    }
    if (!authorised(bearerOf(req))) {
      req.resume();
      return send(res, 401, { error: 'a bearer token is required (Authorization: Bearer TOKEN)' }, { 'www-authenticate': 'Bearer' });
    }
    const url = door.url;
    const path = url.pathname;
    const method = req.method ?? 'GET';
    if (method === 'GET' && path === '/openapi.json') {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(openapi);
      return;
    }
    if (method === 'GET' && path === '/v1/tasks') return send(res, 200, service.tasks());
    let m = /^\/v1\/tasks\/([^/]+)\/prompt$/.exec(path);
    if (method === 'GET' && m) {
      const form = url.searchParams.get('form') ?? 'full';
      if (form !== 'full' && form !== 'compact' && form !== 'patch') throw new HttpError(400, `form: expected full, compact or patch, got "${oneLine(form, 40)}"`);
      return send(res, 200, service.prompt(decodeURIComponent(m[1]), form));
    }
    m = /^\/v1\/tasks\/([^/]+)\/schema$/.exec(path);
    if (method === 'GET' && m) {
      const form = url.searchParams.get('form') ?? 'spec';
      if (form !== 'spec' && form !== 'patch') throw new HttpError(400, `form: expected spec or patch, got "${oneLine(form, 40)}"`);
      return send(res, 200, service.schema(decodeURIComponent(m[1]), form));
    }
    m = /^\/v1\/jobs\/([^/]+)$/.exec(path);
    if (method === 'GET' && m) {
      const id = Number(m[1]);
      if (!/^\d{1,15}$/.test(m[1]) || !Number.isSafeInteger(id)) throw new HttpError(400, `job id: expected a positive integer, got "${oneLine(decodeURIComponent(m[1]), 40)}"`);
      return send(res, 200, service.job(id));
    }
    if (path === '/v1/rewards') {
      if (method !== 'POST') throw new HttpError(405, `${method} ${path}: use POST`);
      const notJson = jsonBodyRefusal(req);
      if (notJson) throw new HttpError(notJson.status, notJson.message);
      const text = await readBody(req, max);
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch (err) {
        throw new HttpError(400, `the body is not JSON: ${(err as Error).message}`);
      }
      const parsed = RewardsRequest.safeParse(raw);
      if (!parsed.success) throw new HttpError(400, zodMessage(parsed.error));
      const header = req.headers['idempotency-key'];
      const key = parsed.data.idempotencyKey ?? (typeof header === 'string' && header !== '' ? header.slice(0, 128) : undefined);
      return send(res, 200, await service.rewards(parsed.data.task, parsed.data.completions, key));
    }
    throw new HttpError(404, `no route ${method} ${oneLine(path, 100)}; see GET /openapi.json`);
  };

  // The request must arrive within the body timeout; the answer to a rewards request may take minutes (its jobs).
  const server = createDoorServer(o, (message) => ({ type: 'application/json; charset=utf-8', text: JSON.stringify({ error: message }) }), (req, res) => {
    handle(req, res).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : 500;
      const headers: Record<string, string> = {};
      if (err instanceof HttpError && err.retryAfterSeconds !== undefined) headers['retry-after'] = String(err.retryAfterSeconds);
      // A body left unread (413, 415, a refused request) closes the connection rather than wait for it.
      if (!req.complete) headers.connection = 'close';
      send(res, status, { error: oneLine(err instanceof Error ? err.message : err, 500) }, headers);
    });
  });
  warmIntake();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 8377, host, () => {
      const port = (server.address() as AddressInfo).port;
      const shown = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shown}:${port}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
