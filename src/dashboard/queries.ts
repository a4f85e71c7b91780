/**
 * What the dashboard reads from a run's store, as plain JSON values: a run's summary, its
 * per-iteration and per-task figures, its jobs (filtered), one job in full. Read-only SQL over a
 * connection from catalog.ts; aggregates are computed by SQLite so a page of a large run stays cheap.
 */
import type Database from 'better-sqlite3';

/** A run as the runs list shows it. */
export interface RunSummary {
  id: string;
  status: string;
  createdAt: string;
  finishedAt: string | null;
  agent: string;
  tasks: string[];
  mode: 'train' | 'serve';
  iterations: number | null;
  jobs: number;
  pending: number;
  failed: number;
  invalid: number;
  bestNormalized: number | null;
  envSteps: number;
  examples: number;
  cpuSeconds: number;
}

/** Figures of one iteration (all tasks, or one task). */
export interface IterationFigures {
  iteration: number;
  task?: string;
  jobs: number;
  pending: number;
  failed: number;
  invalid: number;
  meanReward: number | null;
  meanNormalized: number | null;
  bestNormalized: number | null;
  envSteps: number;
  examples: number;
  cpuSeconds: number;
  wallSeconds: number;
  /** When the last of its jobs finished (ISO time), null while none has. */
  lastFinishedAt: string | null;
}

/** A run's page. */
export interface RunDetail {
  summary: RunSummary;
  config: unknown;
  iterations: (IterationFigures & {
    status: string | null;
    entropy: number | null;
    /** Decisions per proposal (the controller's choices in its trace), null for agents without them. */
    decisions: number | null;
    updateStats: Record<string, number> | null;
  })[];
  perTask: IterationFigures[];
  baselines: { task: string; jobId: number; status: string; normalized: number | null; stderr: number | null }[];
  best: { task: string; jobId: number; iteration: number; normalized: number; stderr: number | null }[];
  /** Successive halving (`--fidelity asha`): per iteration, task and rung, jobs trained and promoted to the next rung. */
  promotions: { iteration: number; task: string; rung: number; share: number | null; trained: number; promoted: number; best: number | null }[];
}

/** A row of the jobs table. */
export interface JobListRow {
  id: number;
  /** The job's round (store column `round`): its iteration, or in a run of `rrl serve` its request; named as the page's API names it. */
  iteration: number;
  slot: number;
  task: string;
  kind: string;
  status: string;
  failureKind: string | null;
  error: string | null;
  raw: number | null;
  normalized: number | null;
  stderr: number | null;
  reward: number | null;
  envSteps: number | null;
  examples: number | null;
  cpuSeconds: number | null;
  wallSeconds: number | null;
  cacheHit: string | null;
}

/** Filters of the jobs table. */
export interface JobFilter {
  task?: string;
  status?: string;
  iteration?: number;
  kind?: string;
}

/** The statuses a job can have (the jobs filter accepts only these). */
export const JOB_STATUSES = ['pending', 'succeeded', 'failed', 'invalid'] as const;

/** Most rows the jobs table returns at once. */
export const MAX_JOB_ROWS = 5000;

/** Most points per curve series sent to the page (longer curves are thinned evenly). */
export const MAX_CURVE_POINTS = 2000;

/** A job in full. */
export interface JobDetail {
  job: JobListRow & { runId: string; agent: string; artifactDir: string | null; finishedAt: string | null; advantage: number | null; groupId: string | null };
  spec: unknown;
  /** The JSON merge patch over the baseline spec the spec was written as (outer/answer.ts); null for a full spec. */
  patch: unknown;
  trace: unknown;
  rewardDetail: unknown;
  /** The task's baseline job in this run, and the best-scoring job on the task before this one. */
  baseline: { id: number; spec: unknown; normalized: number | null } | null;
  bestBefore: { id: number; spec: unknown; normalized: number | null; stderr: number | null } | null;
  /** Paths (`algorithm.learningRate`, `model.hidden[1]`) where the spec differs from each. */
  diff: { baseline: string[]; best: string[] };
  curves: Record<string, { step: number[]; value: number[] }>;
  /** For LLM proposals: the messages sent and the reply. */
  llm: { model: string | null; messages: { role: string; content: string }[]; completion: string | null } | null;
}

