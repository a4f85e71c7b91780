/**
 * `rrl dashboard`: a read-only web UI over run stores, on the shared HTTP layer of serve/http.ts
 * (Hono under the front door). JSON under /api, the page (plain HTML and JavaScript, uPlot served
 * from its package) for every other route, and server-sent events at /api/events: the server
 * polls each watched store's `data_version` (a counter SQLite moves when another connection
 * commits) and tells the page which run changed.
 *
 * Only GET and HEAD are answered; a URL names runs by key and jobs by number, never by path.
 * Beyond loopback every request needs the bearer token (the header, or a cookie set by opening
 * the page once with `?token=TOKEN`). The front door (serve/front-door.ts) comes first: without a
 * token only a loopback Host is served, a foreign Origin is refused, connections and the time to
 * send a request are limited; event streams are capped too.
 */
import type { IncomingMessage } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { MiddlewareHandler } from 'hono';
import { oneLine } from '../spec/bounds.js';
import { bearerOf } from '../serve/auth.js';
import { type DoorLimits, StreamGate, createDoorServer } from '../serve/front-door.js';
import {
  HttpError,
  type HttpContext,
  type HttpEnv,
  type Listening,
  bearerToken,
  createApp,
  errorHeaders,
  frontDoor,
  jsonResponse,
  listen,
  methodOf,
  nodeListener,
  rawParam,
  refuseUnreadable,
  requireTokenBeyondLoopback,
} from '../serve/http.js';
import { EXPERIMENT_FILE, KEY_PATTERN, type RunCatalog } from './catalog.js';
import { LiveUpdates } from './live.js';
import { RunStores } from './run-stores.js';
import { JOB_STATUSES, type JobFilter, jobDetail, jobList, runDetail, runSummary } from './queries.js';

/** Where and how the dashboard listens (and the limits of its connections). */
export interface DashboardOptions extends DoorLimits {
  host?: string;
  port?: number;
  /** Bearer token every request must carry (null: none; loopback only). */
  token?: string | null;
  /** How often watched stores are polled for changes (ms). */
  pollMs?: number;
  /** Most event streams (/api/events) open at once; one past it is answered 503 (default 32). They do not count against `maxConnections`. */
  maxStreams?: number;
}

/** Default of the event-stream cap. */
export const DEFAULT_MAX_STREAMS = 32;

/** A running dashboard. */
export type RunningDashboard = Listening;

const COOKIE = 'rrl_dashboard_token';
const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));
const require = createRequire(import.meta.url);

/** A file of the page: its type and bytes. */
interface StaticFile {
  type: string;
  body: Buffer;
}

/** The page's files: a fixed list, read once; no URL maps to a file path. */
function staticFiles(): Map<string, StaticFile> {
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

/** Headers of every answer of the dashboard (an answer's own Content-Security-Policy wins). */
const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
};

/** Middleware: the security headers on every answer. */
const secured: MiddlewareHandler<HttpEnv> = async (c, next) => {
  await next();
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) if (!c.res.headers.has(name)) c.res.headers.set(name, value);
};

/** A JSON answer of the API (never cached). */
const apiJson = (body: unknown): Response => jsonResponse(body, 200, { 'cache-control': 'no-store' });

/** A file's answer (revalidated before reuse). */
const fileResponse = (file: StaticFile, headers: Record<string, string> = {}): Response =>
  new Response(file.body, { headers: { 'content-type': file.type, 'content-length': String(file.body.length), 'cache-control': 'no-cache', ...headers } });

/** A run key from a URL segment (as Hono decoded it; `encoded`: decoded here once more): 400 when malformed. */
function keyOf(text: string, encoded = false): string {
  let key = text;
  try {
    if (encoded) key = decodeURIComponent(text);
  } catch {
    throw new HttpError(400, 'run key: not valid percent-encoding');
  }
  if (!KEY_PATTERN.test(key) || key === '.' || key === '..') {
    throw new HttpError(400, `run key: expected letters, digits, ".", "_" or "-", got "${oneLine(key, 60)}"`);
  }
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
  for (const name of q.keys()) {
    if (!['task', 'status', 'iteration', 'kind'].includes(name)) {
      throw new HttpError(400, `unknown filter "${oneLine(name, 40)}"; use task, status, iteration or kind`);
    }
  }
  const task = q.get('task');
  if (task) {
    if (task.length > 200) throw new HttpError(400, 'task: longer than 200 characters');
    f.task = task;
  }
  const status = q.get('status');
  if (status) {
    if (!(JOB_STATUSES as readonly string[]).includes(status)) {
      throw new HttpError(400, `status: expected one of ${JOB_STATUSES.join(', ')}, got "${oneLine(status, 40)}"`);
    }
    f.status = status;
  }
  const iteration = q.get('iteration');
  if (iteration) f.iteration = intOf('iteration', iteration);
  const kind = q.get('kind');
  if (kind) {
    if (kind !== 'proposal' && kind !== 'baseline' && kind !== 'rung') {
      throw new HttpError(400, `kind: expected proposal, baseline or rung, got "${oneLine(kind, 40)}"`);
    }
    f.kind = kind;
  }
  return f;
}

