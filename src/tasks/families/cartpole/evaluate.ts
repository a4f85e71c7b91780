/**
 * What the hidden evaluation of a generated CartPole task knows: how many held-out episodes it
 * runs and the reference return. Its deployment physics are drawn from the evaluation secret
 * within the band the brief states, by the rule the simulator families share (`../evaluate-deployment.ts`).
 */
import type { PhysParams } from '../../../inner/envs/types.js';

/** Held-out episodes per generated CartPole task. */
export const CARTPOLE_FAMILY_EPISODES = 30;

/** The hidden settings of a generated CartPole task (see `ControlTaskDef.hidden`). */
export function cartpoleHidden(nominal: PhysParams): { params: PhysParams; episodes: number; reference: number; referenceHow: string } {
  return { params: nominal, episodes: CARTPOLE_FAMILY_EPISODES, reference: 500, referenceHow: 'the maximum return (500 steps)' };
}
