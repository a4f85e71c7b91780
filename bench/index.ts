/**
 * Benchmarks (not tests): `npm run bench [-- NAME...]`. Prints a table and one JSON
 * object per benchmark. NAME: cartpole, tasks, slurm, crash, serve, crossover, vs-torch, vs-torch-supervised, grpo, grpo-step,
 * gym-bridge, llm, noise, fidelity, sensitivity, zero-shot, held-out-confirm, rung-rank (default: all but grpo, grpo-step, gym-bridge, llm, noise, fidelity,
 * sensitivity, zero-shot, held-out-confirm and rung-rank; the first three need the Python environment, noise trains every baseline on five seeds,
 * fidelity trains the controller once per arm and seed (12 times by default), sensitivity trains about 1,500 jobs, zero-shot and held-out-confirm read a finished transfer
 * experiment, rung-rank trains a run's proposals again at each rung share; they run only when named). `noise`, `fidelity`, `sensitivity`, `zero-shot`,
 * `held-out-confirm` and `rung-rank` take options: see bench/noise.ts, bench/fidelity.ts, bench/sensitivity.ts, bench/zero-shot.ts,
 * bench/held-out-confirm.ts and bench/rung-rank.ts.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CartPoleEnv } from '../src/inner/envs/cartpole.js';
import { VecEnv } from '../src/inner/envs/vector.js';
import { runJob } from '../src/inner/train.js';
import type { PolicyFile } from '../src/inner/policy.js';
import { dataForJob, scoreArtifact, scorePolicy } from '../src/outer/scoring/hidden-score.js';
import { trainAgent } from '../src/outer/loop.js';
import { LocalExecutor } from '../src/run/local.js';
import { getPublicTask, listTasks } from '../src/tasks/briefs.js';
import { REFERENCE_SPECS } from '../src/tasks/reference-specs.js';
import { arsSpec, cleanRlPpoSpec } from '../src/testing/specs.js';
import { Rng } from '../src/util/rng.js';
import { num, table } from '../src/cli/format.js';
import { slurm } from './slurm.js';
import { crash } from './crash.js';
import { serve } from './serve.js';
import { crossover } from './crossover.js';
import { vsTorch } from './vs-torch.js';
import { vsTorchSupervised } from './vs-torch-supervised.js';
import { grpo } from './grpo.js';
import { grpoStep } from './grpo-step.js';
import { gymBridge } from './gym-bridge.js';
import { llm } from './llm.js';
import { noise } from './noise.js';
import { fidelity } from './fidelity.js';
import { sensitivity } from './sensitivity.js';
import { zeroShot } from './zero-shot.js';
import { heldOutConfirm } from './held-out-confirm.js';
import { rungRank } from './rung-rank.js';

const tmp = mkdtempSync(join(tmpdir(), 'rrl-bench-'));
const log = (s: string): boolean => process.stderr.write(`${s}\n`);

/** Raw environment speed: single env and an 8-wide vector, random actions. */
function envThroughput(): { singleStepsPerSec: number; vectorStepsPerSec: number } {
  const env = new CartPoleEnv();
  const rng = new Rng(1);
  env.reset({ seed: 1 });
  const n = 2_000_000;
  let t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const r = env.step(rng.int(2));
    if (r.terminated || r.truncated) env.reset();
  }
  const single = n / ((performance.now() - t0) / 1000);
  const vec = new VecEnv(() => new CartPoleEnv(), 8, 1);
  const actions = new Int32Array(8);
  t0 = performance.now();
  const m = 250_000;
  for (let i = 0; i < m; i++) {
    for (let k = 0; k < 8; k++) actions[k] = rng.int(2);
    vec.step(actions);
    vec.drainEpisodes();
  }
  return { singleStepsPerSec: single, vectorStepsPerSec: (8 * m) / ((performance.now() - t0) / 1000) };
}

