/**
 * `rrl dashboard`: a read-only web UI over run stores, on node:http. JSON under /api, the page
 * (plain HTML and JavaScript, uPlot served from its package) for every other route, and
 * server-sent events at /api/events: the server polls each watched store's `data_version` (a
 * counter SQLite moves when another connection commits) and tells the page which run changed.
 *
 * Only GET and HEAD are answered; a URL names runs by key and jobs by number, never by path.
 * Beyond loopback every request needs the bearer token (the header, or a cookie set by opening
 * the page once with `?token=TOKEN`). The front door (serve/front-door.ts) comes first: without a
 * token only a loopback Host is served, a foreign Origin is refused, connections and the time to
 * send a request are limited; event streams are capped too.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';
import { oneLine } from '../spec/bounds.js';
import { bearerOf, isLoopback, tokenChecker } from '../serve/auth.js';
import { type DoorLimits, admit, createDoorServer } from '../serve/front-door.js';
import { EXPERIMENT_FILE, KEY_PATTERN, RunCatalog, openReadOnly } from './catalog.js';
import { JOB_STATUSES, type JobFilter, dataVersion, jobDetail, jobList, runDetail, runSummary } from './queries.js';

/** Where and how the dashboard listens (and the limits of its connections). */
export interface DashboardOptions extends DoorLimits {
  host?: string;
  port?: number;
  /** Bearer token every request must carry (null: none; loopback only). */
  token?: string | null;
  /** How often watched stores are polled for changes (ms). */
  pollMs?: number;
  /** Most event streams (/api/events) open at once; one past it is answered 503 (default 32). */
  maxStreams?: number;
}

/** Default of the event-stream cap. */
export const DEFAULT_MAX_STREAMS = 32;

/** A running dashboard. */
export interface RunningDashboard {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A client error: a status and a one-line reason. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const COOKIE = 'rrl_dashboard_token';
const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));
const require = createRequire(import.meta.url);

/** The page's files: a fixed list, read once; no URL maps to a file path. */
function staticFiles(): Map<string, { type: string; body: Buffer }> {
  const dir = '../../../src/dashboard/static/';
  const files: [string, string, string][] = [
    ['/static/app.js', here(`${dir}app.js`), 'text/javascript; charset=utf-8'],
    ['/static/app.css', here(`${dir}app.css`), 'text/css; charset=utf-8'],
    ['/static/uplot.js', require.resolve('uplot/dist/uPlot.iife.min.js'), 'text/javascript; charset=utf-8'],
    ['/static/uplot.css', require.resolve('uplot/dist/uPlot.min.css'), 'text/css; charset=utf-8'],
    ['/index.html', here(`${dir}index.html`), 'text/html; charset=utf-8'],
  ];
  return new Map(files.map(([url, path, type]) => [url, { type, body: readFileSync(path) }]));
}

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
};

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', ...SECURITY_HEADERS, ...headers });
  res.end(res.req.method === 'HEAD' ? undefined : text);
}

/** A run key from a URL segment: 400 when malformed. */
function keyOf(segment: string): string {
  let key: string;
  try {
    key = decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, 'run key: not valid percent-encoding');
  }
  if (!KEY_PATTERN.test(key) || key === '.' || key === '..') throw new HttpError(400, `run key: expected letters, digits, ".", "_" or "-", got "${oneLine(key, 60)}"`);
  return key;
}

/** A job id from a URL segment or query value: 400 unless a positive integer. */
function intOf(name: string, text: string): number {
  const n = Number(text);
  if (!/^\d{1,15}$/.test(text) || !Number.isSafeInteger(n)) throw new HttpError(400, `${name}: expected a non-negative integer, got "${oneLine(text, 40)}"`);
  return n;
}

