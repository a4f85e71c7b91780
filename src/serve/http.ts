/**
 * The HTTP layer shared by `rrl serve` and `rrl dashboard`: Hono routes and middleware, bridged to
 * node:http by @hono/node-server under the front door (serve/front-door.ts: Host, Origin, time and
 * connection limits). Here: the one error type and its answer's headers, the front door's checks
 * and the bearer token as middleware, the body limit, JSON bodies parsed with zod, JSON answers,
 * and listening. Each server words its own answers (serve: JSON; the dashboard: JSON under /api,
 * text elsewhere).
 */
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type HttpBindings, RequestError, getRequestListener } from '@hono/node-server';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { routePath } from 'hono/route';
import type { z } from 'zod';
import { oneLine } from '../spec/bounds.js';
import { bearerOf, isLoopback, tokenChecker } from './auth.js';
import { admit, jsonBodyRefusal } from './front-door.js';

/** A client error (or a refusal): a status, a one-line reason and, for 429, a Retry-After. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterSeconds?: number,
    /** Headers the answer carries (`www-authenticate` of a 401, `allow` of a 405). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/**
 * What a handler sees besides the request: the node:http request and response, why
 * @hono/node-server could not read the request (`unreadable`, see nodeListener), and the URL the
 * front door admitted.
 */
export type HttpEnv = { Bindings: HttpBindings & { unreadable?: Error }; Variables: { url: URL } };

/** A handler's context. */
export type HttpContext = Context<HttpEnv>;

/** The content type of every JSON answer. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** A JSON answer with its length (kept by HEAD answers too). */
export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  const text = JSON.stringify(body);
  return new Response(text, { status, headers: { 'content-type': JSON_TYPE, 'content-length': String(Buffer.byteLength(text)), ...headers } });
}

/**
 * The headers of an error answer: the error's own, `retry-after`, and `connection: close` when
 * the request has a body that has not arrived whole (a refused upload is not waited for).
 */
export function errorHeaders(c: HttpContext, err: HttpError): Record<string, string> {
  const headers = { ...err.headers };
  if (err.retryAfterSeconds !== undefined) headers['retry-after'] = String(err.retryAfterSeconds);
  const { complete, headers: sent } = c.env.incoming;
  if (!complete && (sent['transfer-encoding'] !== undefined || Number(sent['content-length'] ?? 0) > 0)) headers.connection = 'close';
  return headers;
}

/**
 * A Hono app whose routes match the path as sent (percent-encoding kept; a parameter is decoded
 * once, by `c.req.param`), every error and unknown route answered by `answer`. Non-HttpErrors are
 * 500s with their message.
 */
export function createApp(answer: (c: HttpContext, err: HttpError) => Response, notFound: (c: HttpContext) => HttpError): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>({ getPath: (req) => new URL(req.url).pathname });
  app.onError((err, c) => answer(c, err instanceof HttpError ? err : new HttpError(500, err.message)));
  app.notFound((c) => answer(c, notFound(c)));
  return app;
}

/**
 * The node:http listener of `app`. A request @hono/node-server cannot turn into a URL (a Host or
 * target it refuses) still runs through the app, on a stand-in URL with `unreadable` set: the
 * front door and the token answer it as before, `refuseUnreadable` after them.
 */
export function nodeListener(app: Hono<HttpEnv>): RequestListener {
  return (incoming, outgoing) => {
    const listener = getRequestListener((req, env) => app.fetch(req, env as HttpBindings), {
      hostname: 'localhost',
      errorHandler: (err) => {
        if (!(err instanceof RequestError)) throw err;
        return app.fetch(new Request('http://localhost/'), { incoming, outgoing, unreadable: err });
      },
    });
    void listener(incoming, outgoing);
  };
}

/** The request's method as sent (HEAD included, which Hono routes as GET). */
export const methodOf = (c: HttpContext): string => c.env.incoming.method ?? 'GET';

/** A path parameter as sent, not decoded (`c.req.param` decodes it). */
export function rawParam(c: HttpContext, name: string): string {
  const at = routePath(c).split('/').indexOf(`:${name}`);
  return c.req.path.split('/')[at] ?? '';
}