/** Trains a spec, scoring snapshots on the hidden evaluation; reports when it first reaches `target`. */
async function timeToSolve(spec: unknown, task: string, every: number, target = 475) {
  const { brief } = getPublicTask(task);
  let scoringMs = 0;
  let solved: { envSteps: number; wallSeconds: number; hidden: number } | null = null;
  const t0 = performance.now();
  const artifact = await runJob(spec, brief, {
    outDir: join(tmp, `solve-${Date.now()}`),
    snapshotEvery: every,
    onSnapshot: (envSteps: number, policy: PolicyFile) => {
      if (solved) return;
      const s0 = performance.now();
      const hidden = scorePolicy(task, policy).raw;
      scoringMs += performance.now() - s0;
      if (hidden >= target) solved = { envSteps, wallSeconds: (performance.now() - t0 - scoringMs) / 1000, hidden };
    },
  });
  return { solved: solved as { envSteps: number; wallSeconds: number; hidden: number } | null, total: artifact.cost };
}

async function cartpole(): Promise<Record<string, unknown>> {
  log('cartpole: environment throughput');
  const env = envThroughput();
  log('cartpole: PPO throughput at CleanRL defaults (50k env steps)');
  const { brief } = getPublicTask('cartpole-balance');
  const ppo = await runJob(cleanRlPpoSpec('cartpole-balance', 50_000), brief, { outDir: join(tmp, 'cleanrl') });
  const ppoRate = ppo.cost.envSteps / ppo.cost.wallSeconds;
  log('cartpole: baseline PPO spec to a hidden 475');
  const base = await timeToSolve(getPublicTask('cartpole-balance').baseline, 'cartpole-balance', 5000);
  log('cartpole: ARS spec to a hidden 475 (5 seeds)');
  const ars = [];
  for (let seed = 1; seed <= 5; seed++) ars.push(await timeToSolve(arsSpec('cartpole-balance', 50_000, seed), 'cartpole-balance', 1));
  log('cartpole: harness overhead during a short rrl train');
  const executor = new LocalExecutor();
  let overhead;
  try {
    overhead = await trainAgent(join(tmp, 'train'), { tasks: ['cartpole-short'], agent: 'controller', iterations: 3, group: 4, seed: 1 }, executor);
  } finally {
    await executor.close();
  }
  const arsSolved = ars.map((a) => a.solved).filter((s): s is NonNullable<typeof s> => s !== null);
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const result = {
    envStepsPerSec: env,
    ppoCleanRlDefaults: { envStepsPerSec: ppoRate, envSteps: ppo.cost.envSteps, wallSeconds: ppo.cost.wallSeconds, target: 2500 },
    baselinePpoToSolve: base.solved,
    arsToSolve: {
      solvedSeeds: arsSolved.length,
      seeds: ars.length,
      medianEnvSteps: arsSolved.length ? median(arsSolved.map((s) => s.envSteps)) : null,
      medianWallSeconds: arsSolved.length ? median(arsSolved.map((s) => s.wallSeconds)) : null,
      perSeed: ars.map((a) => a.solved),
    },
    speedupArsOverBaseline: base.solved && arsSolved.length ? base.solved.wallSeconds / median(arsSolved.map((s) => s.wallSeconds)) : null,
    harness: { ...overhead.timing, jobs: overhead.jobs, target: 0.05 },
  };
  console.log(
    table(
      ['figure', 'value', 'target'],
      [
        ['CartPole env steps/s (single env)', num(env.singleStepsPerSec, 0), ''],
        ['CartPole env steps/s (8-env vector)', num(env.vectorStepsPerSec, 0), ''],
        ['PPO env steps/s at CleanRL defaults', num(ppoRate, 0), '≥ 2,500'],
        ['baseline PPO: env steps to hidden ≥ 475', base.solved ? num(base.solved.envSteps, 0) : 'not reached', ''],
        ['baseline PPO: training seconds to hidden ≥ 475', base.solved ? num(base.solved.wallSeconds, 2) : 'not reached', ''],
        [`ARS: seeds solved`, `${arsSolved.length}/${ars.length}`, ''],
        ['ARS: median env steps to hidden ≥ 475', num(result.arsToSolve.medianEnvSteps, 0), ''],
        ['ARS: median training seconds to hidden ≥ 475', num(result.arsToSolve.medianWallSeconds, 3), '< 1 s'],
        ['ARS speed-up over baseline PPO (wall)', result.speedupArsOverBaseline ? `${num(result.speedupArsOverBaseline, 0)}×` : '—', ''],
        ['harness overhead share during rrl train', `${num(100 * overhead.timing.overheadShare, 2)} %`, '< 5 %'],
      ],
    ),
  );
  return result;
}