/** True when an error only means the writer has not created the tables yet. */
export const notYet = (err: unknown): boolean => /no such table/i.test(String((err as Error)?.message));

/** Column expressions that stores written by older versions lack. */
interface Columns {
  stderr: string;
  groupId: string;
  rung: boolean;
  patch: string;
  cacheOrigin: string;
  /** The column of a job's round (`iteration` in stores before it was renamed; the dashboard never migrates). */
  round: 'round' | 'iteration';
}

const columnsCache = new WeakMap<Database.Database, Columns>();

/** Column expressions that stores written by older versions lack. */
function cols(db: Database.Database): Columns {
  let c = columnsCache.get(db);
  if (!c) {
    const has = (table: string, column: string): boolean =>
      (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).some((r) => r.name === column);
    c = {
      stderr: has('scores', 'stderr') ? 's.stderr' : 'NULL',
      groupId: has('rewards', 'group_id') ? 'r.group_id' : 'NULL',
      rung: has('jobs', 'rung'),
      patch: has('jobs', 'patch') ? 'j.patch' : 'NULL',
      cacheOrigin: has('jobs', 'cache_origin') ? 'j.cache_origin' : 'NULL',
      round: has('jobs', 'round') ? 'round' : 'iteration',
    };
    // An old store may be migrated while it is watched: its columns are looked up again until then.
    if (c.round === 'round') columnsCache.set(db, c);
  }
  return c;
}

