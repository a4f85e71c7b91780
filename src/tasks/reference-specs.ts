/**
 * For every task, one spec known to beat the baseline on the hidden evaluation (or to match
 * it far more cheaply): the evidence that each task has headroom. Used by
 * `npm run bench -- tasks`; never shown to the agent.
 */
import type { JobSpecInput } from '../spec/schema.js';
import { getPublicTask } from './briefs.js';

const ars = (task: string, envSteps: number, params: Record<string, [number, number]> = {}): JobSpecInput => ({
  task,
  environment: { params, wrappers: [], numEnvs: 1 },
  reward: { expression: 'r' },
  dataset: { demonstrations: null },
  model: { hidden: [], activation: 'tanh' },
  algorithm: { name: 'ars', stepSize: 0.02, directions: 8, topDirections: 4, noise: 0.03 },
  budget: { envSteps, targetReturn: null },
  seed: 1,
});

function withPatch(task: string, patch: Partial<Record<keyof JobSpecInput, unknown>>): JobSpecInput {
  const base = structuredClone(getPublicTask(task).baseline) as Record<string, unknown>;
  for (const [k, v] of Object.entries(patch)) {
    const cur = base[k];
    base[k] = k !== 'algorithm' && v && typeof v === 'object' && !Array.isArray(v) && cur && typeof cur === 'object' ? { ...cur, ...v } : v;
  }
  return base as JobSpecInput;
}

const adam = (learningRate: number, epochs: number, batchSize = 32) => ({ name: 'supervised', optimizer: 'adam', learningRate, batchSize, epochs, schedule: 'constant' });
const cleanPlusAugmented = { sources: [{ id: 'clean-small', weight: 1 }, { id: 'augmented', weight: 1 }] };

/** The better spec of each task, with what makes it better. */
export const REFERENCE_SPECS: Record<string, { why: string; spec: () => JobSpecInput }> = {
  'cartpole-balance': { why: 'ARS with a linear policy: the same score for a fraction of the compute', spec: () => ars('cartpole-balance', 20_000) },
  'cartpole-short': { why: 'ARS: solves within the small budget where PPO cannot', spec: () => ars('cartpole-short', 10_000) },
  'cartpole-heavy': {
    why: 'ARS trained under randomised pole length, pole mass and force',
    spec: () => ars('cartpole-heavy', 50_000, { poleLength: [0.5, 1.5], massPole: [0.1, 1.0], forceMag: [4, 10] }),
  },
  'acrobot-swingup': { why: 'ARS with a linear policy: better returns at a fraction of the compute', spec: () => ars('acrobot-swingup', 100_000) },
  'mountaincar-reach': { why: 'PPO on a shaped reward that pays for speed', spec: () => withPatch('mountaincar-reach', { reward: { expression: 'r + 10 * abs(velocity)' } }) },
  'pendulum-swingup': {
    why: 'PPO with short rollouts over 8 envs (many more updates in the budget), γ 0.95 and the reward scaled by 1/10',
    spec: () =>
      withPatch('pendulum-swingup', {
        reward: { expression: 'r / 10' },
        environment: { numEnvs: 8 },
        algorithm: { name: 'ppo', learningRate: 0.001, gamma: 0.95, gaeLambda: 0.95, clip: 0.2, epochs: 10, minibatches: 8, rolloutSteps: 128, entropyCoef: 0 },
      }),
  },
  'penguins-species': { why: 'the checked sample plus its augmentation instead of the noisy bulk set', spec: () => withPatch('penguins-species', { dataset: cleanPlusAugmented, algorithm: adam(0.01, 100) }) },
  'cars-mpg': { why: 'the checked sample plus its augmentation instead of the shifted set', spec: () => withPatch('cars-mpg', { dataset: cleanPlusAugmented, algorithm: adam(0.01, 100) }) },
  'seattle-weather': {
    why: 'the noisy bulk set mixed with the checked sample, a wider network',
    spec: () => withPatch('seattle-weather', { dataset: { sources: [{ id: 'noisy-large', weight: 1 }, { id: 'clean-small', weight: 1 }] }, model: { hidden: [128, 128], activation: 'relu' }, algorithm: adam(0.003, 60, 64) }),
  },
  'iris-species': { why: 'the checked sample plus its augmentation, a higher learning rate', spec: () => withPatch('iris-species', { dataset: cleanPlusAugmented, algorithm: adam(0.01, 100) }) },
  'two-spirals': {
    why: 'a wider network, label smoothing against the noisy labels, a cosine schedule and more passes',
    spec: () =>
      withPatch('two-spirals', {
        model: { hidden: [128, 128], activation: 'relu' },
        reward: { objective: 'cross-entropy', labelSmoothing: 0.2 },
        algorithm: { ...adam(0.005, 100, 64), schedule: 'cosine' },
        budget: { examples: 150_000 },
      }),
  },
  'iris-command': {
    why: 'the checked sample plus its augmentation, and a learning rate fit for the plain gradient descent of the outside trainer',
    spec: () => withPatch('iris-command', { dataset: cleanPlusAugmented, algorithm: adam(0.2, 100) }),
  },
  'gym-cartpole': { why: 'ARS with a linear policy: the same score for a fraction of the compute', spec: () => ars('gym-cartpole', 20_000) },
  'inverted-pendulum-torch': {
    why: 'the baseline at a quarter of its budget: the maximum hidden return (1000) measured after 49,152 env steps',
    spec: () => withPatch('inverted-pendulum-torch', { budget: { envSteps: 50_000 } }),
  },
  'two-moons': { why: 'the checked sample plus its augmentation, a higher learning rate', spec: () => withPatch('two-moons', { dataset: cleanPlusAugmented, algorithm: adam(0.01, 100) }) },
};
