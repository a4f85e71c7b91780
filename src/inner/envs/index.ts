import { ACROBOT_INFO, AcrobotEnv } from './acrobot.js';
import { CARTPOLE_INFO, CartPoleEnv } from './cartpole.js';
import { MOUNTAIN_CAR_INFO, MountainCarEnv } from './mountain-car.js';
import { PENDULUM_INFO, PendulumEnv } from './pendulum.js';
import { POINT_MASS_INFO, PointMassEnv } from './point-mass.js';
import type { Env, EnvInfo } from './types.js';

/** The environment types, for callers of this index. */
export type { Env, EnvInfo } from './types.js';

/** Every simulated environment the inner engine can build, by Gymnasium id. */
export const ENVIRONMENTS: Record<string, { info: EnvInfo; make: () => Env }> = {
  'CartPole-v1': { info: CARTPOLE_INFO, make: () => new CartPoleEnv() },
  'Acrobot-v1': { info: ACROBOT_INFO, make: () => new AcrobotEnv() },
  'MountainCar-v0': { info: MOUNTAIN_CAR_INFO, make: () => new MountainCarEnv() },
  'Pendulum-v1': { info: PENDULUM_INFO, make: () => new PendulumEnv() },
  // Built in, no Gymnasium counterpart.
  'PointMass-v0': { info: POINT_MASS_INFO, make: () => new PointMassEnv() },
};

/** Looks up an environment by id, with a clear error listing the known ids. */
export function getEnvironment(id: string): { info: EnvInfo; make: () => Env } {
  const e = Object.hasOwn(ENVIRONMENTS, id) ? ENVIRONMENTS[id] : undefined;
  if (!e) throw new Error(`unknown environment "${id}"; known: ${Object.keys(ENVIRONMENTS).join(', ')}`);
  return e;
}
