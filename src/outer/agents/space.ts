/**
 * The discrete design space the embedded agents choose from, built from a task's brief:
 * each head is one decision (algorithm, a hyperparameter, a reward term, domain
 * randomisation, the share of the budget). `decode` turns one choice per head into a
 * complete job spec. Heads that do not apply to the chosen algorithm are marked unused,
 * so they do not enter the log-probability.
 */
import type { TaskBrief } from '../../spec/brief.js';
import type { JobSpecInput } from '../../spec/schema.js';

/** One decision with its options (values are JSON). */
export interface Head {
  name: string;
  options: readonly unknown[];
  /** When set, the head only matters for this algorithm. */
  algorithm?: string;
}

/** Every algorithm a head may offer, in the controller's fixed option order. */
export const ALGORITHM_ORDER = ['ppo', 'ars', 'dqn', 'reinforce', 'supervised'] as const;

/** The source ids of the standard supervised catalog (one head each). */
export const SOURCE_IDS = ['clean-small', 'noisy-large', 'shifted', 'imbalanced', 'duplicated', 'augmented'];

/**
 * Every head name any brief can produce. A learning agent gives each name its own output slot,
 * so a decision keeps its meaning across tasks whose briefs have different heads (a task with
 * five sources and one with six; a task that allows one algorithm and one that allows four).
 */
export const HEAD_NAMES: readonly string[] = [
  'algorithm',
  ...SOURCE_IDS.map((id) => `source:${id}`),
  'objective',
  'labelSmoothing',
  'hidden',
  'activation',
  'dropout',
  'optimizer',
  'learningRate',
  'batchSize',
  'epochs',
  'schedule',
  'mixup',
  'inputNoise',
  'budgetShare',
  'control.hidden',
  'control.activation',
  'normalizeObs',
  'randomize',
  'rewardTerm',
  'rewardSign',
  'rewardForm',
  'rewardWeight',
  'demonstrations',
  'envSteps',
  'numEnvs',
  'ppo.learningRate',
  'ppo.rolloutSteps',
  'ppo.epochs',
  'ppo.minibatches',
  'ppo.gamma',
  'ppo.gaeLambda',
  'ppo.entropyCoef',
  'ars.stepSize',
  'ars.directions',
  'ars.topShare',
  'ars.noise',
  'dqn.learningRate',
  'dqn.explorationFraction',
  'dqn.targetUpdateInterval',
  'reinforce.learningRate',
  'reinforce.episodesPerUpdate',
];

/**
 * Where a brief's heads live in a learning agent's fixed output: for each head its slot in
 * `HEAD_NAMES` (control heads that share a name with a supervised one are namespaced) and the
 * slot of each option (the algorithm head's options by `ALGORITHM_ORDER`, others by position).
 */
export function headLayout(brief: TaskBrief, heads: Head[]): { slot: number; optionSlots: number[] }[] {
  // A source of a user's task file (any id) takes, in catalogue order, a standard source's slot
  // that the brief does not use itself: a catalogue has at most as many sources as there are slots.
  const own = heads.map((h) => h.name).filter((n) => n.startsWith('source:') && !HEAD_NAMES.includes(n));
  const free = SOURCE_IDS.map((id) => `source:${id}`).filter((n) => !heads.some((h) => h.name === n));
  return heads.map((h) => {
    const mapped = own.includes(h.name) ? free[own.indexOf(h.name)] : undefined;
    if (own.includes(h.name) && !mapped) {
      throw new Error(`design space: the task has more than ${SOURCE_IDS.length} sources; the embedded agents take at most ${SOURCE_IDS.length}`);
    }
    const key = mapped ?? (brief.kind === 'control' && ['hidden', 'activation'].includes(h.name) ? `control.${h.name}` : h.name);
    const slot = HEAD_NAMES.indexOf(key);
    if (slot < 0) throw new Error(`design space: head "${h.name}" has no slot in HEAD_NAMES`);
    const optionSlots = h.name === 'algorithm' ? h.options.map((o) => ALGORITHM_ORDER.indexOf(o as never)) : h.options.map((_, i) => i);
    if (optionSlots.some((o) => o < 0)) throw new Error(`design space: unknown algorithm in ${JSON.stringify(h.options)}`);
    return { slot, optionSlots };
  });
}

/** The heads for a brief, in a fixed order. */
export function buildHeads(brief: TaskBrief): Head[] {
  return brief.kind === 'supervised' ? supervisedHeads(brief) : controlHeads(brief);
}