/** The jobs filter of a query string: 400 naming the parameter when a value is out of place. */
function filterOf(q: URLSearchParams): JobFilter {
  const f: JobFilter = {};
  for (const name of q.keys()) if (!['task', 'status', 'iteration', 'kind'].includes(name)) throw new HttpError(400, `unknown filter "${oneLine(name, 40)}"; use task, status, iteration or kind`);
  const task = q.get('task');
  if (task) {
    if (task.length > 200) throw new HttpError(400, 'task: longer than 200 characters');
    f.task = task;
  }
  const status = q.get('status');
  if (status) {
    if (!(JOB_STATUSES as readonly string[]).includes(status)) throw new HttpError(400, `status: expected one of ${JOB_STATUSES.join(', ')}, got "${oneLine(status, 40)}"`);
    f.status = status;
  }
  const iteration = q.get('iteration');
  if (iteration) f.iteration = intOf('iteration', iteration);
  const kind = q.get('kind');
  if (kind) {
    if (kind !== 'proposal' && kind !== 'baseline' && kind !== 'rung') throw new HttpError(400, `kind: expected proposal, baseline or rung, got "${oneLine(kind, 40)}"`);
    f.kind = kind;
  }
  return f;
}

/** Starts the dashboard over the runs in `catalog`; resolves once it listens. */
export function startDashboard(catalog: RunCatalog, o: DashboardOptions = {}): Promise<RunningDashboard> {
  const host = o.host ?? '127.0.0.1';
  const token = o.token ?? null;
  if (!isLoopback(host) && !token) throw new Error(`listening on ${host} (beyond loopback) needs a bearer token: pass --token-env VAR with the token in $VAR`);
  const authorised = tokenChecker(token);
  const pollMs = o.pollMs ?? 500;
  const maxStreams = o.maxStreams ?? DEFAULT_MAX_STREAMS;
  const files = staticFiles();
  const connections = new Map<string, Database.Database>();
  const versions = new Map<string, number>();
  const clients = new Set<{ res: ServerResponse; run: string | null }>();

  /** The open read-only connection to a run's store (opened on first use); null while it cannot be opened. */
  const db = (key: string): Database.Database | null => {
    let c = connections.get(key);
    if (!c) {
      const entry = catalog.get(key);
      if (!entry) return null;
      try {
        c = openReadOnly(entry.dir);
      } catch {
        return null;
      }
      connections.set(key, c);
    }
    return c;
  };
  const dbOrThrow = (key: string): Database.Database => {
    if (!catalog.get(key)) {
      catalog.refresh();
      if (!catalog.get(key)) throw new HttpError(404, `no run "${key}" here; see /api/runs`);
    }
    const c = db(key);
    if (!c) throw new HttpError(503, `the store of run "${key}" cannot be opened yet`);
    return c;
  };

  const api = (path: string, q: URLSearchParams): unknown => {
    if (path === '/api/experiments') {
      catalog.refresh();
      return catalog.experiments().map(({ key, dir }) => ({ key, dir }));
    }
    const e = /^\/api\/experiments\/([^/]+)$/.exec(path);
    if (e) {
      const entry = experimentOrThrow(keyOf(e[1]));
      return { key: entry.key, dir: entry.dir, ...readExperiment(entry.dir) };
    }
    if (path === '/api/runs') {
      return catalog.list().map(({ key, dir }) => {
        const c = db(key);
        return { key, dir, summary: c ? runSummary(c) : null };
      });
    }
    let m = /^\/api\/runs\/([^/]+)$/.exec(path);
    if (m) {
      const key = keyOf(m[1]);
      const detail = runDetail(dbOrThrow(key));
      if (!detail) throw new HttpError(404, `run "${key}" has no run recorded yet`);
      return { key, ...detail };
    }
    m = /^\/api\/runs\/([^/]+)\/jobs$/.exec(path);
    if (m) {
      const key = keyOf(m[1]);
      return { key, ...jobList(dbOrThrow(key), filterOf(q)) };
    }
    m = /^\/api\/runs\/([^/]+)\/jobs\/([^/]+)$/.exec(path);
    if (m) {
      const key = keyOf(m[1]);
      const id = intOf('job id', m[2]);
      const detail = jobDetail(dbOrThrow(key), id);
      if (!detail) throw new HttpError(404, `run "${key}" has no job ${id}`);
      return { key, ...detail };
    }
    throw new HttpError(404, `no route GET ${oneLine(path, 100)}`);
  };

  const experimentOrThrow = (key: string): { key: string; dir: string } => {
    let entry = catalog.experiment(key);
    if (!entry) {
      catalog.refresh();
      entry = catalog.experiment(key);
    }
    if (!entry) throw new HttpError(404, `no experiment "${key}" here; see /api/experiments`);
    return entry;
  };

  const events = (req: IncomingMessage, res: ServerResponse, q: URLSearchParams): void => {
    const run = q.get('run');
    if (run !== null) {
      const key = keyOf(run);
      if (!catalog.get(key)) throw new HttpError(404, `no run "${key}" here; see /api/runs`);
    }
    if (clients.size >= maxStreams) throw new HttpError(503, `too many event streams: at most ${maxStreams} are open at once; close a dashboard page or retry later`);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', ...SECURITY_HEADERS });
    res.write('retry: 2000\n\n');
    const client = { res, run };
    clients.add(client);
    req.on('close', () => clients.delete(client));
  };

  const isPage = (path: string): boolean => path === '/' || /^\/runs\/[^/]+(\/jobs(\/[^/]+)?)?\/?$/.test(path) || /^\/experiments\/[^/]+\/?$/.test(path);

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const method = req.method ?? 'GET';
    const raw = req.url ?? '/';
    const door = admit(req, { token: token !== null, listenHost: host });
    if (!door.ok) throw new HttpError(door.status, door.message);
    if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, `${method}: the dashboard is read-only (GET and HEAD only)`);
    if (/(^|\/|%2f|\\|%5c)(\.|%2e){2}(\/|%2f|\\|%5c|\?|$)/i.test(raw) || /%00|\\|%5c/i.test(raw)) throw new HttpError(400, 'the URL may not contain "..", backslashes or NUL: runs are named by key');
    const url = door.url;
    const path = url.pathname;
    // A page opened with ?token= stores the token in a cookie (EventSource cannot send headers).
    const given = bearerOf(req) ?? url.searchParams.get('token') ?? cookieOf(req, COOKIE);
    if (!authorised(given)) throw new HttpError(401, 'a token is required: Authorization: Bearer TOKEN, or open the page once with ?token=TOKEN');
    if (token && url.searchParams.has('token') && isPage(path)) {
      url.searchParams.delete('token');
      res.writeHead(303, { location: url.pathname + url.search, 'set-cookie': `${COOKIE}=${encodeURIComponent(given ?? '')}; HttpOnly; SameSite=Strict; Path=/`, ...SECURITY_HEADERS });
      res.end();
      return;
    }
    if (path === '/api/events') return events(req, res, url.searchParams);
    const plot = /^\/api\/experiments\/([^/]+)\/plots\/([^/]+)$/.exec(path);
    if (plot) {
      const entry = experimentOrThrow(keyOf(plot[1]));
      const name = decodeURIComponent(plot[2]);
      if (!(EXPERIMENT_PLOTS as readonly string[]).includes(name)) throw new HttpError(404, `no plot "${oneLine(name, 60)}"; plots: ${EXPERIMENT_PLOTS.join(', ')}`);
      const body = readSmall(join(entry.dir, name));
      if (!body) throw new HttpError(404, `experiment "${entry.key}" has no ${name}`);
      // An SVG is shown as an image; on its own it may run nothing.
      res.writeHead(200, { 'content-type': 'image/svg+xml', 'content-length': body.length, 'cache-control': 'no-cache', ...SECURITY_HEADERS, 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'" });
      res.end(method === 'HEAD' ? undefined : body);
      return;
    }
    if (path.startsWith('/api/')) return sendJson(res, 200, api(path, url.searchParams));
    const file = files.get(path);
    if (file && path !== '/index.html') {
      res.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length, 'cache-control': 'no-cache', ...SECURITY_HEADERS });
      res.end(method === 'HEAD' ? undefined : file.body);
      return;
    }
    if (isPage(path)) {
      const m = /^\/runs\/([^/]+)(?:\/jobs(?:\/([^/]+))?)?\/?$/.exec(path);
      if (m) {
        const key = keyOf(m[1]);
        if (!catalog.get(key) && (catalog.refresh(), !catalog.get(key))) throw new HttpError(404, `no run "${key}" here`);
        if (m[2] !== undefined) intOf('job id', m[2]);
      }
      const x = /^\/experiments\/([^/]+)\/?$/.exec(path);
      if (x) experimentOrThrow(keyOf(x[1]));
      const page = files.get('/index.html')!;
      res.writeHead(200, { 'content-type': page.type, 'content-length': page.body.length, 'cache-control': 'no-cache', ...SECURITY_HEADERS });
      res.end(method === 'HEAD' ? undefined : page.body);
      return;
    }
    throw new HttpError(404, `no page ${oneLine(path, 100)}`);
  };

  // Change detection: one cheap pragma per watched store per tick, only while a page listens.
  let ticks = 0;
  const tick = (): void => {
    if (clients.size === 0) return;
    ticks += 1;
    if (ticks % 10 === 0 && catalog.refresh()) broadcast(null, 'runs', {});
    const all = [...clients].some((c) => c.run === null);
    const watched = all ? catalog.list().map((e) => e.key) : [...new Set([...clients].map((c) => c.run as string))];
    for (const key of watched) {
      const c = db(key);
      if (!c) continue;
      let v: number;
      try {
        v = dataVersion(c);
      } catch {
        continue;
      }
      const before = versions.get(key);
      versions.set(key, v);
      if (before !== undefined && before !== v) broadcast(key, 'change', { run: key });
    }
  };
  const broadcast = (run: string | null, event: string, data: unknown): void => {
    const text = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const c of clients) if (run === null || c.run === null || c.run === run) c.res.write(text);
  };
  const poller = setInterval(tick, pollMs);
  const heartbeat = setInterval(() => {
    for (const c of clients) c.res.write(': ping\n\n');
  }, 15_000);

  const server = createDoorServer(o, (message) => ({ type: 'text/plain; charset=utf-8', text: `${message}\n` }), (req, res) => {
    try {
      handle(req, res);
    } catch (err) {
      const status = err instanceof HttpError ? err.status : 500;
      const message = oneLine(err instanceof Error ? err.message : err, 300);
      const headers: Record<string, string> = status === 401 ? { 'www-authenticate': 'Bearer' } : status === 405 ? { allow: 'GET, HEAD' } : {};
      if ((req.url ?? '').startsWith('/api/')) sendJson(res, status, { error: message }, headers);
      else if (!res.headersSent) {
        res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS, ...headers });
        res.end(req.method === 'HEAD' ? undefined : `${status}: ${message}\n`);
      }
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', (err) => {
      // Not listening (e.g. the port is taken): nothing may keep the process alive.
      clearInterval(poller);
      clearInterval(heartbeat);
      reject(err);
    });
    server.listen(o.port ?? 8378, host, () => {
      const port = (server.address() as AddressInfo).port;
      const shown = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shown}:${port}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            clearInterval(poller);
            clearInterval(heartbeat);
            for (const c of clients) c.res.end();
            clients.clear();
            server.close(() => {
              for (const c of connections.values()) c.close();
              connections.clear();
              done();
            });
            server.closeAllConnections();
          }),
      });
    });
  });
}

