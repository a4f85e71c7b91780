/**
 * Optuna's samplers (the real library: TPE and CMA-ES) as agents over the same design space as
 * the controller and the searches, by ask and tell. A small Python process
 * (`python -m rrl_client.optuna_driver`, its protocol in python/rrl_client/optuna_driver.py) holds
 * one study per task; this agent sends it the task's parameters (`searchParams` of the brief's
 * heads), asks it for a point per proposal, turns the point into one option per head and the spec
 * `decode` writes for them (as the random and model-based searches do), and in `update` tells the
 * study each proposal's outer reward (a job that did not succeed: a failed trial).
 *
 * Seeded, the study's first trial is enqueued at the task's baseline spec (its nearest point in
 * the space, `nearestChoice`) and that proposal is the baseline spec itself, reseeded; the study
 * is told its reward at that point.
 *
 * The driver is this agent's, one process for its life (`close` ends it). Nothing it does stops a
 * run: a driver that cannot start, crashes, writes a line that is not the protocol's or does not
 * answer within the timeout is ended, the proposal it owed fails with a one-line reason (an
 * `agent-error` job), and the next proposal starts a new driver that is given the studies'
 * history again; after `MAX_STARTS` starts the agent gives up and every later proposal fails
 * at once with the last reason. A tell that fails is counted in the update's stats; the history
 * keeps it for the next driver.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import type { Socket } from 'node:net';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TaskBrief } from '../../spec/brief.js';
import { oneLine } from '../../spec/bounds.js';
import { bridgePython } from '../../inner/envs/gym-bridge.js';
import { jobEnvironment } from '../../inner/job-env.js';
import { getPublicTask } from '../../tasks/briefs.js';
import { mixSeed } from '../../util/rng.js';
import { type SearchParam, buildHeads, choicePoint, decode, nearestChoice, pointChoice, searchParams } from './space.js';
import type { Agent, Proposal, ProposalContext, RewardGroup, UpdateStats } from './types.js';

const PROJECT_DIR = resolve(fileURLToPath(new URL('../../../..', import.meta.url)));

/** The samplers the driver offers. */
export const OPTUNA_SAMPLERS = ['tpe', 'cmaes'] as const;
export type OptunaSampler = (typeof OPTUNA_SAMPLERS)[number];

/** How many drivers one agent starts before it gives up. */
export const MAX_STARTS = 3;

/** Settings of an Optuna agent. */
export interface OptunaOptions {
  sampler: OptunaSampler;
  /** Enqueue the task's baseline as each study's first trial. */
  seeded?: boolean;
  /** Seeds each task's study (mixed with the task's id). */
  seed: number;
  /** The Python with optuna and cmaes (default: `RRL_PYTHON`, else the repository's .venv, else python3). */
  python?: string;
  /** How long the driver may take to start or to answer one request (default 120 s). */
  timeoutMs?: number;
}

/** One trial the study has been told of: its point and the reward (null: a failed trial). */
interface Told {
  point: Record<string, unknown>;
  value: number | null;
}

/** What an Optuna proposal's trace holds. */
export interface OptunaTrace {
  sampler: OptunaSampler;
  /** The driver that asked the trial (a later driver is told of it by its point). */
  session: string;
  trial: number;
  point: Record<string, unknown>;
  choice: number[];
  /** The seeded study's first trial: the baseline spec itself. */
  baseline?: true;
}

function isTrace(t: unknown): t is OptunaTrace {
  const x = t as OptunaTrace | null;
  return x !== null && typeof x === 'object' && typeof x.session === 'string' && typeof x.trial === 'number' && x.point !== null && typeof x.point === 'object';
}

/** The environment of the driver: this process's without secrets, the repository's python/ on the path, one thread. */
function driverEnv(): Record<string, string> {
  const env = jobEnvironment();
  env.PYTHONPATH = [join(PROJECT_DIR, 'python'), env.PYTHONPATH].filter(Boolean).join(delimiter);
  env.PYTHONUNBUFFERED = '1';
  env.OMP_NUM_THREADS ??= '1';
  return env;
}

/**
 * Why `python` cannot run the driver, in one line naming python/setup-venv.sh; null when it can
 * (the driver started and said it is ready). Asked once per interpreter and process.
 */