function supervisedHeads(brief: TaskBrief): Head[] {
  const info = brief.supervised!;
  const classify = info.target.type === 'classification';
  return [
    { name: 'algorithm', options: ['supervised'] },
    ...info.sources.map((src) => ({ name: `source:${src.id}`, options: [0, 0.5, 1] })),
    { name: 'objective', options: classify ? ['cross-entropy', 'focal'] : ['mse', 'huber'] },
    { name: 'labelSmoothing', options: classify ? [0, 0.1, 0.2] : [0] },
    { name: 'hidden', options: [[32], [64, 64], [128, 128]] },
    { name: 'activation', options: ['tanh', 'relu'] },
    { name: 'dropout', options: [0, 0.2] },
    { name: 'optimizer', options: ['sgd', 'adam', 'adamw'] },
    { name: 'learningRate', options: [1e-3, 3e-3, 1e-2] },
    { name: 'batchSize', options: [16, 32, 64] },
    { name: 'epochs', options: [20, 50, 100] },
    { name: 'schedule', options: ['constant', 'cosine'] },
    { name: 'mixup', options: [0, 0.2] },
    { name: 'inputNoise', options: [0, 0.1] },
    { name: 'budgetShare', options: [0.25, 0.5, 1] },
  ];
}

function controlHeads(brief: TaskBrief): Head[] {
  const obsVars = brief.environment.observation.map((v) => v.name);
  return [
    { name: 'algorithm', options: brief.algorithms },
    { name: 'hidden', options: [[], [16], [32, 32], [64, 64]] },
    { name: 'activation', options: ['tanh', 'relu'] },
    { name: 'normalizeObs', options: brief.environment.wrappers.includes('normalize-observation') ? [false, true] : [false] },
    { name: 'randomize', options: brief.environment.params.length ? [false, true] : [false] },
    { name: 'rewardTerm', options: ['none', ...obsVars] },
    { name: 'rewardSign', options: ['-', '+'] },
    { name: 'rewardForm', options: ['abs', 'square', 'cos'] },
    { name: 'rewardWeight', options: [0.1, 1, 10] },
    { name: 'demonstrations', options: [null, ...brief.demonstrations.map((d) => d.id)], algorithm: 'ppo' },
    // Experience in env steps, clipped to the task's cap: what a problem needs does not scale with the cap.
    { name: 'envSteps', options: [2500, 5000, 10_000, 25_000, 50_000] },
    { name: 'numEnvs', options: [4, 8, 16], algorithm: 'ppo' },
    { name: 'ppo.learningRate', options: [1e-4, 3e-4, 1e-3, 3e-3], algorithm: 'ppo' },
    { name: 'ppo.rolloutSteps', options: [32, 128, 256], algorithm: 'ppo' },
    { name: 'ppo.epochs', options: [4, 10, 20], algorithm: 'ppo' },
    { name: 'ppo.minibatches', options: [1, 4], algorithm: 'ppo' },
    { name: 'ppo.gamma', options: [0.98, 0.99], algorithm: 'ppo' },
    { name: 'ppo.gaeLambda', options: [0.8, 0.95], algorithm: 'ppo' },
    { name: 'ppo.entropyCoef', options: [0, 0.01], algorithm: 'ppo' },
    { name: 'ars.stepSize', options: [0.01, 0.02, 0.05], algorithm: 'ars' },
    { name: 'ars.directions', options: [4, 8, 16], algorithm: 'ars' },
    { name: 'ars.topShare', options: [0.5, 1], algorithm: 'ars' },
    { name: 'ars.noise', options: [0.01, 0.03, 0.05], algorithm: 'ars' },
    { name: 'dqn.learningRate', options: [1e-4, 5e-4, 2.5e-3], algorithm: 'dqn' },
    { name: 'dqn.explorationFraction', options: [0.1, 0.3, 0.5], algorithm: 'dqn' },
    { name: 'dqn.targetUpdateInterval', options: [250, 1000, 5000], algorithm: 'dqn' },
    { name: 'reinforce.learningRate', options: [3e-4, 1e-3, 3e-3], algorithm: 'reinforce' },
    { name: 'reinforce.episodesPerUpdate', options: [1, 4, 8], algorithm: 'reinforce' },
  ].filter((h) => !h.algorithm || brief.algorithms.includes(h.algorithm as never));
}

/** Which heads count for a choice vector (shared heads, and those of the chosen algorithm). */
export function activeHeads(heads: Head[], choice: number[]): boolean[] {
  const algo = heads[0].options[choice[0]] as string;
  const termIndex = heads.findIndex((x) => x.name === 'rewardTerm');
  const shaped = termIndex >= 0 && choice[termIndex] !== 0;
  return heads.map((h) => {
    if (h.algorithm && h.algorithm !== algo) return false;
    if (algo === 'ars' && h.name === 'normalizeObs') return false; // ARS always normalises states
    if ((h.name === 'rewardForm' || h.name === 'rewardWeight' || h.name === 'rewardSign') && !shaped) return false;
    return true;
  });
}