/** The plots a transfer experiment writes (the only files of an experiment served besides its report). */
export const EXPERIMENT_PLOTS = ['learning-curve.svg', 'held-out.svg'] as const;

/** Largest experiment file read (bytes). */
const MAX_EXPERIMENT_FILE = 16 << 20;

/** A file's bytes, or null when it is missing or larger than MAX_EXPERIMENT_FILE. */
function readSmall(path: string): Buffer | null {
  try {
    if (statSync(path).size > MAX_EXPERIMENT_FILE) return null;
    return readFileSync(path);
  } catch {
    return null;
  }
}

/** A transfer experiment's report: its markdown, its result (transfer.json) and which plots exist. */
function readExperiment(dir: string): { markdown: string | null; result: unknown; plots: string[] } {
  const md = readSmall(join(dir, 'transfer.md'));
  const json = readSmall(join(dir, EXPERIMENT_FILE));
  let result: unknown = null;
  try {
    result = json ? JSON.parse(json.toString('utf8')) : null;
  } catch {
    result = null; // being written: the next read has it
  }
  return { markdown: md ? md.toString('utf8') : null, result, plots: EXPERIMENT_PLOTS.filter((p) => existsSync(join(dir, p))) };
}

/** A cookie's value from the request, or null. */
function cookieOf(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) {
      try {
        return decodeURIComponent(part.slice(i + 1).trim());
      } catch {
        return null;
      }
    }
  }
  return null;
}