/** An error's answer: JSON under /api/, else a line of text. */
function errorResponse(c: HttpContext, err: HttpError): Response {
  const message = oneLine(err.message, 300);
  const headers = errorHeaders(c, err);
  if ((c.env.incoming.url ?? '').startsWith('/api/')) return jsonResponse({ error: message }, err.status, { 'cache-control': 'no-store', ...headers });
  return new Response(`${err.status}: ${message}\n`, { status: err.status, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers } });
}

/** Middleware: GET and HEAD only (405); no `..`, backslash or NUL anywhere in the URL (400). */
const readOnly: MiddlewareHandler<HttpEnv> = async (c, next) => {
  const method = methodOf(c);
  if (method !== 'GET' && method !== 'HEAD') {
    throw new HttpError(405, `${method}: the dashboard is read-only (GET and HEAD only)`, undefined, { allow: 'GET, HEAD' });
  }
  const raw = c.env.incoming.url ?? '/';
  if (/(^|\/|%2f|\\|%5c)(\.|%2e){2}(\/|%2f|\\|%5c|\?|$)/i.test(raw) || /%00|\\|%5c/i.test(raw)) {
    throw new HttpError(400, 'the URL may not contain "..", backslashes or NUL: runs are named by key');
  }
  await next();
};

/** The pages of runs (a run, its jobs, a job), with or without a trailing slash. */
const RUN_PAGES = ['/runs/:key', '/runs/:key/jobs', '/runs/:key/jobs/:id'].flatMap((p) => [p, `${p}/`]);

/** The app the dashboard's routes are added to. */
type DashboardApp = ReturnType<typeof createApp>;

/** What the dashboard's routes share. */
interface DashboardParts {
  catalog: RunCatalog;
  stores: RunStores;
  live: LiveUpdates;
  gate: StreamGate;
  token: string | null;
  files: Map<string, StaticFile>;
}

/** The token a request carries: the header, else `?token=` (a page opened once with it), else the cookie. */
const tokenGiven = (c: HttpContext): string | null => bearerOf(c.env.incoming) ?? c.get('url').searchParams.get('token') ?? cookieOf(c.env.incoming, COOKIE);

/** Starts the dashboard over the runs in `catalog`; resolves once it listens. */
export function startDashboard(catalog: RunCatalog, o: DashboardOptions = {}): Promise<RunningDashboard> {
  const host = o.host ?? '127.0.0.1';
  const token = o.token ?? null;
  requireTokenBeyondLoopback(host, token);
  const stores = new RunStores(catalog);
  const live = new LiveUpdates(catalog, (key) => stores.db(key), o.pollMs ?? 500);
  // Every page's stream has one key: the dashboard caps them in all, apart from the connections.
  const maxStreams = o.maxStreams ?? DEFAULT_MAX_STREAMS;
  const gate = new StreamGate({ maxStreams, maxStreamsPerKey: maxStreams }, 'event streams');
  const parts: DashboardParts = { catalog, stores, live, gate, token, files: staticFiles() };

  const noRoute = (c: HttpContext): HttpError =>
    new HttpError(404, `${c.req.path.startsWith('/api/') ? 'no route GET' : 'no page'} ${oneLine(c.req.path, 100)}`);
  const app = createApp(errorResponse, noRoute);
  const tokenMessage = 'a token is required: Authorization: Bearer TOKEN, or open the page once with ?token=TOKEN';
  app.use(secured, frontDoor({ token: token !== null, listenHost: host }), readOnly, bearerToken(token, tokenMessage, tokenGiven), refuseUnreadable);
  addEventStream(app, parts);
  addExperimentApi(app, parts);
  addRunApi(app, parts);
  addPages(app, parts);

  const server = createDoorServer(o, (message) => ({ type: 'text/plain; charset=utf-8', text: `${message}\n` }), nodeListener(app), gate);
  return listen(server, host, o.port ?? 8378, {
    // Not listening (e.g. the port is taken): nothing may keep the process alive.
    onFail: () => live.close(),
    onClose: () => live.close(),
    afterClose: () => stores.close(),
  });
}