/** Turns one option index per head into a complete job spec for the brief. */
export function decode(brief: TaskBrief, heads: Head[], choice: number[], seed: number): JobSpecInput {
  const v = (name: string): unknown => {
    const i = heads.findIndex((h) => h.name === name);
    if (i < 0) throw new Error(`no head "${name}"`);
    return heads[i].options[choice[i]];
  };
  if (brief.kind === 'supervised') return decodeSupervised(brief, v, seed);
  const algo = v('algorithm') as 'ppo' | 'ars' | 'dqn' | 'reinforce';
  const term = v('rewardTerm') as string;
  const w = v('rewardWeight') as number;
  // The reward grammar: r, or r ± w·f(v) for one of the brief's variables v and f ∈ {abs, square, cos}.
  const form = v('rewardForm') as string;
  const fv = form === 'abs' ? `abs(${term})` : form === 'cos' ? `cos(${term})` : `${term}^2`;
  const expression = term === 'none' ? 'r' : `r ${v('rewardSign') as string} ${w} * ${fv}`;
  // The task's stated physics (a generated task's nominal values), or ±20% around them.
  const params: Record<string, number | [number, number]> = {};
  for (const p of brief.environment.params) {
    if (v('randomize')) {
      const lo = Math.max(p.min, p.default * 0.8);
      const hi = Math.min(p.max, p.default * 1.2);
      params[p.name] = [Number(lo.toPrecision(4)), Number(hi.toPrecision(4))];
    } else params[p.name] = p.default;
  }
  const envSteps = Math.min(brief.budget.maxEnvSteps, v('envSteps') as number);
  const algorithm =
    algo === 'dqn'
      ? {
          name: 'dqn' as const,
          learningRate: v('dqn.learningRate') as number,
          gamma: 0.99,
          bufferSize: 50_000,
          batchSize: 64,
          learningStarts: 1000,
          trainFrequency: 4,
          targetUpdateInterval: v('dqn.targetUpdateInterval') as number,
          explorationFraction: v('dqn.explorationFraction') as number,
          explorationFinal: 0.05,
        }
      : algo === 'reinforce'
        ? {
            name: 'reinforce' as const,
            learningRate: v('reinforce.learningRate') as number,
            gamma: 0.99,
            episodesPerUpdate: v('reinforce.episodesPerUpdate') as number,
          }
        : algo === 'ppo'
          ? {
              name: 'ppo' as const,
              learningRate: v('ppo.learningRate') as number,
              gamma: v('ppo.gamma') as number,
              gaeLambda: v('ppo.gaeLambda') as number,
              clip: 0.2,
              epochs: v('ppo.epochs') as number,
              minibatches: v('ppo.minibatches') as number,
              rolloutSteps: v('ppo.rolloutSteps') as number,
              entropyCoef: v('ppo.entropyCoef') as number,
            }
          : {
              name: 'ars' as const,
              stepSize: v('ars.stepSize') as number,
              directions: v('ars.directions') as number,
              topDirections: Math.max(1, Math.round((v('ars.directions') as number) * (v('ars.topShare') as number))),
              noise: v('ars.noise') as number,
            };
  return {
    task: brief.id,
    environment: {
      params,
      wrappers: algo === 'ppo' && v('normalizeObs') ? ['normalize-observation'] : [],
      numEnvs: algo === 'ppo' ? (v('numEnvs') as number) : algo === 'dqn' ? 4 : 1,
    },
    reward: { expression },
    dataset: { demonstrations: algo === 'ppo' ? (v('demonstrations') as string | null) : null },
    model: { hidden: v('hidden') as number[], activation: v('activation') as 'tanh' | 'relu' },
    algorithm,
    budget: { envSteps, targetReturn: null },
    seed,
  };
}

function decodeSupervised(brief: TaskBrief, v: (name: string) => unknown, seed: number): JobSpecInput {
  const info = brief.supervised!;
  const sources = info.sources.map((src) => ({ id: src.id, weight: v(`source:${src.id}`) as number })).filter((s) => s.weight > 0);
  const chosenSize = info.sources.filter((s) => sources.some((c) => c.id === s.id)).reduce((a, s) => a + s.examples, 0);
  const epochs = v('epochs') as number;
  const cap = brief.budget.maxExamples ?? 0;
  return {
    task: brief.id,
    environment: { params: {}, wrappers: [], numEnvs: 1, standardize: true, inputNoise: v('inputNoise') as number, mixup: v('mixup') as number },
    reward: { objective: v('objective') as 'cross-entropy', labelSmoothing: v('labelSmoothing') as number, weight: null },
    dataset: { demonstrations: null, sources, size: null, validationFraction: 0.1 },
    model: { hidden: v('hidden') as number[], activation: v('activation') as 'tanh' | 'relu', dropout: v('dropout') as number },
    algorithm: {
      name: 'supervised',
      optimizer: v('optimizer') as 'sgd' | 'adam' | 'adamw',
      learningRate: v('learningRate') as number,
      weightDecay: v('optimizer') === 'adamw' ? 0.01 : 0,
      schedule: v('schedule') as 'constant' | 'cosine',
      batchSize: v('batchSize') as number,
      epochs,
    },
    // Enough examples for the chosen epochs where the cap allows, scaled by the budget share.
    budget: { examples: Math.max(1, Math.min(cap, Math.round(Math.max(chosenSize * epochs, 1000) * (v('budgetShare') as number)))) },
    seed,
  };
}
