/**
 * Gymnasium environments stepped in a Python bridge process (`python -m rrl_gym.bridge`, see
 * python/rrl_gym/bridge.py for the wire format), behind the same `VectorEnv` interface as the
 * simulators written here (`GymVecEnv`, gym-vector.ts), so that PPO, DQN, REINFORCE and ARS train
 * on them unchanged and the engine's wrappers still count every env step.
 *
 * The algorithms step synchronously, so the bridge is spoken to synchronously: the bridge's
 * stdin and stdout are two named pipes whose Node ends are ordinary blocking descriptors
 * (`writeSync` / `readSync`), one batch of actions per message, one batch of results back.
 * Nothing hangs: the bridge ends itself when a message takes longer than `stepTimeoutS` or no
 * message comes for `idleTimeoutS`, and a bridge that ends (crash, timeout, `python` missing)
 * is read as end of file here and reported in one line with the bridge's own last words.
 *
 * The Python is `RRL_PYTHON` when set, else the repository's `.venv/bin/python`, else
 * `python3`. Linux and macOS only (named pipes).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GymnasiumEnvironment } from '../../spec/brief.js';
import { jobProcessEnvironment } from '../job-env.js';
import { gymnasiumIdProblem, gymnasiumImportModule } from './gym-id.js';
import type { Space } from './types.js';

const PROJECT_DIR = resolve(fileURLToPath(new URL('../../../..', import.meta.url)));

/** A failure of the bridge (cannot start, unknown environment, crash, timeout), in one line. */
export class GymBridgeError extends Error {
  /** Builds the error. */
  constructor(message: string) {
    super(message);
    this.name = 'GymBridgeError';
  }
}

/** The Python that runs the bridge: `RRL_PYTHON`, else the repository's `.venv/bin/python`, else `python3`. */
export function bridgePython(): string {
  const explicit = process.env.RRL_PYTHON;
  if (explicit) return explicit;
  const venv = join(PROJECT_DIR, '.venv', 'bin', 'python');
  return existsSync(venv) ? venv : 'python3';
}

/** What the bridge says about its environments once they are made. */
export interface BridgeHello {
  observationSpace: Space;
  actionSpace: Space;
  /** Length of a flattened observation. */
  obsDim: number;
  /** Values per action: 1 for a discrete space, the box's length otherwise. */
  actionDim: number;
  maxEpisodeSteps: number | null;
  rewardThreshold: number | null;
  /** The Gymnasium version the bridge runs. */
  gymnasium: string;
}

/** How to start a bridge. */
export interface BridgeOptions {
  /** Gymnasium id, e.g. `CartPole-v1`. */
  envId: string;
  /** Whether `envId` may name a module to import (`module:Env-v0`); default false (see gym-id.ts). */
  allowImport?: boolean;
  /** Keyword arguments of `gymnasium.make`. */
  kwargs?: Record<string, unknown>;
  /** Environments stepped per message. */
  num: number;
  /** The first reset's seed of each environment (non-negative integers). */
  seeds: number[];
  /** Same-step autoreset (default); false: one episode per env, a finished env is not stepped again. */
  autoreset?: boolean;
  /** Seconds one message may take before the bridge ends itself (default 60; the first, which imports Gymnasium, gets 120 at least). */
  stepTimeoutS?: number;
  /** Seconds without a message before the bridge ends itself (default 600). */
  idleTimeoutS?: number;
}

const KIND_JSON = 0x4a;
const KIND_ACTIONS = 0x41;
const KIND_STEP = 0x53;

/** A space as the bridge describes it (an infinite bound comes as null). */
function spaceFromWire(s: unknown, role: string): Space {
  const w = s as { type?: unknown; n?: unknown; shape?: unknown; low?: unknown; high?: unknown } | null;
  if (w?.type === 'discrete' && Number.isInteger(w.n)) return { type: 'discrete', n: w.n as number };
  if (w?.type === 'box' && Array.isArray(w.shape) && Array.isArray(w.low) && Array.isArray(w.high)) {
    const bound = (v: unknown, inf: number): number => (typeof v === 'number' ? v : inf);
    return { type: 'box', shape: w.shape as number[], low: w.low.map((v) => bound(v, -Infinity)), high: w.high.map((v) => bound(v, Infinity)) };
  }
  throw new GymBridgeError(`gymnasium bridge: cannot read the ${role} space ${JSON.stringify(s)?.slice(0, 100)}`);
}

