/**
 * The design space's declarations: one entry per head (one decision), in the order a brief's heads
 * are sampled and written. Each entry says where the decision lands in a job spec (`path`), its
 * options, the algorithm it belongs to, and — only where the option is not written as it is at its
 * path — how it is written and read back. `space.ts` derives everything else from this table:
 * the heads of a brief, `decode`, the nearest choice of a spec, the optimisers' parameters, the
 * learning agent's output slots and the published description. Adding a hyperparameter is one
 * entry here, with the next free `slot`.
 */
import type { TaskBrief } from '../../spec/brief.js';
import { CATALOG_IDS } from '../../tasks/supervised/catalog.js';

/** Every algorithm a head may offer, in the controller's fixed option order. */
export const ALGORITHM_ORDER = ['ppo', 'ars', 'dqn', 'reinforce', 'supervised'] as const;

/** The source ids of the standard supervised catalog (one head each). */
export const SOURCE_IDS = CATALOG_IDS;

type Section = Record<string, unknown>;
/** A job spec while it is written: plain JSON objects, each section there. */
export type Draft = Section & { environment: Section; reward: Section; dataset: Section; model: Section; algorithm: Section; budget: Section };

/** What a declaration may consult while its option is written: the brief and any head's chosen option. */
export interface WriteContext {
  brief: TaskBrief;
  /** The head's own name (a source head's names its source). */
  name: string;
  value: (name: string) => unknown;
}

/** What a declaration may consult to choose its option from the others' (see `refine`). */
export interface RefineContext {
  brief: TaskBrief;
  spec: unknown;
  choice: number[];
  /** The head's position in the brief's heads. */
  index: number;
  options: readonly unknown[];
  decode: (choice: number[]) => Draft;
}

/** One head's declaration. */
export interface HeadDeclaration {
  /** The head's name in a brief (a source head is named `source:<id>` per source of the brief). */
  name: string;
  /** Its first output slot in a learning agent: a checkpoint indexes heads by it, so a new head takes the next free number. */
  slot: number;
  /** The name of that slot when it differs from `name` (a control head named like a supervised one). */
  slotName?: string;
  /** One head per source of the brief, in the catalogue's order (they take `SOURCE_IDS.length` slots). */
  perSource?: true;
  /** Where the decision lands in the spec. */
  path: readonly string[];
  /** Its options, the same for every brief or read from the brief. */
  options: readonly unknown[] | ((brief: TaskBrief) => readonly unknown[]);
  /**
   * The algorithm it belongs to: left out of the heads of a brief that does not allow it, written
   * only when it is chosen, no part of the log-probability of another, and, for a field of the
   * algorithm's own section, read only from a spec of that algorithm.
   */
  algorithm?: (typeof ALGORITHM_ORDER)[number];
  /** Whether it counts for a choice, beyond its algorithm (a decision another one makes moot). */
  activeWhen?: (value: (name: string) => unknown) => boolean;
  /** What a spec's field means when it is missing (the schema's default). */
  absent?: unknown;
  /**
   * The option as it lands at `path` for a brief that bounds it (the budget's cap): what is written
   * there, and what the task's options are as published (`describeSpace`).
   */
  bound?: (option: unknown, brief: TaskBrief) => unknown;
  /** Writes the option where writing it as it is at `path` is not what it means. */
  write?: (spec: Draft, option: unknown, ctx: WriteContext) => void;
  /** What a spec says of the decision where that is not the value at `path` (undefined: nothing). */
  read?: (spec: unknown, name: string) => unknown;
  /** Chooses the option once the other heads are chosen, for a decision a spec only shows through them. */
  refine?: (ctx: RefineContext) => number;
}

