/**
 * The MountainCar family's scripted policy, shared by both sides: it accelerates left for a few
 * steps, then always the way the car moves (the best number of left steps per start). The
 * definition keeps only physics where it reaches the flag well within the 200-step limit and
 * states its return, the reference, in the metric; the evaluation normalises by it. The reference
 * is its mean return on the task's physics from 16 starting positions spread evenly over the
 * reset range.
 */
import { MOUNTAIN_CAR_CONSTANTS, MOUNTAIN_CAR_INFO, mountainCarDynamics } from '../../../inner/envs/mountain-car.js';
import type { PhysParams } from '../../../inner/envs/types.js';

/**
 * One scripted episode from `position` at rest: accelerate left for the first `reverse` steps, then
 * always the way the car moves. Its return (−1 per step until the flag, at most 200 steps).
 */
export function mountainCarScriptedEpisode(position: number, p: PhysParams, reverse = 0): number {
  let s = new Float64Array([position, 0]);
  const next = new Float64Array(2);
  for (let t = 1; t <= MOUNTAIN_CAR_INFO.maxEpisodeSteps; t++) {
    const done = mountainCarDynamics(s, t <= reverse || s[1] < 0 ? 0 : 2, p, next);
    s = Float64Array.from(next);
    if (done) return -t;
  }
  return -MOUNTAIN_CAR_INFO.maxEpisodeSteps;
}

function computeMountainCarScripted(p: PhysParams): { ret: number; worst: number } {
  const { resetLow, resetHigh } = MOUNTAIN_CAR_CONSTANTS;
  const rets = Array.from({ length: 16 }, (_, i) => {
    const x = resetLow + ((resetHigh - resetLow) * (i + 0.5)) / 16;
    let best = -Infinity;
    for (let k = 0; k <= 60; k++) best = Math.max(best, mountainCarScriptedEpisode(x, p, k));
    return best;
  });
  return { ret: rets.reduce((a, b) => a + b, 0) / rets.length, worst: Math.min(...rets) };
}

const MEMO = new Map<string, { ret: number; worst: number }>();

/**
 * The scripted policy's mean and worst return from 16 starting positions spread evenly over
 * [−0.6, −0.4], each start with its best number of opening left pushes (0–60; close to the optimal
 * bang-bang policy).
 * Memoised per physics (the generator and the reference ask for the same ones).
 */
export function mountainCarScripted(p: PhysParams): { ret: number; worst: number } {
  const key = JSON.stringify(p);
  let r = MEMO.get(key);
  if (!r) MEMO.set(key, (r = computeMountainCarScripted(p)));
  return r;
}

/** The reference return of a generated MountainCar task: the scripted policy's on the task's physics, rounded. */
export function mountainCarReference(physics: PhysParams): number {
  return Math.round(mountainCarScripted(physics).ret);
}
