/**
 * The point-mass family's scripted controller, shared by both sides: on each axis it asks for the
 * speed from which the puck can still brake to the target (√(2·½·a·distance), at most 4 × the
 * distance per second, with a = force/mass the largest acceleration) and pushes to reach that speed
 * within two steps, cancelling the drag (it knows the physics). The definition keeps only physics
 * where it brings the puck to the target and holds it there from every start, and states its
 * return as the reference; the evaluation normalises by it. The reference is its mean return on
 * the nominal physics over 16 fixed (start, target) pairs.
 */
import { POINT_MASS_CONSTANTS, POINT_MASS_INFO, pointMassDynamics } from '../../../inner/envs/point-mass.js';
import type { PhysParams } from '../../../inner/envs/types.js';
import { Rng } from '../../../util/rng.js';

/** The scripted controller's force command (two values in [−1, 1]) in state [x, y, ẋ, ẏ, target_x, target_y] for physics `p`. */
export function pointMassScriptedAction(s: ArrayLike<number>, p: PhysParams): [number, number] {
  const accel = p.force / p.mass;
  const tau = 2 * POINT_MASS_CONSTANTS.dt;
  const out: [number, number] = [0, 0];
  for (let k = 0; k < 2; k++) {
    const e = s[4 + k] - s[k];
    const want = Math.sign(e) * Math.min(Math.sqrt(accel * Math.abs(e)), 4 * Math.abs(e));
    const a = (want - s[2 + k]) / tau + p.damping * s[2 + k];
    out[k] = Math.max(-1, Math.min(1, (a * p.mass) / p.force));
  }
  return out;
}

/**
 * One scripted episode from `start` (a full state): its return and whether the puck is within
 * 0.05 m of the target over the whole second half of the episode (reached within 5 s).
 */
export function pointMassScriptedEpisode(start: ArrayLike<number>, p: PhysParams): { ret: number; held: boolean } {
  let s = Float64Array.from(start);
  const next = new Float64Array(6);
  let ret = 0;
  let held = true;
  const T = POINT_MASS_INFO.maxEpisodeSteps;
  for (let t = 0; t < T; t++) {
    ret += pointMassDynamics(s, pointMassScriptedAction(s, p), p, next);
    s = Float64Array.from(next);
    if (t >= T / 2 && Math.hypot(s[0] - s[4], s[1] - s[5]) >= 0.05) held = false;
  }
  return { ret, held };
}

// 16 fixed (start, target) pairs drawn like the simulator's reset, from a constant seed.
const STARTS = ((): Float64Array[] => {
  const rng = new Rng(0x9017a55);
  const r = POINT_MASS_CONSTANTS.resetRange;
  return Array.from({ length: 16 }, () => Float64Array.of(rng.uniform(-r, r), rng.uniform(-r, r), 0, 0, rng.uniform(-r, r), rng.uniform(-r, r)));
})();

function computePointMassScripted(p: PhysParams): { ret: number; feasible: boolean } {
  const eps = STARTS.map((s) => pointMassScriptedEpisode(s, p));
  return { ret: eps.reduce((a, e) => a + e.ret, 0) / eps.length, feasible: eps.every((e) => e.held) };
}

const MEMO = new Map<string, { ret: number; feasible: boolean }>();

/** The scripted controller's mean return over the 16 fixed pairs, and whether it holds the puck at the target in every one. Memoised per physics. */
export function pointMassScripted(p: PhysParams): { ret: number; feasible: boolean } {
  const key = JSON.stringify(p);
  let r = MEMO.get(key);
  if (!r) MEMO.set(key, (r = computePointMassScripted(p)));
  return r;
}

/** The reference return of a generated point-mass task: the scripted controller's on the nominal physics, rounded. */
export function pointMassReference(nominal: PhysParams): number {
  return Math.round(pointMassScripted(nominal).ret);
}
