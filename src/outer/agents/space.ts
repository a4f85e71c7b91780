/**
 * The discrete design space the embedded agents choose from, built from a task's brief:
 * each head is one decision (algorithm, a hyperparameter, a reward term, domain
 * randomisation, the share of the budget). `decode` turns one choice per head into a
 * complete job spec. Heads that do not apply to the chosen algorithm are marked unused,
 * so they do not enter the log-probability.
 */
import { isDeepStrictEqual } from 'node:util';
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
  // Heads added later go last: a checkpoint saved before them keeps its slots (Controller.load pads the new ones).
  'earlyStopping',
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
    // Patience in epochs without a better validation loss, keeping the best weights (0: train every epoch the budget allows).
    { name: 'earlyStopping', options: [0, 10] },
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
      earlyStoppingPatience: v('earlyStopping') as number,
    },
    // Enough examples for the chosen epochs where the cap allows, scaled by the budget share.
    budget: { examples: Math.max(1, Math.min(cap, Math.round(Math.max(chosenSize * epochs, 1000) * (v('budgetShare') as number)))) },
    seed,
  };
}

const isPlainObject = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object' && !Array.isArray(x);

/**
 * A choice written relative to a baseline spec: `chosen` is `decode` of the choice, `anchor` is
 * `decode` of the baseline's nearest choice (`nearestChoice`). Where the two agree the baseline's
 * own value stands (a value off the design space's grid, a field the space does not write); where
 * they differ the chosen value is taken, and an object naming another kind (an algorithm of
 * another `name`) is taken whole. So the baseline's nearest choice writes the baseline spec itself,
 * and every head changed from it writes what `decode` writes. The seed is `chosen`'s.
 */
export function overlayOnBaseline(baseline: unknown, chosen: JobSpecInput, anchor: JobSpecInput): JobSpecInput {
  const merge = (base: unknown, a: unknown, b: unknown): unknown => {
    if (isDeepStrictEqual(a, b)) return base === undefined ? a : base;
    if (!isPlainObject(a) || !isPlainObject(b) || !isPlainObject(base) || a.name !== b.name || ('name' in base && base.name !== a.name)) return a;
    const out: Record<string, unknown> = {};
    for (const k of new Set([...Object.keys(base), ...Object.keys(a)])) {
      const v = k in a ? merge(base[k], a[k], b[k]) : base[k];
      if (v !== undefined) out[k] = v;
    }
    return out;
  };
  return { ...(merge(baseline, chosen, anchor) as JobSpecInput), seed: chosen.seed };
}

/** A value a general-purpose optimiser takes as a categorical choice. */
export type PlainChoice = string | number | boolean | null;

/**
 * One head as a parameter of a general-purpose optimiser (Optuna's samplers): a head whose options
 * are all numbers is a range from the least to the greatest, `int` when they are all integers and
 * log-scaled when they are all positive and span a factor of `LOG_SPAN` or more (learning rates, env
 * steps, batch sizes: options spaced by factors); any other head is a categorical over its options
 * (an array option as its JSON text). A head with one option is no parameter. `pointChoice` maps a
 * point back to one option per head, so the optimiser's proposals decode to the same specs the
 * controller's and the searches' choices do.
 */
export type SearchParam =
  | { name: string; kind: 'float' | 'int'; low: number; high: number; log: boolean }
  | { name: string; kind: 'categorical'; choices: PlainChoice[] };

/** The least ratio of the greatest to the least option that makes a numeric head log-scaled. */
export const LOG_SPAN = 4;

const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const plain = (o: unknown): PlainChoice => (o === null || ['string', 'number', 'boolean'].includes(typeof o) ? (o as PlainChoice) : JSON.stringify(o));

/** The numeric range of a head whose options are all numbers (null for any other head). */
function numericRange(h: Head): { low: number; high: number; log: boolean; int: boolean } | null {
  if (!h.options.every(isNumber)) return null;
  const xs = h.options as number[];
  const low = Math.min(...xs);
  const high = Math.max(...xs);
  return { low, high, log: low > 0 && high / low >= LOG_SPAN, int: xs.every((x) => Number.isInteger(x)) };
}

