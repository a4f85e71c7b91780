/**
 * The front door shared by `rrl serve` and `rrl dashboard`: what a request must look like before
 * either server reads it, and the limits of the node:http server under it.
 *
 * - Without a token only a loopback `Host` with the server's port is served (`127.0.0.1:PORT`,
 *   `localhost:PORT`, `[::1]:PORT`): a DNS-rebinding page names its own host and is refused (421).
 * - An `Origin`, when a browser sends one, must be the server's own (else 403): a page of another
 *   origin can make no request with side effects, `no-cors` or not.
 * - The request target is a path whose percent-encoding decodes (else 400).
 * - A whole request (headers and body) must arrive within a time limit (408, then closed); the
 *   wait for the answer is not limited. Open connections are capped (past it: 503, then closed).
 * - Long-lived streams (server-sent events) are capped apart (`StreamGate`): at most a few per
 *   key (a request, a run) and a fixed number in all (past either: 503); a connection holding a
 *   stream does not count against the connection cap, so open streams never starve requests.
 *
 * Every refusal is a status and a one-line reason; each server words the body its own way.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { oneLine } from '../spec/bounds.js';
import { isLoopback } from './auth.js';

/** The limits of a server's connections. */
export interface DoorLimits {
  /** Time to receive a whole request, its headers and body, in ms (default 30 000). */
  bodyTimeoutMs?: number;
  /** Most open connections; one past it is answered 503 and closed (default 64). */
  maxConnections?: number;
}

/** Defaults of the limits. */
export const DOOR_DEFAULTS = { bodyTimeoutMs: 30_000, maxConnections: 64 } as const;

/** Why a request is not served: a status and a one-line reason. */
export interface Refusal {
  status: number;
  message: string;
}

/** What a server answers with when it writes to the socket itself: a content type and a body for a reason. */
export type RawBody = (message: string) => { type: string; text: string };

/** A request that passed the door: its URL (path decoded without error). */
export type Admitted = { ok: true; url: URL } | ({ ok: false } & Refusal);

/** The hosts a server without a token answers for: the loopback names with its port (and its own loopback address). */
export function loopbackHosts(port: number, listenHost?: string): string[] {
  const hosts = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  if (listenHost && isLoopback(listenHost)) {
    const own = `${listenHost.includes(':') ? `[${listenHost}]` : listenHost}:${port}`.toLowerCase();
    if (!hosts.includes(own)) hosts.push(own);
  }
  return hosts;
}

/**
 * Checks a request's Host (only without a token), its Origin and its target; `listenHost` is the
 * address the server listens on. Never throws.
 */