/**
 * One bridge process with `num` environments. `step` sends every env's action and returns when
 * all have stepped; `obs`, `finalObs`, `rewards`, `terminated` and `truncated` then hold the
 * result (same-step autoreset: `obs` after it, `finalObs` before it).
 */
export class GymBridge {
  readonly hello: BridgeHello;
  readonly num: number;
  readonly obsDim: number;
  readonly actionDim: number;
  /** Observations after autoreset (num × obsDim). */
  readonly obs: Float64Array;
  /** Observations that ended the last step, before autoreset (num × obsDim). */
  readonly finalObs: Float64Array;
  readonly rewards: Float64Array;
  readonly terminated: Uint8Array;
  readonly truncated: Uint8Array;
  private readonly envId: string;
  private readonly child: ChildProcess;
  private readonly out: number;
  private readonly in: number;
  private readonly errFile: string;
  private readonly dir: string;
  private readonly header = Buffer.alloc(4);
  /** Outgoing action frame: 3 bytes of padding, length, kind, then aligned float64 actions. */
  private readonly send: Buffer;
  private readonly sendActions: Float64Array;
  /** Incoming frame: 7 bytes of padding, the kind at 7, the body from 8 (aligned). */
  private recv: Buffer;
  private closed = false;

  /** Starts the bridge and makes its environments; throws a `GymBridgeError` in one line on any failure. */
  constructor(o: BridgeOptions) {
    this.envId = o.envId;
    this.num = o.num;
    if (!Number.isInteger(o.num) || o.num < 1) throw new GymBridgeError(`gymnasium bridge: num must be a positive integer, got ${o.num}`);
    if (o.seeds.length !== o.num) throw new GymBridgeError(`gymnasium bridge: ${o.seeds.length} seeds for ${o.num} environments`);
    // Gymnasium imports the module of a `module:Env-v0` id: only when the task allows it (gym-id.ts).
    if (o.allowImport !== true && gymnasiumImportModule(o.envId) !== null) {
      throw new GymBridgeError(`gymnasium bridge: ${gymnasiumIdProblem(o.envId, false, 'environment.allowImport')}`);
    }
    this.dir = mkdtempSync(join(tmpdir(), 'rrl-gym-'));
    const down = join(this.dir, 'down');
    const up = join(this.dir, 'up');
    this.errFile = join(this.dir, 'stderr');
    const toClose: number[] = [];
    try {
      execFileSync('mkfifo', ['-m', '600', down, up]);
      // Open both ends of each pipe without blocking (a read-write open never waits on Linux),
      // hand the bridge its ends, and keep ours: blocking descriptors for readSync / writeSync.
      const [downR, downW] = pipeEnds(down, toClose);
      const [upR, upW] = pipeEnds(up, toClose);
      const err = openSync(this.errFile, 'w');
      toClose.push(err);
      const python = bridgePython();
      const step = o.stepTimeoutS ?? 60;
      const env = jobProcessEnvironment(join(this.dir, 'home')); // a home of its own, removed with the pipes
      env.PYTHONPATH = [join(PROJECT_DIR, 'python'), env.PYTHONPATH].filter(Boolean).join(delimiter);
      env.PYTHONUNBUFFERED = '1';
      this.child = spawn(python, ['-m', 'rrl_gym.bridge', '--step-timeout', String(Math.max(step, 120)), '--idle-timeout', String(o.idleTimeoutS ?? 600)], {
        stdio: [downR, upW, err],
        env,
        cwd: PROJECT_DIR,
      });
      this.child.on('error', () => {}); // reported through end of file below
      this.child.unref();
      if (this.child.pid === undefined) {
        throw new GymBridgeError(`gymnasium bridge: cannot run ${python} (set RRL_PYTHON to a Python with gymnasium, or run python/setup-venv.sh)`);
      }
      for (const fd of [downR, upW, err]) {
        closeSync(fd);
        toClose.splice(toClose.indexOf(fd), 1);
      }
      this.out = downW;
      this.in = upR;
    } catch (e) {
      for (const fd of toClose) closeSync(fd);
      rmSync(this.dir, { recursive: true, force: true });
      throw e instanceof GymBridgeError ? e : new GymBridgeError(`gymnasium bridge: cannot start: ${(e as Error).message.split('\n')[0]}`);
    }
    this.recv = Buffer.alloc(8 + 4096);
    try {
      this.sendJson({
        op: 'make',
        env_id: o.envId,
        allow_import: o.allowImport === true,
        kwargs: o.kwargs ?? {},
        num_envs: o.num,
        seeds: o.seeds,
        autoreset: o.autoreset ?? true,
      });
      const hello = this.readJson();
      this.hello = {
        observationSpace: spaceFromWire(hello.observation_space, 'observation'),
        actionSpace: spaceFromWire(hello.action_space, 'action'),
        obsDim: Number(hello.obs_dim),
        actionDim: Number(hello.action_dim),
        maxEpisodeSteps: typeof hello.max_episode_steps === 'number' ? hello.max_episode_steps : null,
        rewardThreshold: typeof hello.reward_threshold === 'number' ? hello.reward_threshold : null,
        gymnasium: String(hello.gymnasium),
      };
    } catch (e) {
      this.close();
      throw e;
    }
    this.obsDim = this.hello.obsDim;
    this.actionDim = this.hello.actionDim;
    this.obs = new Float64Array(o.num * this.obsDim);
    this.finalObs = new Float64Array(o.num * this.obsDim);
    this.rewards = new Float64Array(o.num);
    this.terminated = new Uint8Array(o.num);
    this.truncated = new Uint8Array(o.num);
    const n = o.num * this.actionDim;
    this.send = Buffer.alloc(8 + n * 8);
    this.send.writeUInt32LE(1 + n * 8, 3);
    this.send[7] = KIND_ACTIONS;
    this.sendActions = new Float64Array(this.send.buffer, this.send.byteOffset + 8, n);
    try {
      this.readStep();
    } catch (e) {
      this.close();
      throw e;
    }
  }