/** The heads as an optimiser's parameters (see `SearchParam`), in head order, without one-option heads. */
export function searchParams(heads: Head[]): SearchParam[] {
  const out: SearchParam[] = [];
  for (const h of heads) {
    if (new Set(h.options.map((o) => JSON.stringify(o))).size < 2) continue;
    const r = numericRange(h);
    if (r) out.push({ name: h.name, kind: r.int ? 'int' : 'float', low: r.low, high: r.high, log: r.log });
    else {
      const choices = h.options.map(plain);
      if (new Set(choices.map((c) => JSON.stringify(c))).size !== choices.length) throw new Error(`design space: head "${h.name}" has options that read alike`);
      out.push({ name: h.name, kind: 'categorical', choices });
    }
  }
  return out;
}

/** The option of a numeric head nearest `x` (on the head's log scale when it has one; the first of a tie). */
function nearestNumber(h: Head, x: number): number {
  const r = numericRange(h)!;
  const f = (v: number): number => (r.log ? Math.log(Math.max(v, Number.MIN_VALUE)) : v);
  let best = 0;
  h.options.forEach((o, i) => {
    if (Math.abs(f(o as number) - f(x)) < Math.abs(f(h.options[best] as number) - f(x))) best = i;
  });
  return best;
}

/** One option per head for an optimiser's point; throws, in one line, on a value the head cannot take. */
export function pointChoice(heads: Head[], point: Record<string, unknown>): number[] {
  const params = new Map(searchParams(heads).map((p) => [p.name, p]));
  return heads.map((h) => {
    const p = params.get(h.name);
    if (!p) return 0;
    if (!(h.name in point)) throw new Error(`the point has no value for "${h.name}"`);
    const v = point[h.name];
    if (p.kind === 'categorical') {
      const i = p.choices.indexOf(v as PlainChoice);
      if (i < 0) throw new Error(`"${h.name}": ${JSON.stringify(v)?.slice(0, 40)} is none of its choices`);
      return i;
    }
    if (!isNumber(v) || v < p.low - 1e-9 * Math.abs(p.low) || v > p.high + 1e-9 * Math.abs(p.high)) {
      throw new Error(`"${h.name}": ${JSON.stringify(v)?.slice(0, 40)} is outside [${p.low}, ${p.high}]`);
    }
    return nearestNumber(h, v);
  });
}

/** The optimiser's point of one option per head (the inverse of `pointChoice`). */
export function choicePoint(heads: Head[], choice: number[]): Record<string, PlainChoice> {
  const names = new Set(searchParams(heads).map((p) => p.name));
  const point: Record<string, PlainChoice> = {};
  heads.forEach((h, i) => {
    if (names.has(h.name)) point[h.name] = plain(h.options[choice[i]]);
  });
  return point;
}

