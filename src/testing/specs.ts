/** Specs shared by tests and benchmarks. */
import type { JobSpecInput } from '../spec/schema.js';

/** A cheap ARS spec (linear policy) that solves CartPole within a few thousand steps. */
export function arsSpec(task: string, envSteps = 10_000, seed = 1): JobSpecInput {
  return {
    task,
    environment: { params: {}, wrappers: [], numEnvs: 1 },
    reward: { expression: 'r' },
    dataset: { demonstrations: null },
    model: { hidden: [], activation: 'tanh' },
    algorithm: { name: 'ars', stepSize: 0.02, directions: 8, topDirections: 4, noise: 0.03 },
    budget: { envSteps, targetReturn: null },
    seed,
  };
}

/** A PPO spec at CleanRL's CartPole defaults (4 envs × 128 steps, 4 epochs, 4 minibatches, Adam 2.5e-4). */
export function cleanRlPpoSpec(task: string, envSteps: number, seed = 1): JobSpecInput {
  return {
    task,
    environment: { params: {}, wrappers: [], numEnvs: 4 },
    reward: { expression: 'r' },
    dataset: { demonstrations: null },
    model: { hidden: [64, 64], activation: 'tanh' },
    algorithm: {
      name: 'ppo',
      learningRate: 2.5e-4,
      annealLr: true,
      gamma: 0.99,
      gaeLambda: 0.95,
      clip: 0.2,
      epochs: 4,
      minibatches: 4,
      rolloutSteps: 128,
      entropyCoef: 0.01,
    },
    budget: { envSteps, targetReturn: null },
    seed,
  };
}

/** A PPO spec that solves CartPole quickly here (rl-zoo-like settings, fewer epochs, early stop). */
export function fastPpoSpec(task: string, seed = 1): JobSpecInput {
  return {
    task,
    environment: { params: {}, wrappers: [], numEnvs: 8 },
    reward: { expression: 'r' },
    dataset: { demonstrations: null },
    model: { hidden: [64, 64], activation: 'tanh' },
    algorithm: {
      name: 'ppo',
      learningRate: 0.001,
      annealLr: true,
      gamma: 0.98,
      gaeLambda: 0.8,
      clip: 0.2,
      epochs: 10,
      minibatches: 2,
      rolloutSteps: 32,
      entropyCoef: 0,
    },
    budget: { envSteps: 30_000, targetReturn: null },
    seed,
  };
}

/**
 * Issue 10's wall-clock attack: a DQN spec that takes 16 gradient steps of batch 1024 after
 * every env step, for 100k env steps (hours here), on cartpole-balance.
 */
export function heavyDqnSpec(hidden: number[] = [64, 64]): JobSpecInput {
  return {
    task: 'cartpole-balance',
    environment: { params: {}, wrappers: [], numEnvs: 1 },
    reward: { expression: 'r' },
    dataset: { demonstrations: null },
    model: { hidden, activation: 'relu' },
    algorithm: {
      name: 'dqn',
      learningRate: 1e-3,
      gamma: 0.99,
      bufferSize: 100_000,
      batchSize: 1024,
      learningStarts: 100,
      trainFrequency: 1,
      gradientSteps: 16,
      targetUpdateInterval: 500,
      tau: 1,
      explorationFraction: 0.1,
      explorationInitial: 1,
      explorationFinal: 0.05,
      maxGradNorm: 10,
    },
    budget: { envSteps: 100_000, targetReturn: null },
    seed: 1,
  };
}