/** Reads `path` in a JSON-like value (undefined where it is missing). */
export function at(value: unknown, ...path: string[]): unknown {
  let v = value;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/**
 * The reward grammar: `r`, or `r ± w * f(v)` for one of the brief's variables v and a form f, each
 * form written as the text before and after the variable. The writer and the parser are both made
 * from this table.
 */
const REWARD_FORMS: Record<string, readonly [string, string]> = { abs: ['abs(', ')'], square: ['', '^2'], cos: ['cos(', ')'] };

function rewardExpression(v: (name: string) => unknown): string {
  const term = v('rewardTerm') as string;
  if (term === 'none') return 'r';
  const [before, after] = REWARD_FORMS[v('rewardForm') as string] ?? REWARD_FORMS.square;
  return `r ${v('rewardSign') as string} ${v('rewardWeight') as number} * ${before}${term}${after}`;
}

const literal = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const REWARD_PATTERN = new RegExp(
  `^r ([+-]) ([0-9.e+-]+) \\* (?:${Object.values(REWARD_FORMS)
    .map(([before, after]) => `${literal(before)}(\\w+)${literal(after)}`)
    .join('|')})$`,
);

/** The reward heads' values a spec's expression was written with (rewardTerm `none` for any other expression). */
function parseReward(spec: unknown): Record<string, unknown> {
  const expr = at(spec, 'reward', 'expression');
  const m = typeof expr === 'string' ? REWARD_PATTERN.exec(expr.trim()) : null;
  if (!m) return { rewardTerm: 'none' };
  const form = Object.keys(REWARD_FORMS).findIndex((_, i) => m[3 + i] !== undefined);
  return { rewardTerm: m[3 + form], rewardSign: m[1], rewardForm: Object.keys(REWARD_FORMS)[form], rewardWeight: Number(m[2]) };
}

const readReward = (spec: unknown, name: string): unknown => parseReward(spec)[name];
const shaped = (v: (name: string) => unknown): boolean => v('rewardTerm') !== 'none';
/** The reward's sign, form and weight are written with its term, as one expression. */
const writtenWithTerm = (): void => {};

/** The task's stated physics, or ±20% around them (within the parameters' bounds). */
function writeRandomize(spec: Draft, option: unknown, { brief }: WriteContext): void {
  const params: Record<string, number | [number, number]> = {};
  for (const p of brief.environment.params) {
    if (option) params[p.name] = [Number(Math.max(p.min, p.default * 0.8).toPrecision(4)), Number(Math.min(p.max, p.default * 1.2).toPrecision(4))];
    else params[p.name] = p.default;
  }
  spec.environment.params = params;
}

/** Enough examples for the chosen sources and epochs where the cap allows, scaled by the budget share. */
function writeBudgetShare(spec: Draft, option: unknown, { brief }: WriteContext): void {
  const chosen = new Set((spec.dataset.sources as { id: string }[]).map((s) => s.id));
  const chosenSize = brief.supervised!.sources.filter((s) => chosen.has(s.id)).reduce((a, s) => a + s.examples, 0);
  const cap = brief.budget.maxExamples ?? 0;
  spec.budget.examples = Math.max(1, Math.min(cap, Math.round(Math.max(chosenSize * (spec.algorithm.epochs as number), 1000) * (option as number))));
}

/** The budget share a spec's examples show: the option whose decoded examples come nearest them (decode clips to the cap). */
function refineBudgetShare({ spec, choice, index, options, decode }: RefineContext): number {
  const examples = at(spec, 'budget', 'examples');
  if (!isNumber(examples) || examples <= 0) return choice[index];
  let best = 0;
  let bestGap = Infinity;
  options.forEach((_, i) => {
    const c = [...choice];
    c[index] = i;
    const got = (decode(c).budget as { examples?: number }).examples ?? 1;
    const gap = Math.abs(Math.log(got) - Math.log(examples));
    if (gap < bestGap) [best, bestGap] = [i, gap];
  });
  return best;
}

/** A hyperparameter of one algorithm's own section, named `<algorithm>.<field>`. */
function own(algorithm: 'ppo' | 'ars' | 'dqn' | 'reinforce', field: string, slot: number, options: readonly number[]): HeadDeclaration {
  return { name: `${algorithm}.${field}`, slot, path: ['algorithm', field], options, algorithm };
}

/** The heads of a supervised brief, in the order they are sampled and written. */
export const SUPERVISED_HEADS: readonly HeadDeclaration[] = [
  { name: 'algorithm', slot: 0, path: ['algorithm', 'name'], options: ['supervised'] },
  {
    name: 'source',
    slot: 1,
    perSource: true,
    path: ['dataset', 'sources'],
    options: [0, 0.5, 1],
    write: (spec, option, { name }) => {
      if ((option as number) > 0) (spec.dataset.sources as Section[]).push({ id: name.slice('source:'.length), weight: option });
    },
    read: (spec, name) => {
      const sources = at(spec, 'dataset', 'sources');
      const s = Array.isArray(sources) ? sources.find((x) => at(x, 'id') === name.slice('source:'.length)) : undefined;
      return s ? at(s, 'weight') : 0;
    },
  },
  { name: 'objective', slot: 7, path: ['reward', 'objective'], options: (b) => (classifies(b) ? ['cross-entropy', 'focal'] : ['mse', 'huber']) },
  { name: 'labelSmoothing', slot: 8, path: ['reward', 'labelSmoothing'], options: (b) => (classifies(b) ? [0, 0.1, 0.2] : [0]), absent: 0 },
  { name: 'hidden', slot: 9, path: ['model', 'hidden'], options: [[32], [64, 64], [128, 128]] },
  { name: 'activation', slot: 10, path: ['model', 'activation'], options: ['tanh', 'relu'] },
  { name: 'dropout', slot: 11, path: ['model', 'dropout'], options: [0, 0.2], absent: 0 },
  {
    name: 'optimizer',
    slot: 12,
    path: ['algorithm', 'optimizer'],
    options: ['sgd', 'adam', 'adamw'],
    // AdamW is Adam with its weight decay: the decay comes with the choice.
    write: (spec, option) => Object.assign(spec.algorithm, { optimizer: option, weightDecay: option === 'adamw' ? 0.01 : 0 }),
  },
  { name: 'learningRate', slot: 13, path: ['algorithm', 'learningRate'], options: [1e-3, 3e-3, 1e-2] },
  { name: 'batchSize', slot: 14, path: ['algorithm', 'batchSize'], options: [16, 32, 64] },
  { name: 'epochs', slot: 15, path: ['algorithm', 'epochs'], options: [20, 50, 100] },
  // Patience in epochs without a better validation loss, keeping the best weights (0: train every epoch the budget allows).
  { name: 'earlyStopping', slot: 47, path: ['algorithm', 'earlyStoppingPatience'], options: [0, 10], absent: 0 },
  { name: 'schedule', slot: 16, path: ['algorithm', 'schedule'], options: ['constant', 'cosine'] },
  { name: 'mixup', slot: 17, path: ['environment', 'mixup'], options: [0, 0.2], absent: 0 },
  { name: 'inputNoise', slot: 18, path: ['environment', 'inputNoise'], options: [0, 0.1], absent: 0 },
  // How a table's categorical columns and missing cells become inputs: one option where the table has none.
  {
    name: 'columns.categorical',
    slot: 48,
    path: ['dataset', 'columns', 'categorical'],
    options: (b) => (hasCategorical(b) ? ['one-hot', 'frequency', 'target'] : ['one-hot']),
    absent: 'one-hot',
  },
  {
    name: 'columns.maxLevels',
    slot: 49,
    path: ['dataset', 'columns', 'maxLevels'],
    options: (b) => (hasCategorical(b) ? [4, 16, 64] : [16]),
    activeWhen: (v) => v('columns.categorical') === 'one-hot',
    absent: 16,
  },
  {
    name: 'columns.missing',
    slot: 50,
    path: ['dataset', 'columns', 'missing'],
    options: (b) => (hasMissing(b) ? ['drop-row', 'mean', 'median', 'constant'] : ['median']),
    absent: 'median',
  },
  {
    name: 'columns.indicator',
    slot: 51,
    path: ['dataset', 'columns', 'indicator'],
    options: (b) => (hasMissing(b) ? [false, true] : [true]),
    activeWhen: (v) => v('columns.missing') !== 'drop-row',
    absent: true,
  },
  {
    name: 'budgetShare',
    slot: 19,
    path: ['budget', 'examples'],
    options: [0.25, 0.5, 1],
    write: writeBudgetShare,
    read: () => undefined,
    refine: refineBudgetShare,
  },
];

const hasCategorical = (brief: TaskBrief): boolean => brief.supervised?.columns?.some((c) => c.kind === 'categorical') ?? false;
const hasMissing = (brief: TaskBrief): boolean => brief.supervised?.columns?.some((c) => c.missing > 0) ?? false;

function classifies(brief: TaskBrief): boolean {
  return brief.supervised!.target.type === 'classification';
}

/** The heads of a control brief, in the order they are sampled and written. */
export const CONTROL_HEADS: readonly HeadDeclaration[] = [
  { name: 'algorithm', slot: 0, path: ['algorithm', 'name'], options: (b) => b.algorithms },
  { name: 'hidden', slot: 20, slotName: 'control.hidden', path: ['model', 'hidden'], options: [[], [16], [32, 32], [64, 64]] },
  { name: 'activation', slot: 21, slotName: 'control.activation', path: ['model', 'activation'], options: ['tanh', 'relu'] },
  {
    name: 'normalizeObs',
    slot: 22,
    path: ['environment', 'wrappers'],
    options: (b) => (b.environment.wrappers.includes('normalize-observation') ? [false, true] : [false]),
    activeWhen: (v) => v('algorithm') !== 'ars', // ARS always normalises states
    write: (spec, option, { value }) => {
      if (option && value('algorithm') === 'ppo') spec.environment.wrappers = ['normalize-observation'];
    },
    read: (spec) => {
      const w = at(spec, 'environment', 'wrappers');
      return Array.isArray(w) && w.includes('normalize-observation');
    },
  },
  {
    name: 'randomize',
    slot: 23,
    path: ['environment', 'params'],
    options: (b) => (b.environment.params.length ? [false, true] : [false]),
    write: writeRandomize,
    read: (spec) => {
      const p = at(spec, 'environment', 'params');
      return p !== null && typeof p === 'object' && Object.values(p).some((x) => Array.isArray(x));
    },
  },
  {
    name: 'rewardTerm',
    slot: 24,
    path: ['reward', 'expression'],
    options: (b) => ['none', ...b.environment.observation.map((v) => v.name)],
    write: (spec, _, { value }) => (spec.reward.expression = rewardExpression(value)),
    read: readReward,
  },
  { name: 'rewardSign', slot: 25, path: ['reward', 'expression'], options: ['-', '+'], activeWhen: shaped, write: writtenWithTerm, read: readReward },
  {
    name: 'rewardForm',
    slot: 26,
    path: ['reward', 'expression'],
    options: Object.keys(REWARD_FORMS),
    activeWhen: shaped,
    write: writtenWithTerm,
    read: readReward,
  },
  { name: 'rewardWeight', slot: 27, path: ['reward', 'expression'], options: [0.1, 1, 10], activeWhen: shaped, write: writtenWithTerm, read: readReward },
  {
    name: 'demonstrations',
    slot: 28,
    path: ['dataset', 'demonstrations'],
    options: (b) => [null, ...b.demonstrations.map((d) => d.id)],
    algorithm: 'ppo',
    absent: null,
  },
  // Experience in env steps, clipped to the task's cap: what a problem needs does not scale with the cap.
  {
    name: 'envSteps',
    slot: 29,
    path: ['budget', 'envSteps'],
    options: [2500, 5000, 10_000, 25_000, 50_000],
    bound: (option, brief) => Math.min(brief.budget.maxEnvSteps, option as number),
  },
  { name: 'numEnvs', slot: 30, path: ['environment', 'numEnvs'], options: [4, 8, 16], algorithm: 'ppo' },
  own('ppo', 'learningRate', 31, [1e-4, 3e-4, 1e-3, 3e-3]),
  own('ppo', 'rolloutSteps', 32, [32, 128, 256]),
  own('ppo', 'epochs', 33, [4, 10, 20]),
  own('ppo', 'minibatches', 34, [1, 4]),
  own('ppo', 'gamma', 35, [0.98, 0.99]),
  own('ppo', 'gaeLambda', 36, [0.8, 0.95]),
  own('ppo', 'entropyCoef', 37, [0, 0.01]),
  own('ars', 'stepSize', 38, [0.01, 0.02, 0.05]),
  own('ars', 'directions', 39, [4, 8, 16]),
  {
    name: 'ars.topShare',
    slot: 40,
    path: ['algorithm', 'topDirections'],
    options: [0.5, 1],
    algorithm: 'ars',
    // The share of the directions kept, written as their number (at least one).
    write: (spec, option) => (spec.algorithm.topDirections = Math.max(1, Math.round((spec.algorithm.directions as number) * (option as number)))),
    read: (spec) => {
      const top = at(spec, 'algorithm', 'topDirections');
      const dirs = at(spec, 'algorithm', 'directions');
      return isNumber(top) && isNumber(dirs) && dirs > 0 ? top / dirs : undefined;
    },
  },
  own('ars', 'noise', 41, [0.01, 0.03, 0.05]),
  own('dqn', 'learningRate', 42, [1e-4, 5e-4, 2.5e-3]),
  own('dqn', 'explorationFraction', 43, [0.1, 0.3, 0.5]),
  own('dqn', 'targetUpdateInterval', 44, [250, 1000, 5000]),
  own('reinforce', 'learningRate', 45, [3e-4, 1e-3, 3e-3]),
  own('reinforce', 'episodesPerUpdate', 46, [1, 4, 8]),
];

/**
 * The spec a choice is written into before its heads write their options: the fields no head
 * decides, and every field a head writes in the place it takes in the spec.
 */
export function draftSpec(brief: TaskBrief, algorithm: string, seed: number): Draft {
  const model = { hidden: [], activation: 'tanh' };
  if (brief.kind === 'supervised') {
    return {
      task: brief.id,
      environment: { params: {}, wrappers: [], numEnvs: 1, standardize: true, inputNoise: 0, mixup: 0 },
      reward: { objective: null, labelSmoothing: 0, weight: null },
      dataset: { demonstrations: null, sources: [], size: null, validationFraction: 0.1, columns: {} },
      model: { ...model, dropout: 0 },
      algorithm: { ...ALGORITHM_DRAFTS.supervised },
      budget: { examples: 0 },
      seed,
    };
  }
  return {
    task: brief.id,
    environment: { params: {}, wrappers: [], numEnvs: algorithm === 'dqn' ? 4 : 1 },
    reward: { expression: 'r' },
    dataset: { demonstrations: null },
    model,
    algorithm: { ...ALGORITHM_DRAFTS[algorithm] },
    budget: { envSteps: 0, targetReturn: null },
    seed,
  };
}

/** Each algorithm's section: its fixed settings, and a place for each field its heads write. */
const ALGORITHM_DRAFTS: Record<string, Section> = {
  ppo: { name: 'ppo', learningRate: 0, gamma: 0, gaeLambda: 0, clip: 0.2, epochs: 0, minibatches: 0, rolloutSteps: 0, entropyCoef: 0 },
  ars: { name: 'ars', stepSize: 0, directions: 0, topDirections: 0, noise: 0 },
  dqn: {
    name: 'dqn',
    learningRate: 0,
    gamma: 0.99,
    bufferSize: 50_000,
    batchSize: 64,
    learningStarts: 1000,
    trainFrequency: 4,
    targetUpdateInterval: 0,
    explorationFraction: 0,
    explorationFinal: 0.05,
  },
  reinforce: { name: 'reinforce', learningRate: 0, gamma: 0.99, episodesPerUpdate: 0 },
  supervised: {
    name: 'supervised',
    optimizer: 'adam',
    learningRate: 0,
    weightDecay: 0,
    schedule: 'constant',
    batchSize: 0,
    epochs: 0,
    earlyStoppingPatience: 0,
  },
};