/** `/api/events`: the server-sent events of one run or of all, each stream held by the gate. */
function addEventStream(app: DashboardApp, { catalog, live, gate }: DashboardParts): void {
  app.get('/api/events', (c) => {
    const run = c.get('url').searchParams.get('run');
    if (run !== null) {
      const key = keyOf(run, true);
      if (!catalog.get(key)) throw new HttpError(404, `no run "${key}" here; see /api/runs`);
    }
    const head = methodOf(c) === 'HEAD';
    // Held until the stream's answer is written out or its connection is gone; a HEAD holds nothing.
    const ended = new Promise<void>((resolve) => {
      c.env.outgoing.once('finish', resolve);
      c.env.outgoing.once('close', resolve);
    });
    const refused = head ? gate.refusal('events') : gate.take('events', c.env.incoming.socket, ended);
    if (refused) throw new HttpError(refused.status, refused.message);
    return live.stream(run, head);
  });
}

/** `/api/experiments`: the list, one experiment and its plots. */
function addExperimentApi(app: DashboardApp, { catalog, stores }: DashboardParts): void {
  app.get('/api/experiments/:key/plots/:name', (c) => {
    const entry = stores.experimentOrThrow(keyOf(c.req.param('key')));
    const name = c.req.param('name');
    if (!(EXPERIMENT_PLOTS as readonly string[]).includes(name)) {
      throw new HttpError(404, `no plot "${oneLine(name, 60)}"; plots: ${EXPERIMENT_PLOTS.join(', ')}`);
    }
    const body = readSmall(join(entry.dir, name));
    if (!body) throw new HttpError(404, `experiment "${entry.key}" has no ${name}`);
    // An SVG is shown as an image; on its own it may run nothing.
    return fileResponse({ type: 'image/svg+xml', body }, { 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'" });
  });
  app.get('/api/experiments', () => {
    catalog.refresh();
    return apiJson(catalog.experiments().map(({ key, dir }) => ({ key, dir })));
  });
  app.get('/api/experiments/:key', (c) => {
    const entry = stores.experimentOrThrow(keyOf(c.req.param('key')));
    return apiJson({ key: entry.key, dir: entry.dir, ...readExperiment(entry.dir) });
  });
}

/** `/api/runs`: the list, one run, its jobs and one job. */
function addRunApi(app: DashboardApp, { catalog, stores }: DashboardParts): void {
  app.get('/api/runs', () =>
    apiJson(
      catalog.list().map(({ key, dir }) => {
        const c = stores.db(key);
        return { key, dir, summary: c ? runSummary(c) : null };
      }),
    ),
  );
  app.get('/api/runs/:key', (c) => {
    const key = keyOf(c.req.param('key'));
    const detail = runDetail(stores.dbOrThrow(key));
    if (!detail) throw new HttpError(404, `run "${key}" has no run recorded yet`);
    return apiJson({ key, ...detail });
  });
  app.get('/api/runs/:key/jobs', (c) => {
    const key = keyOf(c.req.param('key'));
    return apiJson({ key, ...jobList(stores.dbOrThrow(key), filterOf(c.get('url').searchParams)) });
  });
  app.get('/api/runs/:key/jobs/:id', (c) => {
    const key = keyOf(c.req.param('key'));
    const id = intOf('job id', rawParam(c, 'id'));
    const detail = jobDetail(stores.dbOrThrow(key), id);
    if (!detail) throw new HttpError(404, `run "${key}" has no job ${id}`);
    return apiJson({ key, ...detail });
  });
}

/** The static files and the one page, served for the root, a run's pages and an experiment's. */
function addPages(app: DashboardApp, { catalog, stores, token, files }: DashboardParts): void {
  for (const [path, file] of files) if (path !== '/index.html') app.get(path, () => fileResponse(file));
  // A page opened with ?token= stores the token in a cookie (EventSource cannot send headers).
  const page: MiddlewareHandler<HttpEnv> = async (c, next) => {
    const url = c.get('url');
    if (!token || !url.searchParams.has('token')) return next();
    const given = tokenGiven(c);
    url.searchParams.delete('token');
    const cookie = `${COOKIE}=${encodeURIComponent(given ?? '')}; HttpOnly; SameSite=Strict; Path=/`;
    return new Response(null, { status: 303, headers: { location: url.pathname + url.search, 'set-cookie': cookie } });
  };
  const index = (): Response => fileResponse(files.get('/index.html')!);
  app.get('/', page, index);
  app.on('GET', RUN_PAGES, page, (c) => {
    const key = keyOf(c.req.param('key') ?? '');
    if (!catalog.get(key)) catalog.refresh();
    if (!catalog.get(key)) throw new HttpError(404, `no run "${key}" here`);
    if (c.req.param('id') !== undefined) intOf('job id', rawParam(c, 'id'));
    return index();
  });
  app.on('GET', ['/experiments/:key', '/experiments/:key/'], page, (c) => {
    stores.experimentOrThrow(keyOf(c.req.param('key')));
    return index();
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