const parse = (text: string | null): unknown => {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** The change counter of the database as this connection sees it: it moves when another connection commits. */
export function dataVersion(db: Database.Database): number {
  return db.pragma('data_version', { simple: true }) as number;
}

/** The run's summary; null while the store has no run yet. */
export function runSummary(db: Database.Database): RunSummary | null {
  try {
    const run = db.prepare('SELECT id, config, status, created_at AS createdAt, finished_at AS finishedAt FROM runs LIMIT 1').get() as
      | { id: string; config: string; status: string; createdAt: string; finishedAt: string | null }
      | undefined;
    if (!run) return null;
    const config = (parse(run.config) ?? {}) as { mode?: string; agent?: string; tasks?: string[]; iterations?: number };
    const a = db
      .prepare(
        `SELECT count(*) AS jobs, coalesce(sum(j.status = 'pending'), 0) AS pending, coalesce(sum(j.status = 'failed'), 0) AS failed,
                coalesce(sum(j.status = 'invalid'), 0) AS invalid, max(s.normalized) AS bestNormalized,
                coalesce(sum(j.env_steps), 0) AS envSteps, coalesce(sum(j.examples), 0) AS examples, coalesce(sum(j.cpu_seconds), 0) AS cpuSeconds
           FROM jobs j LEFT JOIN scores s ON s.job_id = j.id WHERE j.kind = 'proposal'`,
      )
      .get() as Omit<RunSummary, 'id' | 'status' | 'createdAt' | 'finishedAt' | 'agent' | 'tasks' | 'mode' | 'iterations'>;
    const serve = config.mode === 'serve';
    const tasks = serve ? (db.prepare('SELECT DISTINCT task FROM jobs ORDER BY task').all() as { task: string }[]).map((r) => r.task) : (config.tasks ?? []);
    return {
      id: run.id,
      status: run.status,
      createdAt: run.createdAt,
      finishedAt: run.finishedAt,
      agent: serve ? 'external (rrl serve)' : (config.agent ?? 'unknown'),
      tasks,
      mode: serve ? 'serve' : 'train',
      iterations: serve ? null : (config.iterations ?? null),
      ...a,
    };
  } catch (err) {
    if (notYet(err)) return null;
    throw err;
  }
}

const FIGURES = `count(*) AS jobs, coalesce(sum(j.status = 'pending'), 0) AS pending, coalesce(sum(j.status = 'failed'), 0) AS failed,
  coalesce(sum(j.status = 'invalid'), 0) AS invalid, avg(r.reward) AS meanReward, avg(s.normalized) AS meanNormalized,
  max(s.normalized) AS bestNormalized, coalesce(sum(j.env_steps), 0) AS envSteps, coalesce(sum(j.examples), 0) AS examples,
  coalesce(sum(j.cpu_seconds), 0) AS cpuSeconds, coalesce(sum(j.wall_seconds), 0) AS wallSeconds, max(j.finished_at) AS lastFinishedAt`;
const FROM = `FROM jobs j LEFT JOIN scores s ON s.job_id = j.id LEFT JOIN rewards r ON r.job_id = j.id WHERE j.kind = 'proposal'`;

/** Everything the run page draws; null while the store has no run yet. */
export function runDetail(db: Database.Database): RunDetail | null {
  const summary = runSummary(db);
  if (!summary) return null;
  const { stderr, rung, round } = cols(db);
  const config = parse((db.prepare('SELECT config FROM runs LIMIT 1').get() as { config: string }).config);
  const perIteration = db.prepare(`SELECT j.${round} AS iteration, ${FIGURES} ${FROM} GROUP BY j.${round} ORDER BY j.${round}`).all() as IterationFigures[];
  const stored = new Map(
    (
      db.prepare('SELECT idx, status, update_stats AS updateStats FROM iterations ORDER BY idx').all() as {
        idx: number;
        status: string;
        updateStats: string | null;
      }[]
    ).map((r) => [r.idx, r]),
  );
  // The controller's trace lists its choices: the decisions its entropy is summed over.
  const decisions = new Map(
    (
      db
        .prepare(
          `SELECT ${round} AS iteration, avg(json_array_length(trace, '$.choice')) AS n FROM jobs
            WHERE kind = 'proposal' AND json_valid(trace) AND json_type(trace, '$.choice') = 'array' GROUP BY ${round}`,
        )
        .all() as { iteration: number; n: number | null }[]
    ).map((r) => [r.iteration, r.n]),
  );
  const iterations = perIteration.map((f) => {
    const it = stored.get(f.iteration);
    const stats = it ? (parse(it.updateStats) as Record<string, number> | null) : null;
    const entropy = stats && typeof stats['agent/entropy'] === 'number' ? stats['agent/entropy'] : null;
    return { ...f, status: it?.status ?? null, entropy, decisions: decisions.get(f.iteration) ?? null, updateStats: stats };
  });
  const perTask = db
    .prepare(`SELECT j.${round} AS iteration, j.task, ${FIGURES} ${FROM} GROUP BY j.${round}, j.task ORDER BY j.${round}, j.task`)
    .all() as IterationFigures[];
  const baselines = db
    .prepare(
      `SELECT j.task, j.id AS jobId, j.status, s.normalized, ${stderr} AS stderr
         FROM jobs j LEFT JOIN scores s ON s.job_id = j.id WHERE j.kind = 'baseline' ORDER BY j.task`,
    )
    .all() as RunDetail['baselines'];
  const best = db
    .prepare(
      // SQLite takes the bare columns from the row where max() is found.
      `SELECT j.task, j.id AS jobId, j.${round} AS iteration, max(s.normalized) AS normalized, ${stderr} AS stderr
         FROM jobs j JOIN scores s ON s.job_id = j.id
        WHERE j.kind = 'proposal' GROUP BY j.task ORDER BY j.task`,
    )
    .all() as RunDetail['best'];
  // A rung job is promoted when its proposal has a job at a higher rung (the next one, or the one after a rung skipped
  // for having one entrant; stores before fidelity have no rung column).
  const promotions = rung
    ? (db
        .prepare(
          `SELECT a.${round} AS iteration, a.task, a.rung, max(a.share) AS share, count(*) AS trained, max(s.normalized) AS best,
                  sum(EXISTS (SELECT 1 FROM jobs b WHERE b.kind = 'rung' AND b.parent_id = a.parent_id AND b.rung > a.rung)) AS promoted
             FROM jobs a LEFT JOIN scores s ON s.job_id = a.id WHERE a.kind = 'rung'
            GROUP BY a.${round}, a.task, a.rung ORDER BY a.${round}, a.task, a.rung`,
        )
        .all() as RunDetail['promotions'])
    : [];
  return { summary, config, iterations, perTask, baselines, best, promotions };
}

/**
 * The columns of a jobs-table row. A reuse is shown only for an agent's job whose result an
 * agent's job had before (store/cache.ts): a hit on a harness seed's result would name that seed.
 */
const LIST_COLUMNS = ({
  stderr,
  cacheOrigin,
  round,
}: Columns): string => `j.id, j.${round} AS iteration, j.slot, j.task, j.kind, j.status, j.failure_kind AS failureKind, j.error,
  s.raw, s.normalized, ${stderr} AS stderr, r.reward, j.env_steps AS envSteps, j.examples, j.cpu_seconds AS cpuSeconds,
  j.wall_seconds AS wallSeconds, CASE WHEN j.kind IN ('proposal', 'rung') AND ${cacheOrigin} = 'proposal' THEN j.cache_hit END AS cacheHit`;

/** The kinds of job the harness trains on its own secret seeds. */
const HARNESS_KINDS = new Set(['baseline', 'confirm']);

/** What the dashboard shows of a spec: a harness job's seed (one of the harness's secret seeds) as "harness". */
export function shownSpec(kind: string, spec: unknown): unknown {
  if (!HARNESS_KINDS.has(kind) || typeof spec !== 'object' || spec === null || Array.isArray(spec) || !('seed' in spec)) return spec;
  return { ...spec, seed: 'harness' };
}

/** The jobs table, filtered, in id order (at most MAX_JOB_ROWS rows), with the values its filters can take. */
export function jobList(
  db: Database.Database,
  f: JobFilter = {},
): { rows: JobListRow[]; truncated: boolean; options: { tasks: string[]; statuses: string[]; iterations: number[] } } {
  try {
    const c = cols(db);
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (f.task !== undefined) {
      where.push('j.task = ?');
      args.push(f.task);
    }
    if (f.status !== undefined) {
      where.push('j.status = ?');
      args.push(f.status);
    }
    if (f.iteration !== undefined) {
      where.push(`j.${c.round} = ?`);
      args.push(f.iteration);
    }
    if (f.kind !== undefined) {
      where.push('j.kind = ?');
      args.push(f.kind);
    }
    const rows = db
      .prepare(
        `SELECT ${LIST_COLUMNS(c)} FROM jobs j LEFT JOIN scores s ON s.job_id = j.id LEFT JOIN rewards r ON r.job_id = j.id
          ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY j.id LIMIT ${MAX_JOB_ROWS + 1}`,
      )
      .all(...args) as JobListRow[];
    const truncated = rows.length > MAX_JOB_ROWS;
    for (const r of rows) if (r.error && r.error.length > 300) r.error = `${r.error.slice(0, 299)}…`;
    const options = {
      tasks: (db.prepare('SELECT DISTINCT task FROM jobs ORDER BY task').all() as { task: string }[]).map((r) => r.task),
      statuses: (db.prepare('SELECT DISTINCT status FROM jobs ORDER BY status').all() as { status: string }[]).map((r) => r.status),
      iterations: (db.prepare(`SELECT DISTINCT ${c.round} AS iteration FROM jobs WHERE kind = 'proposal' ORDER BY 1`).all() as { iteration: number }[]).map(
        (r) => r.iteration,
      ),
    };
    return { rows: truncated ? rows.slice(0, MAX_JOB_ROWS) : rows, truncated, options };
  } catch (err) {
    if (notYet(err)) return { rows: [], truncated: false, options: { tasks: [], statuses: [], iterations: [] } };
    throw err;
  }
}

/** The leaf paths where two JSON values differ (`a.b[2]`); a value present on one side only counts. */
export function diffPaths(a: unknown, b: unknown, path = ''): string[] {
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.every((v) => typeof v !== 'object' || v === null) && b.every((v) => typeof v !== 'object' || v === null)) {
      return JSON.stringify(a) === JSON.stringify(b) ? [] : [path];
    }
    const out: string[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) out.push(...diffPaths(a[i], b[i], `${path}[${i}]`));
    return out;
  }
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    return keys.flatMap((k) => diffPaths(a[k], b[k], path ? `${path}.${k}` : k));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [path];
}

