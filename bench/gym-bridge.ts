/**
 * `npm run bench -- gym-bridge`: env steps per second through the Gymnasium bridge (random
 * actions sent from here, the engine's `GymVecEnv` with its episode bookkeeping) against
 * Gymnasium alone (a `SyncVectorEnv` with the same autoreset, random actions, in Python), in
 * the same run, alternating three rounds of each; the ratio of the medians must stay above 0.5.
 * RRL_BENCH_GYM_ENVS (default 16) and RRL_BENCH_GYM_STEPS (vector steps, default 2000) tune it.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bridgePython } from '../src/inner/envs/gym-bridge.js';
import { GymVecEnv } from '../src/inner/envs/gym-vector.js';
import { num, table } from '../src/cli/format.js';
import { Rng } from '../src/util/rng.js';

const PROJECT_DIR = fileURLToPath(new URL('../..', import.meta.url));

function alone(envId: string, envs: number, steps: number): number {
  const out = execFileSync(bridgePython(), ['-m', 'rrl_gym.bench', envId, String(envs), String(steps)], {
    env: { ...process.env, PYTHONPATH: join(PROJECT_DIR, 'python') },
    encoding: 'utf8',
  });
  return (JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { stepsPerSec: number }).stepsPerSec;
}

function bridged(envId: string, envs: number, steps: number): number {
  const v = new GymVecEnv({ id: envId, kwargs: {}, obsDim: 4, actionSpace: { type: 'discrete', n: 2 }, maxEpisodeSteps: 500 }, envs, 1);
  const rng = new Rng(1);
  const actions = new Float64Array(envs);
  try {
    const t0 = performance.now();
    for (let s = 0; s < steps; s++) {
      for (let i = 0; i < envs; i++) actions[i] = rng.int(2);
      v.step(actions);
      v.drainEpisodes();
    }
    return (envs * steps) / ((performance.now() - t0) / 1000);
  } finally {
    v.close();
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Gymnasium alone vs through the bridge on CartPole-v1. */
export async function gymBridge(): Promise<Record<string, unknown>> {
  const envId = 'CartPole-v1';
  const envs = Number(process.env.RRL_BENCH_GYM_ENVS ?? 16);
  const steps = Number(process.env.RRL_BENCH_GYM_STEPS ?? 2000);
  const a: number[] = [];
  const b: number[] = [];
  for (let round = 0; round < 3; round++) {
    process.stderr.write(`gym-bridge: round ${round + 1} of 3\n`);
    a.push(alone(envId, envs, steps));
    b.push(bridged(envId, envs, steps));
  }
  const gymnasium = median(a);
  const bridge = median(b);
  const ratio = bridge / gymnasium;
  console.log(
    table(
      ['env', 'envs', 'Gymnasium alone (steps/s)', 'through the bridge (steps/s)', 'ratio'],
      [[envId, String(envs), num(gymnasium, 0), num(bridge, 0), num(ratio, 2)]],
    ),
  );
  if (!(ratio > 0.5)) process.stderr.write(`gym-bridge: the ratio ${ratio.toFixed(2)} is below 0.5\n`);
  return { envId, numEnvs: envs, vectorSteps: steps, gymnasiumStepsPerSec: gymnasium, bridgeStepsPerSec: bridge, ratio, rounds: { gymnasium: a, bridge: b } };
}
