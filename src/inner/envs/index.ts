import { CARTPOLE_INFO, CartPoleEnv } from './cartpole.js';
import type { Env, EnvInfo } from './types.js';

export type { Env, EnvInfo } from './types.js';

/** Every simulated environment the inner engine can build, by Gymnasium id. */
export const ENVIRONMENTS: Record<string, { info: EnvInfo; make: () => Env }> = {
  'CartPole-v1': { info: CARTPOLE_INFO, make: () => new CartPoleEnv() },
};

/** Looks up an environment by id, with a clear error listing the known ids. */
export function getEnvironment(id: string): { info: EnvInfo; make: () => Env } {
  const e = Object.hasOwn(ENVIRONMENTS, id) ? ENVIRONMENTS[id] : undefined;
  if (!e) throw new Error(`unknown environment "${id}"; known: ${Object.keys(ENVIRONMENTS).join(', ')}`);
  return e;
}
