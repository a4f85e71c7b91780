/**
 * Demonstration sets for behaviour-cloning warm starts: episodes recorded from a scripted
 * controller, operated with some share of random actions. Generated on the harness side
 * from a task's catalog entry and handed to the job like a dataset.
 */
import { getEnvironment } from '../../inner/envs/index.js';
import { Rng, mixSeed } from '../../util/rng.js';

/** Recorded (observation, action) pairs. */
export interface Demonstrations {
  obs: number[][];
  actions: number[];
}

/** A hand-written controller per environment (discrete actions). */
export const SCRIPTED: Record<string, (obs: ArrayLike<number>) => number> = {
  // Push towards the side the pole falls to, with damping.
  'CartPole-v1': (o) => (o[2] + 0.5 * o[3] > 0 ? 1 : 0),
  // Accelerate in the direction of motion to build momentum.
  'MountainCar-v0': (o) => (o[1] >= 0 ? 2 : 0),
  // Pump energy: torque in the direction the lower link swings.
  'Acrobot-v1': (o) => (o[5] > 0 ? 2 : 0),
};

/** A catalog entry's recipe: how many episodes, and the share of random actions. */
export interface DemoRecipe {
  id: string;
  description: string;
  episodes: number;
  randomActionShare: number;
}

/** Records `recipe.episodes` episodes of the scripted controller on `envId` (default physics). */
export function recordDemonstrations(envId: string, recipe: DemoRecipe, seed: number): Demonstrations {
  const expert = SCRIPTED[envId];
  if (!expert) throw new Error(`no scripted controller for ${envId}`);
  const { make, info } = getEnvironment(envId);
  if (info.actionSpace.type !== 'discrete') throw new Error(`${envId}: demonstrations need discrete actions`);
  const n = info.actionSpace.n;
  const rng = new Rng(mixSeed(seed, 0xde70));
  const env = make();
  const out: Demonstrations = { obs: [], actions: [] };
  for (let e = 0; e < recipe.episodes; e++) {
    let { obs } = env.reset({ seed: mixSeed(seed, e) });
    for (;;) {
      const a = rng.next() < recipe.randomActionShare ? rng.int(n) : expert(obs);
      out.obs.push(Array.from(obs));
      out.actions.push(a);
      const r = env.step(a);
      if (r.terminated || r.truncated) break;
      obs = r.obs;
    }
  }
  return out;
}

/** The standard demonstration catalog of a control task. */
export function standardDemos(what: string): DemoRecipe[] {
  return [
    { id: 'expert-few', description: `3 episodes recorded from a hand-written ${what} controller`, episodes: 3, randomActionShare: 0 },
    {
      id: 'operator-many',
      description: `30 episodes from the same controller run by an operator who sometimes pressed a random button`,
      episodes: 30,
      randomActionShare: 0.4,
    },
    { id: 'logged-random', description: '30 episodes logged while the system was driven by random inputs', episodes: 30, randomActionShare: 1 },
  ];
}
