/**
 * The Acrobot family's scripted energy-pumping policy (torque the way the lower link swings
 * relative to the upper), shared by both sides: the definition keeps only physics where the goal
 * is reachable within the 500-step limit and states the reference return in the metric; the
 * evaluation normalises by it. The reference is the policy's mean return on the nominal physics
 * from 8 fixed starts.
 */
import { ACROBOT_INFO, acrobotDynamics } from '../../../inner/envs/acrobot.js';
import type { PhysParams } from '../../../inner/envs/types.js';
import { Rng } from '../../../util/rng.js';

/** The scripted policy's action in state [θ1, θ2, θ̇1, θ̇2]: torque the way the lower link swings relative to the upper. */
export function acrobotScriptedAction(s: ArrayLike<number>): number {
  return s[3] >= 0 ? 2 : 0;
}

/** One scripted episode from `start`: its return (−1 per step until the goal, at most 500 steps). */
export function acrobotScriptedEpisode(start: ArrayLike<number>, p: PhysParams): number {
  let s = Float64Array.from(start);
  const next = new Float64Array(4);
  for (let t = 1; t <= ACROBOT_INFO.maxEpisodeSteps; t++) {
    const done = acrobotDynamics(s, acrobotScriptedAction(s), p, next);
    s = Float64Array.from(next);
    if (done) return -(t - 1);
  }
  return -ACROBOT_INFO.maxEpisodeSteps;
}

// 8 fixed starts drawn like the simulator's reset (uniform in ±0.1), from a constant seed.
const STARTS = ((): Float64Array[] => {
  const rng = new Rng(0xac20b07);
  return Array.from({ length: 8 }, () => Float64Array.from({ length: 4 }, () => rng.uniform(-0.1, 0.1)));
})();

function computeAcrobotScripted(p: PhysParams): { ret: number; worst: number } {
  const rets = STARTS.map((s) => acrobotScriptedEpisode(s, p));
  return { ret: rets.reduce((a, b) => a + b, 0) / rets.length, worst: Math.min(...rets) };
}

const MEMO = new Map<string, { ret: number; worst: number }>();

/** The scripted policy's mean and worst return from 8 fixed starts. Memoised per physics. */
export function acrobotScripted(p: PhysParams): { ret: number; worst: number } {
  const key = JSON.stringify(p);
  let r = MEMO.get(key);
  if (!r) MEMO.set(key, (r = computeAcrobotScripted(p)));
  return r;
}

/** The reference return of a generated Acrobot task: the scripted policy's on the nominal physics, rounded. */
export function acrobotReference(nominal: PhysParams): number {
  return Math.round(acrobotScripted(nominal).ret);
}
