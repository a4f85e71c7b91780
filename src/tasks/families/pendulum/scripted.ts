/**
 * The Pendulum family's scripted swing-up controller (energy pumping, then a PD hold at the top),
 * shared by both sides: the definition keeps only physics where swing-up with the 2 N·m torque
 * limit is feasible and states the reference return in the metric; the evaluation normalises by
 * it. The reference is the controller's mean return on the nominal physics from 16 starting angles
 * spread evenly around the circle.
 */
import { PENDULUM_CONSTANTS, PENDULUM_INFO, angleNormalize, pendulumDynamics } from '../../../inner/envs/pendulum.js';
import type { PhysParams } from '../../../inner/envs/types.js';

/** The scripted controller's torque in state [θ, θ̇] (θ = 0 upright) for physics `p`. */
export function pendulumScriptedTorque(th: number, thdot: number, p: PhysParams): number {
  const a = (3 * p.gravity) / (2 * p.length);
  const b = 3 / (p.mass * p.length ** 2);
  const u = PENDULUM_CONSTANTS.maxTorque;
  const theta = angleNormalize(th);
  if (Math.cos(theta) > 0.85) return Math.max(-u, Math.min(u, -((a + 25) * theta + 10 * thdot) / b)); // PD hold near the top
  const energy = 0.5 * thdot ** 2 + a * Math.cos(theta); // a at rest upright
  return energy < a ? (thdot >= 0 ? u : -u) : -Math.sign(thdot) * u * 0.5; // pump, or brake once above the top's energy
}

/** One scripted episode from [θ0, θ̇0]: its return and whether it ends held upright (|θ| < 0.1 over the last 20 steps). */
export function pendulumScriptedEpisode(th0: number, thdot0: number, p: PhysParams): { ret: number; upright: boolean } {
  let s = new Float64Array([th0, thdot0]);
  const next = new Float64Array(2);
  let ret = 0;
  let upright = true;
  const T = PENDULUM_INFO.maxEpisodeSteps;
  for (let t = 0; t < T; t++) {
    ret += pendulumDynamics(s, pendulumScriptedTorque(s[0], s[1], p), p, next);
    s = Float64Array.from(next);
    if (t >= T - 20 && Math.abs(angleNormalize(s[0])) >= 0.1) upright = false;
  }
  return { ret, upright };
}

const STARTS = Array.from({ length: 16 }, (_, i) => -Math.PI + (2 * Math.PI * i) / 16);

function computePendulumScripted(p: PhysParams): { ret: number; feasible: boolean } {
  const eps = STARTS.map((th) => pendulumScriptedEpisode(th, 0, p));
  return { ret: eps.reduce((a, e) => a + e.ret, 0) / eps.length, feasible: eps.every((e) => e.upright) };
}

const MEMO = new Map<string, { ret: number; feasible: boolean }>();

/** The scripted controller's mean return from 16 evenly spread starting angles at rest, and whether every episode ends upright. Memoised per physics. */
export function pendulumScripted(p: PhysParams): { ret: number; feasible: boolean } {
  const key = JSON.stringify(p);
  let r = MEMO.get(key);
  if (!r) MEMO.set(key, (r = computePendulumScripted(p)));
  return r;
}

/** The reference return of a generated Pendulum task: the scripted controller's on the nominal physics, rounded. */
export function pendulumReference(nominal: PhysParams): number {
  return Math.round(pendulumScripted(nominal).ret);
}