/** Every task's baseline spec against its reference spec: hidden scores and cost. */
async function tasks(): Promise<Record<string, unknown>> {
  const rows: Record<string, unknown>[] = [];
  for (const { brief, baseline } of listTasks()) {
    const ref = REFERENCE_SPECS[brief.id];
    const entry: Record<string, unknown> = { task: brief.id, kind: brief.kind, split: brief.split, betterSpec: ref?.why ?? null };
    for (const [label, spec] of [
      ['baseline', baseline],
      ['better', ref?.spec()],
    ] as const) {
      if (!spec) continue;
      log(`tasks: ${brief.id} ${label}`);
      const dir = join(tmp, `${brief.id}-${label}`);
      const a = await runJob(spec, brief, { outDir: dir, data: dataForJob(brief.id, spec) });
      const score = scoreArtifact(brief.id, dir);
      entry[label] = { raw: score.raw, normalized: score.normalized, envSteps: a.cost.envSteps, examples: a.cost.examples, wallSeconds: a.cost.wallSeconds };
    }
    rows.push(entry);
  }
  type R = { raw: number; normalized: number; envSteps: number; examples: number; wallSeconds: number } | undefined;
  const cost = (r: R): string => (r ? `${num(r.envSteps || r.examples, 0)} ${r.envSteps ? 'steps' : 'examples'}, ${num(r.wallSeconds, 1)} s` : '—');
  console.log(
    table(
      ['task', 'split', 'baseline raw', 'baseline norm.', 'baseline cost', 'better raw', 'better norm.', 'better cost', 'better spec'],
      rows.map((r) => {
        const b = r.baseline as R;
        const g = r.better as R;
        return [
          String(r.task),
          String(r.split),
          num(b?.raw, 3),
          num(b?.normalized),
          cost(b),
          num(g?.raw, 3),
          num(g?.normalized),
          cost(g),
          String(r.betterSpec ?? ''),
        ];
      }),
    ),
  );
  return { rows };
}

const BENCHES: Record<string, () => Promise<Record<string, unknown>>> = {
  cartpole,
  tasks,
  slurm,
  crash,
  serve,
  crossover,
  'vs-torch': vsTorch,
  'vs-torch-supervised': vsTorchSupervised,
  grpo,
  'grpo-step': grpoStep,
  'gym-bridge': gymBridge,
  llm,
  noise,
  fidelity,
  sensitivity,
  'zero-shot': zeroShot,
  'held-out-confirm': heldOutConfirm,
  'rung-rank': rungRank,
};
/** Run only when named (long, or needing the Python environment and a model). */
const ON_REQUEST = new Set(['grpo', 'grpo-step', 'gym-bridge', 'llm', 'noise', 'fidelity', 'sensitivity', 'zero-shot', 'held-out-confirm', 'rung-rank']);

const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
for (const n of names) if (!Object.hasOwn(BENCHES, n)) throw new Error(`unknown benchmark "${n}"; known: ${Object.keys(BENCHES).join(', ')}`);
for (const name of names.length ? names : Object.keys(BENCHES).filter((n) => !ON_REQUEST.has(n))) {
  const result = await BENCHES[name]();
  console.log(JSON.stringify({ bench: name, ...result }));
}