/** Reads `path` in a JSON-like value (undefined where it is missing). */
function at(value: unknown, ...path: string[]): unknown {
  let v = value;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** The option of `h` nearest a value a spec holds (the first option when the spec says nothing the head can match). */
function nearestOption(h: Head, v: unknown): number {
  if (v === undefined) return 0;
  if (isNumber(v) && numericRange(h)) return nearestNumber(h, v);
  const exact = h.options.findIndex((o) => JSON.stringify(o) === JSON.stringify(v));
  if (exact >= 0) return exact;
  if (Array.isArray(v) && v.every(isNumber) && h.options.every((o) => Array.isArray(o))) {
    // A network's layers: the option nearest in depth, then in total width (log).
    const d = (o: number[]): number =>
      Math.abs(o.length - v.length) + Math.abs(Math.log1p(o.reduce((a, b) => a + b, 0)) - Math.log1p(v.reduce((a, b) => a + b, 0)));
    let best = 0;
    h.options.forEach((o, i) => {
      if (d(o as number[]) < d(h.options[best] as number[])) best = i;
    });
    return best;
  }
  return 0;
}

/**
 * The choice nearest a spec, head by head: each head takes the option nearest what the spec says
 * of its decision (numbers on the head's scale, a network by depth and width, anything else only
 * by equality), and its first option where the spec says nothing of it (a head of another
 * algorithm). `decode` of the choice is the spec itself when the spec lies in the design space;
 * for another spec (a task's baseline) it is the nearest spec the space can write.
 */
export function nearestChoice(brief: TaskBrief, heads: Head[], spec: unknown): number[] {
  const algo = at(spec, 'algorithm', 'name');
  const value = (name: string): unknown => {
    const dot = name.indexOf('.');
    if (dot > 0 && ALGORITHM_ORDER.includes(name.slice(0, dot) as never)) {
      if (algo !== name.slice(0, dot)) return undefined;
      if (name === 'ars.topShare') {
        const top = at(spec, 'algorithm', 'topDirections');
        const dirs = at(spec, 'algorithm', 'directions');
        return isNumber(top) && isNumber(dirs) && dirs > 0 ? top / dirs : undefined;
      }
      return at(spec, 'algorithm', name.slice(dot + 1));
    }
    if (name.startsWith('source:')) {
      const sources = at(spec, 'dataset', 'sources');
      const s = Array.isArray(sources) ? sources.find((x) => at(x, 'id') === name.slice(7)) : undefined;
      return s ? at(s, 'weight') : 0;
    }
    switch (name) {
      case 'algorithm':
        return algo;
      case 'objective':
      case 'labelSmoothing':
        return at(spec, 'reward', name) ?? (name === 'labelSmoothing' ? 0 : undefined);
      case 'hidden':
      case 'activation':
        return at(spec, 'model', name);
      case 'dropout':
        return at(spec, 'model', name) ?? 0;
      case 'earlyStopping':
        return at(spec, 'algorithm', 'earlyStoppingPatience') ?? 0;
      case 'optimizer':
      case 'learningRate':
      case 'batchSize':
      case 'epochs':
      case 'schedule':
        return at(spec, 'algorithm', name);
      case 'mixup':
      case 'inputNoise':
        return at(spec, 'environment', name) ?? 0;
      case 'normalizeObs': {
        const w = at(spec, 'environment', 'wrappers');
        return Array.isArray(w) && w.includes('normalize-observation');
      }
      case 'randomize': {
        const p = at(spec, 'environment', 'params');
        return p !== null && typeof p === 'object' && Object.values(p).some((x) => Array.isArray(x));
      }
      case 'numEnvs':
        return at(spec, 'environment', 'numEnvs');
      case 'demonstrations':
        return at(spec, 'dataset', 'demonstrations') ?? null;
      case 'envSteps':
        return at(spec, 'budget', 'envSteps');
      default:
        return undefined;
    }
  };
  // The reward grammar decode writes: r, or r ± w·f(v) with f ∈ {abs, square, cos}.
  const expr = at(spec, 'reward', 'expression');
  const m = typeof expr === 'string' ? /^r ([+-]) ([0-9.e+-]+) \* (?:abs\((\w+)\)|cos\((\w+)\)|(\w+)\^2)$/.exec(expr.trim()) : null;
  const reward: Record<string, unknown> = m
    ? { rewardTerm: m[3] ?? m[4] ?? m[5], rewardSign: m[1], rewardForm: m[3] ? 'abs' : m[4] ? 'cos' : 'square', rewardWeight: Number(m[2]) }
    : { rewardTerm: 'none' };
  const choice = heads.map((h) => nearestOption(h, h.name in reward ? reward[h.name] : value(h.name)));
  // The budget share: the option whose decoded examples come nearest the spec's (decode clips to the cap).
  const share = heads.findIndex((h) => h.name === 'budgetShare');
  const examples = at(spec, 'budget', 'examples');
  if (share >= 0 && isNumber(examples) && examples > 0) {
    let best = 0;
    let bestGap = Infinity;
    heads[share].options.forEach((_, i) => {
      const c = [...choice];
      c[share] = i;
      const got = (decode(brief, heads, c, 0).budget as { examples?: number }).examples ?? 1;
      const gap = Math.abs(Math.log(got) - Math.log(examples));
      if (gap < bestGap) [best, bestGap] = [i, gap];
    });
    choice[share] = best;
  }
  return choice;
}
