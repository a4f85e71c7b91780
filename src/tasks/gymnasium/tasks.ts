/**
 * Worked examples of Gymnasium tasks (split `example`: in no experiment): CartPole-v1 from
 * Gymnasium itself, trained by the embedded algorithms through the bridge, and MuJoCo's
 * InvertedPendulum-v5 trained by the PyTorch PPO command trainer (python/rrl_gym/ppo_continuous.py).
 * Both are scored by the harness through the bridge on its held-out seeds; what their evaluations
 * know (episodes, anchors) is `GYMNASIUM_EVALUATIONS` in `evaluate.ts`.
 */
import { ppoSpec } from '../control/define.js';
import { CARTPOLE_OBS } from '../control/observations.js';
import { type GymnasiumTaskDef, gymnasiumTask } from './define.js';

/** Gymnasium's own CartPole-v1, trained by the embedded algorithms through the bridge. */
export const gymCartpole: GymnasiumTaskDef = gymnasiumTask({
  id: 'gym-cartpole',
  envId: 'CartPole-v1',
  obsDim: 4,
  actionSpace: { type: 'discrete', n: 2 },
  maxEpisodeSteps: 500,
  title: 'Balance a pole on a cart, simulated by Gymnasium',
  description:
    "Train a policy that keeps a pole balanced upright on a cart for as long as possible, in Gymnasium's own CartPole-v1 (stepped in a Python " +
    'process). Each step the policy pushes the cart left or right. An episode ends when the pole tilts more than 12 degrees, the cart leaves ' +
    'the track (|x| > 2.4) or after 500 steps.',
  observation: CARTPOLE_OBS,
  actions: 'discrete: 0 pushes the cart left, 1 pushes it right (force 10 N)',
  rewardWords: 'the environment reward: 1 for every step',
  anchors: { reference: 500 },
  caps: { maxEnvSteps: 50_000, maxWallSeconds: 300 },
  baseline: ppoSpec('gym-cartpole', {
    numEnvs: 8,
    rolloutSteps: 32,
    epochs: 20,
    minibatches: 1,
    learningRate: 0.001,
    gamma: 0.98,
    gaeLambda: 0.8,
    entropyCoef: 0,
    envSteps: 50_000,
  }),
});

/** MuJoCo's InvertedPendulum-v5, trained by the PyTorch PPO command trainer. */
export const invertedPendulumTorch: GymnasiumTaskDef = gymnasiumTask({
  id: 'inverted-pendulum-torch',
  envId: 'InvertedPendulum-v5',
  obsDim: 4,
  actionSpace: { type: 'box', low: [-3], high: [3] },
  maxEpisodeSteps: 1000,
  family: 'gymnasium-mujoco',
  title: 'Balance an inverted pendulum in MuJoCo, trained by PyTorch PPO',
  description:
    "Train a policy for MuJoCo's InvertedPendulum-v5 (Gymnasium): a pole hinged on a cart that slides on a rail; push the cart so that the " +
    'pole stays upright. The episode ends when the pole leans more than 0.2 rad or after 1000 steps; the reward is 1 per step. Jobs are ' +
    'trained by an outside program, a CleanRL-style PPO in PyTorch: it uses numEnvs, normalize-observation, model.hidden and activation, every ' +
    'PPO hyperparameter, the env-step budget, targetReturn and the seed; it ignores reward.expression (it trains on the environment reward, ' +
    'scaled by the running standard deviation of the return).',
  observation: [
    { name: 'cart_x', description: 'position of the cart on the rail (m)' },
    { name: 'pole_angle', description: 'angle of the pole from upright (rad); the episode ends beyond ±0.2' },
    { name: 'cart_v', description: 'velocity of the cart (m/s)' },
    { name: 'pole_omega', description: 'angular velocity of the pole (rad/s)' },
  ],
  actions: 'continuous: one force on the cart in [−3, 3]',
  rewardWords: 'the environment reward: 1 for every step the pole stays up',
  anchors: { reference: 1000 },
  caps: { maxEnvSteps: 200_000, maxWallSeconds: 900 },
  // CleanRL's ppo_continuous_action.py settings, at this task's cap.
  baseline: {
    ...ppoSpec('inverted-pendulum-torch', {
      numEnvs: 1,
      rolloutSteps: 2048,
      epochs: 10,
      minibatches: 32,
      learningRate: 3e-4,
      gamma: 0.99,
      gaeLambda: 0.95,
      entropyCoef: 0,
      envSteps: 200_000,
      normalize: true,
    }),
  },
  trainer: {
    kind: 'command',
    argv: ['python', 'python/rrl_gym/ppo_continuous.py'],
    description: 'CleanRL-style PPO for continuous actions in PyTorch (python/rrl_gym/ppo_continuous.py)',
  },
});

/** The Gymnasium example tasks. */
export const GYMNASIUM_TASKS: GymnasiumTaskDef[] = [gymCartpole, invertedPendulumTorch];