/** Middleware: the front door's checks (Host without a token, Origin, target); sets `url`. */
export function frontDoor(o: { token: boolean; listenHost: string }): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const door = admit(c.env.incoming, o);
    if (!door.ok) throw new HttpError(door.status, door.message);
    c.set('url', door.url);
    await next();
  };
}

/**
 * Middleware: the bearer token (`Authorization: Bearer TOKEN`, or what `also` finds), compared
 * in constant time; without a token every request passes. A wrong or missing one is a 401 with
 * `message`.
 */
export function bearerToken(token: string | null, message: string, also?: (c: HttpContext) => string | null): MiddlewareHandler<HttpEnv> {
  const authorised = tokenChecker(token);
  return async (c, next) => {
    if (!authorised(bearerOf(c.env.incoming) ?? also?.(c) ?? null)) throw new HttpError(401, message, undefined, { 'www-authenticate': 'Bearer' });
    await next();
  };
}

/** Middleware: a request @hono/node-server could not read is a 400 (after the door and the token). */
export const refuseUnreadable: MiddlewareHandler<HttpEnv> = async (c, next) => {
  if (c.env.unreadable) throw new HttpError(400, `the request could not be read: ${oneLine(c.env.unreadable.message, 100)}`);
  await next();
};

/** Middleware: a body must be `application/json` (optionally `charset=utf-8`), else 415. */
export const jsonContent: MiddlewareHandler<HttpEnv> = async (c, next) => {
  const refusal = jsonBodyRefusal(c.env.incoming);
  if (refusal) throw new HttpError(refusal.status, refusal.message);
  await next();
};

/** Middleware: a body over `max` bytes is a 413 (by its Content-Length, else as it arrives). */
export function limitBody(max: number): MiddlewareHandler<HttpEnv> {
  return bodyLimit({
    maxSize: max,
    onError: (c) => {
      const declared = Number(c.req.header('content-length'));
      if (Number.isFinite(declared) && declared > max) throw new HttpError(413, `the body is ${declared} bytes; the limit is ${max}`);
      throw new HttpError(413, `the body is over the limit of ${max} bytes`);
    },
  });
}

/** The first issue of a zod error as one line naming the field. */
function zodMessage(err: z.ZodError): string {
  const issue = err.issues[0];
  const path = issue?.path.length ? issue.path.join('.') : 'body';
  return oneLine(`${path}: ${issue?.message ?? 'invalid'}`, 300);
}

/** The body as JSON parsed with `schema`: 400 when it cannot be read, is not JSON or does not fit. */
export async function jsonBody<S extends z.ZodType>(c: HttpContext, schema: S): Promise<z.output<S>> {
  let text: string;
  try {
    text = Buffer.from(await c.req.arrayBuffer()).toString('utf8');
  } catch (err) {
    throw new HttpError(400, `the body could not be read: ${(err as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, `the body is not JSON: ${(err as Error).message}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new HttpError(400, zodMessage(parsed.error));
  return parsed.data;
}

/** Throws unless `host` is loopback or there is a token. */
export function requireTokenBeyondLoopback(host: string, token: string | null): void {
  if (!isLoopback(host) && !token) throw new Error(`listening on ${host} (beyond loopback) needs a bearer token: pass --token-env VAR with the token in $VAR`);
}

/** A server that listens: its URL, its port, and how to stop it. */
export interface Listening {
  url: string;
  port: number;
  /** Stops accepting connections and ends open ones. */
  close(): Promise<void>;
}

/** What runs when a server cannot listen, when close() is called and once it has closed. */
export interface ListenHooks {
  onFail?: () => void;
  onClose?: () => void;
  afterClose?: () => void;
}

/**
 * Listens on `host:port` (0: a free port); resolves once it listens. `onFail` runs when it cannot
 * listen, `onClose` first thing in close() and `afterClose` once the server has closed.
 */
export function listen(server: Server, host: string, port: number, hooks: ListenHooks = {}): Promise<Listening> {
  return new Promise((resolve, reject) => {
    server.once('error', (err) => {
      hooks.onFail?.();
      reject(err);
    });
    server.listen(port, host, () => {
      const bound = (server.address() as AddressInfo).port;
      const shown = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shown}:${bound}`,
        port: bound,
        close: () =>
          new Promise<void>((done) => {
            hooks.onClose?.();
            server.close(() => {
              hooks.afterClose?.();
              done();
            });
            server.closeAllConnections();
          }),
      });
    });
  });
}