const missingChecked = new Map<string, string | null>();
export function optunaMissing(python = bridgePython()): string | null {
  if (missingChecked.has(python)) return missingChecked.get(python) ?? null;
  const r = spawnSync(python, ['-m', 'rrl_client.optuna_driver'], { input: '', encoding: 'utf8', env: driverEnv(), cwd: PROJECT_DIR, timeout: 120_000 });
  let why: string | null = null;
  if (r.error) why = `cannot run ${python} (${(r.error as NodeJS.ErrnoException).code ?? r.error.message})`;
  else {
    let hello: { ready?: unknown; error?: unknown } | null = null;
    try {
      hello = JSON.parse((r.stdout ?? '').split('\n')[0] ?? '');
    } catch {}
    if (hello?.ready !== true) {
      const said = typeof hello?.error === 'string' ? hello.error : ((r.stderr ?? '').trim().split('\n').pop() ?? `exit ${r.status}`);
      why = `${python} cannot run the Optuna driver (${said})`;
    }
  }
  const reason = why && oneLine(`${why}; run python/setup-venv.sh to install optuna and cmaes`);
  missingChecked.set(python, reason);
  return reason;
}

let sessions = 0;

/** One driver process and its requests, one JSON line each way. */
class Driver {
  readonly session = `${process.pid}-${Date.now().toString(36)}-${++sessions}`;
  /** Why the driver is no longer usable; null while it is. */
  dead: string | null = null;
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = '';
  private stderr = '';
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  private onReady: ((err: Error | null) => void) | null = null;
  private timer: NodeJS.Timeout | null = null;

  private constructor(
    python: string,
    private readonly timeoutMs: number,
  ) {
    this.child = spawn(python, ['-m', 'rrl_client.optuna_driver'], { env: driverEnv(), cwd: PROJECT_DIR, stdio: 'pipe' });
    this.child.on('error', (err) => this.die(`cannot run ${python} (${(err as NodeJS.ErrnoException).code ?? err.message})`));
    // On close, not exit: its last words on stderr are read by then.
    this.child.on('close', (code, signal) => {
      const last = this.stderr.trim().split('\n').pop();
      this.die(`the Optuna driver exited (${signal ?? `code ${code}`})${last ? `: ${last}` : ''}`);
    });
    this.child.stdin.on('error', () => {}); // a write to a dead driver: reported by its exit
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => this.read(chunk));
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-4000);
    });
    this.idle();
  }

  /** Starts a driver and waits for its ready line. */
  static async start(python: string, timeoutMs: number): Promise<Driver> {
    const d = new Driver(python, timeoutMs);
    await new Promise<void>((ok, fail) => {
      d.onReady = (err) => (err ? fail(err) : ok());
      d.arm('start');
    });
    return d;
  }

  /** Nothing pending: the driver does not keep this process alive. */
  private idle(): void {
    this.child.unref();
    for (const s of [this.child.stdin, this.child.stdout, this.child.stderr]) (s as unknown as Socket).unref?.();
  }

  /** Something pending: a timeout (which keeps the process alive until the answer comes). */
  private arm(what: string): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.die(`the Optuna driver did not answer ${what} within ${Math.round(this.timeoutMs / 1000)} s`), this.timeoutMs);
  }

  private read(chunk: string): void {
    this.buffer += chunk;
    if (this.buffer.length > 1_000_000) {
      this.die('the Optuna driver wrote a line over 1 MB');
      return;
    }
    for (let nl = this.buffer.indexOf('\n'); nl >= 0 && !this.dead; nl = this.buffer.indexOf('\n')) {
      const line = this.buffer.slice(0, nl).trim();
      this.buffer = this.buffer.slice(nl + 1);
      if (line) this.line(line);
    }
  }

  private line(line: string): void {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(line);
      if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) throw new Error('not an object');
    } catch {
      this.die(`the Optuna driver wrote a line that is not the protocol's: ${line.slice(0, 80)}`);
      return;
    }
    if (this.onReady) {
      const ready = this.onReady;
      this.onReady = null;
      if (this.timer) clearTimeout(this.timer);
      this.idle();
      if (msg.ready === true) {
        ready(null);
        return;
      }
      this.die(`the Optuna driver cannot start: ${typeof msg.error === 'string' ? msg.error : line.slice(0, 80)}`);
      ready(new Error(this.dead ?? 'the Optuna driver cannot start'));
      return;
    }
    const w = typeof msg.id === 'number' ? this.waiting.get(msg.id) : undefined;
    if (!w) {
      this.die(`the Optuna driver answered a request never made: ${line.slice(0, 80)}`);
      return;
    }
    this.waiting.delete(msg.id as number);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.waiting.size === 0) this.idle();
    if (msg.ok === true) w.resolve(msg);
    else w.reject(new Error(`the Optuna driver refused: ${typeof msg.error === 'string' ? msg.error : 'no reason given'}`));
  }

  /** Sends one request and waits for its answer; rejects with a one-line reason. */
  request(op: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.dead) return Promise.reject(new Error(this.dead));
    const id = this.nextId++;
    return new Promise((ok, fail) => {
      this.waiting.set(id, { resolve: ok, reject: fail });
      this.child.ref();
      this.arm(op);
      this.child.stdin.write(`${JSON.stringify({ id, op, ...body })}\n`);
    });
  }

  /** Marks the driver unusable with a reason, fails what waits on it, and ends the process. */
  die(reason: string): void {
    if (this.dead) return;
    this.dead = oneLine(reason);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const err = new Error(this.dead);
    this.onReady?.(err);
    this.onReady = null;
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    this.idle();
  }

  /** Ends the driver: end of input, then a kill if it lingers. */
  close(): void {
    if (this.dead) return;
    this.dead = 'the Optuna driver was closed';
    this.child.stdin.end();
    setTimeout(() => {
      if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    }, 2000).unref();
  }
}

