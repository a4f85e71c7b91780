/**
 * `rrl serve` throughput and latency on tiny jobs (ARS, 500 env steps on cartpole-short), local
 * executor, every completion a distinct spec (no cache hit), the task's baseline trained first
 * (not counted). One server, one run, arm after arm:
 *
 * - `/v1/rewards`, groups of 8, 4 clients (the blocking call, as before);
 * - `/v1/jobs` + events, groups of 8, 4 clients (the asynchronous API);
 * - `/v1/rewards`, one completion per request, 8 clients (the shape of the adapters below);
 * - the adapters of the Python package, one job per episode, 8 clients (threads): TRL's
 *   `environment_factory` class, OpenEnv over WebSocket (its own server in between) and the
 *   verifiers environment's rubric. They need the Python environment (`python/setup-venv.sh`).
 *
 * For each: rewards per second, and the p50 / p99 time from a completion's submission to its reward.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { RewardService } from '../src/serve/service.js';
import { type RunningServer, startServer } from '../src/serve/server.js';
import { LocalExecutor } from '../src/run/local.js';
import { arsSpec } from '../src/testing/specs.js';
import { num, table } from '../src/cli/format.js';

const TASK = 'cartpole-short';
const ENV_STEPS = 500;
const JOBS_PER_ARM = 128;
const PYTHON = resolve('.venv/bin/python');
const PYTHON_ARMS = ['trl', 'openenv', 'verifiers'] as const;

/** One arm's figures. */
interface Arm {
  arm: string;
  rewards: number;
  seconds: number;
  rewardsPerSecond: number;
  p50: number;
  p99: number;
  skipped?: string;
}

/** The `q` quantile of `xs` (nearest rank). */
function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

function summary(arm: string, latencies: number[], seconds: number): Arm {
  return {
    arm,
    rewards: latencies.length,
    seconds,
    rewardsPerSecond: latencies.length / seconds,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
  };
}

/** `n` distinct tiny job texts, seeds from `from`. */
const specs = (from: number, n: number): string[] => Array.from({ length: n }, (_, i) => JSON.stringify(arsSpec(TASK, ENV_STEPS, from + i)));

/** Sends `texts` in groups of `group` with `clients` concurrent clients through `send`; each completion's latency is its group's. */
async function drive(
  texts: string[],
  group: number,
  clients: number,
  send: (batch: string[]) => Promise<void>,
): Promise<{ latencies: number[]; seconds: number }> {
  const batches = Array.from({ length: Math.ceil(texts.length / group) }, (_, i) => texts.slice(i * group, (i + 1) * group));
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let b = next++; b < batches.length; b = next++) {
        const t = performance.now();
        await send(batches[b]);
        const s = (performance.now() - t) / 1000;
        for (let k = 0; k < batches[b].length; k++) latencies.push(s);
      }
    }),
  );
  return { latencies, seconds: (performance.now() - t0) / 1000 };
}

async function postJson(url: string, body: unknown): Promise<Response> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${url}: HTTP ${res.status} ${await res.text()}`);
  return res;
}

/** The blocking call: one POST per group, answered with its rewards. */
const blocking = (server: RunningServer) => async (batch: string[]) => {
  await (await postJson(`${server.url}/v1/rewards`, { task: TASK, completions: batch })).json();
};

/** The asynchronous API: POST /v1/jobs, then the request's event stream to its `rewards` event. */
const asynchronous = (server: RunningServer) => async (batch: string[]) => {
  const { request } = (await (await postJson(`${server.url}/v1/jobs`, { task: TASK, completions: batch })).json()) as { request: number };
  const text = await (await fetch(`${server.url}/v1/requests/${request}/events`)).text();
  if (!/^event: rewards$/m.test(text)) throw new Error(`request ${request}: the stream ended without rewards`);
};

/** A Python adapter's arm (bench/serve/adapters.py), or why it was skipped. */
async function pythonArm(arm: (typeof PYTHON_ARMS)[number], url: string, texts: string[]): Promise<Arm> {
  const skipped = (why: string): Arm => ({ arm, rewards: 0, seconds: 0, rewardsPerSecond: 0, p50: 0, p99: 0, skipped: why });
  if (!existsSync(PYTHON)) return skipped('no .venv: run python/setup-venv.sh');
  const file = join(mkdtempSync(join(tmpdir(), 'rrl-bench-serve-')), 'specs.json');
  writeFileSync(file, JSON.stringify(texts));
  const child = spawn(PYTHON, ['bench/serve/adapters.py', '--url', url, '--task', TASK, '--specs', file, '--arm', arm, '--clients', '8'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, OMP_NUM_THREADS: '1', TRL_EXPERIMENTAL_SILENCE: '1' },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c));
  child.stderr.on('data', (c: Buffer) => (err += c));
  const code = await new Promise<number | null>((done) => child.once('close', done));
  const line = out.trim().split('\n').at(-1) ?? '';
  if (code !== 0 || !line.startsWith('{')) return skipped(`exit ${code}: ${err.trim().split('\n').at(-1) ?? ''}`.slice(0, 200));
  const r = JSON.parse(line) as { latencies: number[]; seconds: number };
  return summary(arm, r.latencies, r.seconds);
}

/** Runs every arm against one server; reports rewards/s and p50/p99 latency per arm. */
export async function serve(): Promise<Record<string, unknown>> {
  const executor = new LocalExecutor();
  const service = RewardService.open(
    mkdtempSync(join(tmpdir(), 'rrl-bench-serve-')),
    { mode: 'serve', seed: 0, reward: { rule: 'improvement', lambda: 0.5 } },
    executor,
    { maxQueue: 1024 },
  );
  const server = await startServer(service, { port: 0 });
  const arms: Arm[] = [];
  try {
    process.stderr.write('serve: the baseline job and a warm-up group\n');
    await blocking(server)(specs(1_000_000, 1));
    let seed = 1;
    const run = async (arm: string, group: number, clients: number, send: (batch: string[]) => Promise<void>): Promise<void> => {
      process.stderr.write(`serve: ${arm}\n`);
      const r = await drive(specs(seed, JOBS_PER_ARM), group, clients, send);
      seed += JOBS_PER_ARM;
      arms.push(summary(arm, r.latencies, r.seconds));
    };
    await run('/v1/rewards, groups of 8, 4 clients', 8, 4, blocking(server));
    await run('/v1/jobs + events, groups of 8, 4 clients', 8, 4, asynchronous(server));
    await run('/v1/rewards, 1 per request, 8 clients', 1, 8, blocking(server));
    await run('/v1/jobs + events, 1 per request, 8 clients', 1, 8, asynchronous(server));
    for (const arm of PYTHON_ARMS) {
      process.stderr.write(`serve: the ${arm} adapter\n`);
      arms.push(await pythonArm(arm, server.url, specs(seed, JOBS_PER_ARM)));
      seed += JOBS_PER_ARM;
    }
    console.log(
      table(
        ['arm (ARS, 500 env steps; ' + `${executor.slots} workers)`, 'rewards/s', 'p50 s', 'p99 s', 'rewards / s'],
        arms.map((a) =>
          a.skipped
            ? [a.arm, 'skipped', a.skipped, '', '']
            : [a.arm, num(a.rewardsPerSecond, 1), num(a.p50, 2), num(a.p99, 2), `${a.rewards} / ${num(a.seconds, 1)}`],
        ),
      ),
    );
    return { task: TASK, envStepsPerJob: ENV_STEPS, jobsPerArm: JOBS_PER_ARM, workers: executor.slots, arms };
  } finally {
    await server.close();
    await service.close();
    await executor.close();
  }
}