/** Evenly thinned to at most `max` points, always keeping the last. */
function thin<T>(points: T[], max: number): T[] {
  if (points.length <= max) return points;
  const out: T[] = [];
  const stride = points.length / max;
  for (let i = 0; i < max - 1; i++) out.push(points[Math.floor(i * stride)]);
  out.push(points[points.length - 1]);
  return out;
}

/** One job in full, with what its spec is compared to; null when there is no such job. */
export function jobDetail(db: Database.Database, id: number): JobDetail | null {
  try {
    const c = cols(db);
    const { stderr, groupId, patch: patchColumn } = c;
    const row = db
      .prepare(
        `SELECT ${LIST_COLUMNS(c)}, j.run_id AS runId, j.agent, j.artifact_dir AS artifactDir, j.finished_at AS finishedAt,
                j.spec, j.trace, ${patchColumn} AS patch,
                r.advantage, ${groupId} AS groupId, r.detail AS rewardDetail
           FROM jobs j LEFT JOIN scores s ON s.job_id = j.id LEFT JOIN rewards r ON r.job_id = j.id WHERE j.id = ?`,
      )
      .get(id) as (JobDetail['job'] & { spec: string; trace: string | null; patch: string | null; rewardDetail: string | null }) | undefined;
    if (!row) return null;
    const { spec: specText, trace: traceText, patch: patchText, rewardDetail, ...job } = row;
    const spec = shownSpec(job.kind, parse(specText));
    const trace = parse(traceText);
    const base = db
      .prepare(
        "SELECT j.id, j.spec, s.normalized FROM jobs j LEFT JOIN scores s ON s.job_id = j.id WHERE j.kind = 'baseline' AND j.task = ? ORDER BY j.id LIMIT 1",
      )
      .get(job.task) as { id: number; spec: string; normalized: number | null } | undefined;
    const best = db
      .prepare(
        `SELECT j.id, j.spec, s.normalized, ${stderr} AS stderr FROM jobs j JOIN scores s ON s.job_id = j.id
          WHERE j.task = ? AND j.id != ? AND j.kind = 'proposal' AND (j.${c.round} < ? OR (j.${c.round} = ? AND j.id < ?))
          ORDER BY s.normalized DESC, j.id LIMIT 1`,
      )
      .get(job.task, id, job.iteration, job.iteration, id) as { id: number; spec: string; normalized: number | null; stderr: number | null } | undefined;
    const baseline = base && base.id !== id ? { id: base.id, spec: shownSpec('baseline', parse(base.spec)), normalized: base.normalized } : null;
    const bestBefore = best ? { id: best.id, spec: parse(best.spec), normalized: best.normalized, stderr: best.stderr } : null;
    const points = db.prepare('SELECT name, step, value FROM curves WHERE job_id = ? ORDER BY name, step').all(id) as {
      name: string;
      step: number;
      value: number;
    }[];
    const byName = new Map<string, { step: number; value: number }[]>();
    for (const p of points) {
      const list = byName.get(p.name) ?? [];
      list.push(p);
      byName.set(p.name, list);
    }
    const curves: JobDetail['curves'] = {};
    for (const [name, list] of byName) {
      const t = thin(list, MAX_CURVE_POINTS);
      curves[name] = { step: t.map((p) => p.step), value: t.map((p) => p.value) };
    }
    const tr = trace as { kind?: unknown; messages?: unknown; completion?: unknown; model?: unknown; adapter?: unknown } | null;
    const llm =
      tr && typeof tr === 'object' && tr.kind === 'llm' && Array.isArray(tr.messages)
        ? {
            model: typeof tr.adapter === 'string' ? tr.adapter : typeof tr.model === 'string' ? tr.model : null,
            messages: (tr.messages as { role?: unknown; content?: unknown }[]).map((m) => ({ role: String(m?.role ?? ''), content: String(m?.content ?? '') })),
            completion: typeof tr.completion === 'string' ? tr.completion : null,
          }
        : null;
    return {
      job,
      spec,
      patch: parse(patchText),
      trace,
      rewardDetail: parse(rewardDetail),
      baseline,
      bestBefore,
      diff: { baseline: baseline ? diffPaths(spec, baseline.spec) : [], best: bestBefore ? diffPaths(spec, bestBefore.spec) : [] },
      curves,
      llm,
    };
  } catch (err) {
    if (notYet(err)) return null;
    throw err;
  }
}