/** A task's study as this agent keeps it: its parameters, what it was told, and which driver holds it. */
interface StudyState {
  params: SearchParam[];
  told: Told[];
  /** Trials asked over the study's life (the seeded baseline goes to the first). */
  asked: number;
  /** The driver session that holds the study (null: none yet). */
  session: string | null;
  /** Whether that session enqueued the baseline and its next ask is the baseline's trial. */
  enqueued: boolean;
}

/** Optuna's TPE or CMA-ES sampler as a trainer agent (see the file's comment). */
export class OptunaAgent implements Agent {
  readonly name: string;
  private readonly opts: Required<Omit<OptunaOptions, 'python'>> & { python: string };
  private driver: Driver | null = null;
  private starts = 0;
  private lastFailure: string | null = null;
  private readonly studies = new Map<string, StudyState>();
  /** The trials (session:number) whose rewards this agent has had. */
  private readonly seen = new Set<string>();

  constructor(options: OptunaOptions) {
    this.opts = { seeded: false, timeoutMs: 120_000, python: bridgePython(), ...options };
    this.name = `optuna-${this.opts.sampler}${this.opts.seeded ? '-seeded' : ''}`;
  }

  /** A live driver, started (again) when needed; throws the reason when none can be had. */
  private async live(): Promise<Driver> {
    if (this.driver && !this.driver.dead) return this.driver;
    if (this.driver?.dead) this.lastFailure = this.driver.dead;
    if (this.starts >= MAX_STARTS) throw new Error(`gave up on the Optuna driver after ${MAX_STARTS} starts; last: ${this.lastFailure ?? 'unknown'}`);
    this.starts += 1;
    this.driver = null;
    try {
      this.driver = await Driver.start(this.opts.python, this.opts.timeoutMs);
    } catch (err) {
      this.lastFailure = (err as Error).message;
      throw err;
    }
    return this.driver;
  }

  /** The task's study in the live driver: created, seeded and given its history when this driver does not hold it yet. */
  private async study(brief: TaskBrief): Promise<{ driver: Driver; study: StudyState }> {
    let s = this.studies.get(brief.id);
    if (!s) {
      s = { params: searchParams(buildHeads(brief)), told: [], asked: 0, session: null, enqueued: false };
      this.studies.set(brief.id, s);
    }
    const driver = await this.live();
    if (s.session !== driver.session) {
      const heads = buildHeads(brief);
      const enqueue = this.opts.seeded && s.asked === 0 ? choicePoint(heads, nearestChoice(brief, heads, getPublicTask(brief.id).baseline)) : null;
      const seed = mixSeed(this.opts.seed, ...Array.from(brief.id, (c) => c.codePointAt(0) ?? 0));
      await driver.request('init', { study: brief.id, sampler: this.opts.sampler, seed, space: s.params, enqueue });
      for (const t of s.told) await driver.request('add', { study: brief.id, params: t.point, value: t.value });
      s.session = driver.session;
      s.enqueued = enqueue !== null;
    }
    return { driver, study: s };
  }