export function admit(req: IncomingMessage, o: { token: boolean; listenHost?: string }): Admitted {
  const host = (req.headers.host ?? '').toLowerCase();
  if (!o.token) {
    const allowed = loopbackHosts(req.socket.localPort ?? 0, o.listenHost);
    if (!allowed.includes(host)) {
      return { ok: false, status: 421, message: `Host "${oneLine(host, 80)}" is not this server: without a token it answers only for ${allowed.join(', ')}` };
    }
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !sameOrigin(origin, host)) {
    return { ok: false, status: 403, message: `a request from another origin (${oneLine(origin, 80)}) is refused: only this server's own pages may call it` };
  }
  const raw = req.url ?? '';
  if (!raw.startsWith('/')) return { ok: false, status: 400, message: 'the request target must be a path starting with "/"' };
  const path = raw.split(/[?#]/, 1)[0];
  try {
    decodeURIComponent(path);
  } catch {
    return { ok: false, status: 400, message: `malformed percent-encoding in the path "${oneLine(path, 80)}"` };
  }
  let url: URL;
  try {
    url = new URL(`http://door${raw}`);
  } catch {
    return { ok: false, status: 400, message: 'malformed URL' };
  }
  return { ok: true, url };
}

/** True when `origin` is this server's own: http(s) with the request's Host. */
function sameOrigin(origin: string, host: string): boolean {
  const o = origin.toLowerCase();
  return host !== '' && (o === `http://${host}` || o === `https://${host}`);
}

/** A refusal for a POST body that is not JSON (415), or null: `application/json`, optionally with `charset=utf-8`. */
export function jsonBodyRefusal(req: IncomingMessage): Refusal | null {
  const type = req.headers['content-type'] ?? '';
  const [media, ...params] = type.split(';').map((s) => s.trim().toLowerCase());
  const utf8 = params.every((p) => /^charset="?utf-8"?$/.test(p));
  if (media === 'application/json' && utf8) return null;
  return { status: 415, message: `the body must be application/json (charset utf-8), got ${type ? `"${oneLine(type, 80)}"` : 'no content-type'}` };
}

/** An HTTP/1.1 response written straight to a socket, closing the connection. */
function rawResponse(status: number, reason: string, body: { type: string; text: string }): string {
  const head = [`HTTP/1.1 ${status} ${reason}`, `content-type: ${body.type}`, `content-length: ${Buffer.byteLength(body.text)}`, 'connection: close'];
  return `${head.join('\r\n')}\r\n\r\n${body.text}`;
}

/** The caps of a server's long-lived streams. */
export interface StreamLimits {
  /** Most streams open at once (default 64). */
  maxStreams?: number;
  /** Most streams open at once on one key (default 4). */
  maxStreamsPerKey?: number;
}

/** Defaults of the stream caps. */
export const STREAM_DEFAULTS = { maxStreams: 64, maxStreamsPerKey: 4 } as const;

/**
 * The long-lived streams of one server: a stream holds a slot from `take` until its answer is
 * written out or its connection closes. The door (`createDoorServer`) does not count a
 * connection that holds a stream against its connection cap: streams have caps of their own.
 */
export class StreamGate {
  readonly max: number;
  readonly perKey: number;
  private readonly byKey = new Map<string, number>();
  /** The connections holding streams, with how many each holds. */
  private readonly sockets = new Map<Duplex, number>();
  private total = 0;

  /** `what` names the streams in refusals ("event streams"); `keyWords` names a key ("request 3"). */
  constructor(
    limits: StreamLimits = {},
    private readonly what = 'event streams',
    private readonly keyWords: (key: string) => string = (key) => key,
  ) {
    this.max = limits.maxStreams ?? STREAM_DEFAULTS.maxStreams;
    this.perKey = limits.maxStreamsPerKey ?? STREAM_DEFAULTS.maxStreamsPerKey;
    for (const [name, v] of [
      ['maxStreams', this.max],
      ['maxStreamsPerKey', this.perKey],
    ] as const) {
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`${name} must be a positive integer, got ${v}`);
    }
  }

  /** True while `socket` holds a stream (the door leaves it out of its connection count). */
  holds(socket: Duplex): boolean {
    return this.sockets.has(socket);
  }

  /** Streams open now. */
  get open(): number {
    return this.total;
  }

  /** Why one more stream of `key` cannot open (503, one line), or null. */
  refusal(key: string): Refusal | null {
    if (this.total >= this.max) {
      return { status: 503, message: `too many ${this.what}: at most ${this.max} are open at once; close one or retry later` };
    }
    if ((this.byKey.get(key) ?? 0) >= this.perKey) {
      return {
        status: 503,
        message: `too many ${this.what} on ${this.keyWords(key)}: at most ${this.perKey} are open at once on one; close one or retry later`,
      };
    }
    return null;
  }

  /**
   * Opens a stream of `key` on `socket` until `ended` settles; past either cap a refusal, and
   * then nothing is held.
   */
  take(key: string, socket: Duplex, ended: Promise<unknown>): Refusal | null {
    const refused = this.refusal(key);
    if (refused) return refused;
    this.total += 1;
    this.byKey.set(key, (this.byKey.get(key) ?? 0) + 1);
    this.sockets.set(socket, (this.sockets.get(socket) ?? 0) + 1);
    const release = (): void => {
      this.total -= 1;
      const k = (this.byKey.get(key) ?? 1) - 1;
      if (k > 0) this.byKey.set(key, k);
      else this.byKey.delete(key);
      const s = (this.sockets.get(socket) ?? 1) - 1;
      if (s > 0) this.sockets.set(socket, s);
      else this.sockets.delete(socket);
    };
    void ended.then(release, release);
    return null;
  }
}

/**
 * A node:http server with the limits: a request must arrive whole within `bodyTimeoutMs` (then
 * 408 and closed; the answer may take as long as it takes), and past `maxConnections` open ones a
 * new connection is answered 503 and closed without its requests reaching `listener`. Malformed
 * HTTP is answered 400. `body` words the reasons of those answers. Connections holding a stream
 * of `streams` are left out of the count (the gate caps them).
 */
export function createDoorServer(limits: DoorLimits, body: RawBody, listener: RequestListener, streams?: StreamGate): Server {
  const timeout = limits.bodyTimeoutMs ?? DOOR_DEFAULTS.bodyTimeoutMs;
  const max = limits.maxConnections ?? DOOR_DEFAULTS.maxConnections;
  if (!(timeout > 0)) throw new RangeError(`bodyTimeoutMs must be positive, got ${timeout}`);
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxConnections must be a positive integer, got ${max}`);
  const open = new Set<Duplex>();
  const refused = new WeakSet<Duplex>();
  /** The latest response on each connection (whether one is half written decides if a raw answer may follow). */
  const answering = new WeakMap<Duplex, ServerResponse>();
  /** Open connections that hold no stream (a connection holding one is counted by the gate). */
  const requestConnections = (): number => {
    let n = 0;
    for (const s of open) if (!streams?.holds(s)) n += 1;
    return n;
  };

  const server = createServer({ connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(timeout / 4))) }, (req, res) => {
    if (refused.has(req.socket)) {
      req.resume();
      return;
    }
    answering.set(req.socket, res);
    listener(req, res);
  });
  server.requestTimeout = timeout;
  server.headersTimeout = Math.min(timeout, 60_000);
  server.on('connection', (socket: Duplex) => {
    if (requestConnections() >= max) {
      refused.add(socket);
      socket.end(rawResponse(503, 'Service Unavailable', body(`too many connections: this server keeps at most ${max} open; retry later`)));
      // The client reads the answer and hangs up; one that does not is cut off.
      setTimeout(() => socket.destroy(), 2000).unref();
      return;
    }
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const res = answering.get(socket);
    if (!socket.writable || (res?.headersSent && !res.writableFinished)) {
      socket.destroy();
      return;
    }
    const reply =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? rawResponse(408, 'Request Timeout', body(`the request did not arrive whole within ${timeout} ms`))
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? rawResponse(431, 'Request Header Fields Too Large', body('the request headers are too large'))
          : rawResponse(400, 'Bad Request', body('malformed HTTP request'));
    socket.end(reply, () => socket.destroy());
  });
  return server;
}
