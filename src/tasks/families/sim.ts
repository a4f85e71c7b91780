/**
 * Public side, shared by the simulator families: the simulator's parameter bounds, the brief's
 * sentence on the deployment shift, and the baseline's physics (the nominal values, or the stated
 * band around them when there is a shift).
 */
import type { EnvInfo, PhysParams } from '../../inner/envs/types.js';
import { sig } from './types.js';

/** The simulator's hard bounds per parameter name. */
export function simBounds(info: EnvInfo): Record<string, [number, number]> {
  return Object.fromEntries(info.params.map((q) => [q.name, [q.min, q.max] as [number, number]]));
}

/** The brief's sentence on the shift: `deployed` names the system ("cart"), `count` the number of values in words ("four"). */
export function shiftSentence(shift: number, deployed: string, count: string): string {
  return shift === 0
    ? `The deployed ${deployed} has exactly these physics.`
    : `On deployment each of these ${count} values may differ from the stated one by ` +
        `up to ±${Math.round(shift * 100)}% of it, by an amount not known in advance.`;
}

/** The nominal physics of `names`, or (with a shift) the band ±`shift` around each value within the simulator's bounds. */
export function bandParams(
  names: readonly string[],
  nominal: PhysParams,
  shift: number,
  bounds: Record<string, [number, number]>,
): Record<string, number | [number, number]> {
  return Object.fromEntries(
    names.map((name): [string, number | [number, number]] => {
      const [lo, hi] = bounds[name];
      const v = nominal[name];
      return [name, shift === 0 ? v : [sig(Math.max(lo, v * (1 - shift))), sig(Math.min(hi, v * (1 + shift)))]];
    }),
  );
}