  /** Steps every environment; `actions` holds `num × actionDim` values (discrete: the index). */
  step(actions: ArrayLike<number>): void {
    if (this.closed) throw new GymBridgeError(`gymnasium bridge (${this.envId}): stepped after close`);
    const n = this.sendActions.length;
    for (let k = 0; k < n; k++) this.sendActions[k] = actions[k];
    this.write(this.send.subarray(3));
    this.readStep();
  }

  /** Ends the bridge (it closes its environments and exits); safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      const body = Buffer.from(JSON.stringify({ op: 'close' }));
      const head = Buffer.alloc(5);
      head.writeUInt32LE(body.length + 1, 0);
      head[4] = KIND_JSON;
      writeSync(this.out, Buffer.concat([head, body]));
    } catch {
      // already gone
    }
    for (const fd of [this.out, this.in]) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private sendJson(msg: unknown): void {
    const body = Buffer.from(JSON.stringify(msg));
    const head = Buffer.alloc(5);
    head.writeUInt32LE(body.length + 1, 0);
    head[4] = KIND_JSON;
    this.write(Buffer.concat([head, body]));
  }

  private write(buf: Buffer): void {
    let off = 0;
    try {
      while (off < buf.length) off += writeSync(this.out, buf, off, buf.length - off);
    } catch (e) {
      // EPIPE: the bridge has ended (the same as reading its end of file, whichever comes first).
      const code = (e as NodeJS.ErrnoException).code;
      throw this.died(code === 'EPIPE' ? '' : `(${code ?? (e as Error).message})`);
    }
  }

  private readExactly(buf: Buffer, off: number, len: number): void {
    let got = 0;
    while (got < len) {
      let n: number;
      try {
        n = readSync(this.in, buf, off + got, len - got, null);
      } catch (e) {
        throw this.died(`(${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      }
      if (n === 0) throw this.died('');
      got += n;
    }
  }

  /** Reads one frame into `recv` (kind at 7, body from 8); returns the kind and the body's length. */
  private readFrame(): { kind: number; length: number } {
    this.readExactly(this.header, 0, 4);
    const length = this.header.readUInt32LE(0);
    if (length < 1 || length > 1 << 30) throw new GymBridgeError(`gymnasium bridge (${this.envId}): bad frame length ${length}`);
    if (this.recv.length < 7 + length) this.recv = Buffer.alloc(8 + length);
    this.readExactly(this.recv, 7, length);
    const kind = this.recv[7];
    if (kind === KIND_JSON) {
      const msg = JSON.parse(this.recv.toString('utf8', 8, 7 + length)) as { error?: unknown };
      if (typeof msg.error === 'string') throw new GymBridgeError(`gymnasium bridge (${this.envId}): ${msg.error}`);
    }
    return { kind, length: length - 1 };
  }