  /** Asks the task's study for a point and writes its spec (seeded: the baseline spec for the first trial). */
  async propose(brief: TaskBrief, ctx: ProposalContext): Promise<Proposal> {
    try {
      const { driver, study } = await this.study(brief);
      const answer = await driver.request('ask', { study: brief.id });
      // The trial is asked (the enqueued baseline taken) whatever follows.
      const baseline = study.enqueued;
      study.enqueued = false;
      study.asked += 1;
      const heads = buildHeads(brief);
      if (typeof answer.trial !== 'number' || answer.params === null || typeof answer.params !== 'object') {
        throw new Error('the Optuna driver answered an ask without a trial and its params');
      }
      const point = answer.params as Record<string, unknown>;
      const choice = pointChoice(heads, point);
      const seed = ctx.rng.int(1_000_000);
      const spec = baseline ? { ...structuredClone(getPublicTask(brief.id).baseline), seed } : decode(brief, heads, choice, seed);
      const trace: OptunaTrace = {
        sampler: this.opts.sampler,
        session: driver.session,
        trial: answer.trial,
        point,
        choice,
        ...(baseline ? { baseline: true as const } : {}),
      };
      return { spec, trace };
    } catch (err) {
      throw new Error(oneLine(`optuna ${this.opts.sampler}: ${(err as Error).message}`));
    }
  }

  /** Tells each study its proposals' rewards (a job that did not succeed: a failed trial); never throws. */
  async update(groups: RewardGroup[]): Promise<UpdateStats> {
    let told = 0;
    let errors = 0;
    for (const g of groups) {
      const s = this.studies.get(g.brief.id);
      for (const item of g.items) {
        if (!isTrace(item.trace)) continue;
        const ok = (item.status === undefined || item.status === 'succeeded') && Number.isFinite(item.reward);
        const t: Told = { point: item.trace.point, value: ok ? item.reward : null };
        const key = `${item.trace.session}:${item.trace.trial}`;
        if (this.seen.has(key)) continue; // an update repeated in this process tells nothing twice
        this.seen.add(key);
        if (!s) {
          // A study this agent never asked (a run resumed into its update): the next driver is told of it.
          const params = searchParams(buildHeads(g.brief));
          this.studies.set(g.brief.id, { params, told: [t], asked: 1, session: null, enqueued: false });
          continue;
        }
        s.told.push(t);
        if (!s.session || !this.driver || this.driver.dead || this.driver.session !== s.session) continue; // the next driver replays it
        try {
          if (item.trace.session === s.session) await this.driver.request('tell', { study: g.brief.id, trial: item.trace.trial, value: t.value });
          else await this.driver.request('add', { study: g.brief.id, params: t.point, value: t.value });
          told += 1;
        } catch {
          errors += 1;
          // The driver no longer agrees with the history: the next proposal starts a fresh one and replays it.
          if (this.driver && !this.driver.dead) this.driver.die('the Optuna driver refused a tell; restarting it with the history');
        }
      }
    }
    return { optunaTold: told, optunaErrors: errors };
  }

  /** The studies' histories (a resumed run gives them to its new driver). */
  async state(): Promise<unknown> {
    return { studies: [...this.studies].map(([task, s]) => ({ task, told: s.told, asked: s.asked })) };
  }

  /** Restores `state()`'s histories; the next proposal's driver is told of them. */
  async load(state: unknown): Promise<void> {
    const list = (state as { studies?: unknown } | null)?.studies;
    if (!Array.isArray(list)) return;
    for (const x of list as { task?: unknown; told?: unknown; asked?: unknown }[]) {
      if (typeof x?.task !== 'string' || !Array.isArray(x.told)) continue;
      const told = (x.told as Told[]).filter((t) => t && typeof t.point === 'object' && t.point !== null && (t.value === null || Number.isFinite(t.value)));
      let params: SearchParam[];
      try {
        params = searchParams(buildHeads(getPublicTask(x.task).brief));
      } catch {
        continue; // a task no longer registered: its study is not needed
      }
      const asked = typeof x.asked === 'number' ? x.asked : told.length;
      this.studies.set(x.task, { params, told, asked, session: null, enqueued: false });
    }
  }

  /** Ends the driver. */
  async close(): Promise<void> {
    this.driver?.close();
    this.driver = null;
  }
}