  private readJson(): Record<string, unknown> {
    const { kind, length } = this.readFrame();
    if (kind !== KIND_JSON) throw new GymBridgeError(`gymnasium bridge (${this.envId}): expected a JSON frame, got kind ${kind}`);
    return JSON.parse(this.recv.toString('utf8', 8, 8 + length)) as Record<string, unknown>;
  }

  private readStep(): void {
    const { kind, length } = this.readFrame();
    const { num, obsDim } = this;
    const expected = num * obsDim * 16 + num * 10;
    if (kind !== KIND_STEP || length !== expected) {
      throw new GymBridgeError(`gymnasium bridge (${this.envId}): expected a step frame of ${expected} bytes, got kind ${kind} of ${length}`);
    }
    const base = this.recv.byteOffset + 8;
    const b = this.recv.buffer;
    const od = num * obsDim;
    this.obs.set(new Float64Array(b, base, od));
    this.finalObs.set(new Float64Array(b, base + od * 8, od));
    this.rewards.set(new Float64Array(b, base + od * 16, num));
    this.terminated.set(new Uint8Array(b, base + od * 16 + num * 8, num));
    this.truncated.set(new Uint8Array(b, base + od * 16 + num * 9, num));
  }

  /** The error for a bridge that ended: its own last words from stderr. */
  private died(how: string): GymBridgeError {
    this.closed = true;
    for (const fd of [this.out, this.in]) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    }
    let words = '';
    try {
      words = lastWords(readFileSync(this.errFile, 'utf8'));
    } catch {
      // no stderr file
    }
    rmSync(this.dir, { recursive: true, force: true });
    const said = words || 'no output (is Python with gymnasium installed? set RRL_PYTHON or run python/setup-venv.sh)';
    return new GymBridgeError(`gymnasium bridge (${this.envId}) ended ${how}${how ? ' ' : ''}: ${said}`.replace(' :', ':'));
  }
}

/** Both ends of a named pipe as blocking descriptors, opened without waiting. */
function pipeEnds(path: string, toClose: number[]): [number, number] {
  const rw = openSync(path, constants.O_RDWR);
  toClose.push(rw);
  const w = openSync(path, constants.O_WRONLY);
  toClose.push(w);
  const r = openSync(path, constants.O_RDONLY);
  toClose.push(r);
  closeSync(rw);
  toClose.splice(toClose.indexOf(rw), 1);
  return [r, w];
}

/** The bridge's telling line: its own `rrl_gym.bridge:` message, else the last error line, else the last line. */
function lastWords(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const own = lines.findLast((l) => l.startsWith('rrl_gym.bridge: '));
  if (own) return own.slice('rrl_gym.bridge: '.length).slice(0, 300);
  const error = lines.findLast((l) => /^\w*(Error|Exception)\b/.test(l));
  return (error ?? lines.at(-1) ?? '').slice(0, 300);
}

/**
 * Makes one environment, reads what the bridge says about it and ends the bridge (when a control
 * task file loads); `allowImport` as in `BridgeOptions`.
 */
export function describeGymnasium(envId: string, kwargs: Record<string, unknown> = {}, o: { allowImport?: boolean } = {}): BridgeHello {
  const b = new GymBridge({ envId, allowImport: o.allowImport, kwargs, num: 1, seeds: [0] });
  b.close();
  return b.hello;
}

/** Checks that the bridge's environment is the one the brief declares; a one-line error otherwise. */
export function checkDeclared(g: GymnasiumEnvironment, hello: BridgeHello): void {
  const where = `gymnasium environment ${g.id}`;
  if (hello.obsDim !== g.obsDim) throw new GymBridgeError(`${where}: observes ${hello.obsDim} values, the task declares ${g.obsDim}`);
  const a = hello.actionSpace;
  const d = g.actionSpace;
  if (a.type !== d.type) throw new GymBridgeError(`${where}: action space is ${a.type}, the task declares ${d.type}`);
  if (a.type === 'discrete' && d.type === 'discrete' && a.n !== d.n) throw new GymBridgeError(`${where}: ${a.n} actions, the task declares ${d.n}`);
  if (a.type === 'box' && d.type === 'box' && a.low.length !== d.low.length) {
    throw new GymBridgeError(`${where}: actions of ${a.low.length} values, the task declares ${d.low.length}`);
  }
}
