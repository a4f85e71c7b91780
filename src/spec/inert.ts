/**
 * The fields a job type ignores, one table per job type, and the canonical form of a validated
 * spec with each of them reset to its schema default (removed when it is optional without one).
 *
 * Why: two specs that differ only in a field the engine never reads train the very same job (the
 * same weights, byte for byte); kept, such a field makes an answer count as "changed" (a format
 * reward pays it) and splits one job over several cache keys. Reset, an inert field IS the
 * baseline: `isUnchanged`, the cache key and the executor all read the canonical spec.
 *
 * A rule enters a table only after the engine code was read for it (src/inner/train.ts, the
 * algorithm files in src/inner/algos/) and `src/inner/inert.test.ts` trains real jobs with random
 * values of it and finds the same weights file. Tasks trained by an outside program (a brief with
 * `trainer`) keep every field: the program may read any of them.
 */
import type { z } from 'zod';
import type { TaskBrief } from './brief.js';
import {
  ArsParams,
  BudgetSection,
  DatasetSection,
  DqnParams,
  EnvironmentSection,
  type JobSpec,
  ModelSection,
  PpoParams,
  ReinforceParams,
  RewardSection,
  SupervisedParams,
} from './schema.js';

/** What decides whether a field is inert beyond the spec itself: the job type and its action space. */
export interface InertContext {
  kind: TaskBrief['kind'];
  /** Control tasks: whether actions are discrete (PPO's Gaussian log std is unused then). */
  discreteActions: boolean;
}

/** One field a job type ignores, and when. */
export interface InertRule {
  /** The field, e.g. `model.dropout`. */
  path: string;
  /** When the field is inert (always when absent). */
  when?: (spec: JobSpec) => boolean;
  /** Why the engine ignores it, in words (for the docs and the tests' messages). */
  why: string;
}

const SECTIONS: Record<string, z.ZodObject> = {
  environment: EnvironmentSection,
  reward: RewardSection,
  dataset: DatasetSection,
  model: ModelSection,
  budget: BudgetSection,
};
const ALGORITHM_PARAMS: Record<string, z.ZodObject> = {
  ppo: PpoParams,
  ars: ArsParams,
  dqn: DqnParams,
  reinforce: ReinforceParams,
  supervised: SupervisedParams,
};

const noDemonstrations = (s: JobSpec): boolean => s.dataset.demonstrations === null;

/** Control jobs (every algorithm): the supervised trainer's fields are read by src/inner/algos/supervised.ts only. */
const CONTROL_ALWAYS: InertRule[] = [
  { path: 'environment.standardize', why: 'feature standardisation is the supervised trainer’s' },
  { path: 'environment.inputNoise', why: 'input noise is added by the supervised trainer only' },
  { path: 'environment.mixup', why: 'mixup is the supervised trainer’s' },
  { path: 'reward.labelSmoothing', why: 'a loss setting of the supervised trainer' },
  { path: 'reward.focalGamma', why: 'a loss setting of the supervised trainer' },
  { path: 'reward.huberDelta', why: 'a loss setting of the supervised trainer' },
  { path: 'reward.weight', why: 'per-example weights of the supervised trainer; control jobs train on reward.expression' },
  { path: 'dataset.size', why: 'the size of a supervised mixture' },
  { path: 'dataset.validationFraction', why: 'the supervised trainer’s validation split' },
  { path: 'dataset.bcEpochs', when: noDemonstrations, why: 'behaviour-cloning epochs without demonstrations' },
  { path: 'model.dropout', why: 'dropout masks are drawn by the supervised trainer only' },
  { path: 'budget.examples', why: 'control jobs are budgeted in env steps' },
];

/** Control jobs, per algorithm. */
const CONTROL_BY_ALGORITHM: Record<string, (c: InertContext) => InertRule[]> = {
  ppo: (c) =>
    c.discreteActions ? [{ path: 'algorithm.initLogStd', why: 'the Gaussian log std of continuous actions; this task’s actions are discrete' }] : [],
  // ARS steps one environment and always normalises its states (src/inner/algos/ars.ts: makeEnv(1, { normalize: true })).
  ars: () => [
    { path: 'environment.numEnvs', why: 'ARS steps one environment' },
    { path: 'environment.wrappers', why: 'ARS always normalises observations' },
  ],
};

/** Supervised jobs: the control engine's fields, and settings of choices the spec did not make. */
const SUPERVISED: InertRule[] = [
  { path: 'environment.numEnvs', why: 'supervised jobs step no environments' },
  { path: 'dataset.bcEpochs', why: 'supervised jobs take no demonstrations' },
  { path: 'budget.envSteps', why: 'supervised jobs are budgeted in examples' },
  { path: 'budget.targetReturn', why: 'read by the control engine only' },
  { path: 'budget.stopWhenFlat', why: 'read by the control engine only' },
  { path: 'algorithm.momentum', when: (s) => s.algorithm.name === 'supervised' && s.algorithm.optimizer !== 'sgd', why: 'momentum of the sgd optimiser' },
  { path: 'reward.focalGamma', when: (s) => s.reward.objective !== 'focal', why: 'the focal loss’s gamma' },
  { path: 'reward.huberDelta', when: (s) => s.reward.objective !== 'huber', why: 'the huber loss’s delta' },
  {
    path: 'reward.labelSmoothing',
    when: (s) => s.reward.objective === 'mse' || s.reward.objective === 'huber',
    why: 'label smoothing of class targets; a regression target has none',
  },
  { path: 'model.dropout', when: (s) => s.model.hidden.length === 0, why: 'dropout acts on hidden layers; a linear model has none' },
  {
    path: 'algorithm.earlyStoppingPatience',
    when: (s) => s.dataset.validationFraction === 0,
    why: 'early stopping watches the validation split; validationFraction 0 holds none back',
  },
];

/** The inert fields of a job type (the whole table, whatever the spec's values). */
export function inertTable(c: InertContext, algorithm: string): InertRule[] {
  if (c.kind === 'supervised') return SUPERVISED;
  return [...CONTROL_ALWAYS, ...(CONTROL_BY_ALGORITHM[algorithm]?.(c) ?? [])];
}

/** The rules that hold for this spec: its inert fields. */
export function inertFields(spec: JobSpec, c: InertContext): InertRule[] {
  return inertTable(c, spec.algorithm.name).filter((r) => r.when?.(spec) ?? true);
}

/** Whether `path` is inert for this spec. */
export function isInert(spec: JobSpec, c: InertContext, path: string): boolean {
  return inertFields(spec, c).some((r) => r.path === path);
}

/** The schema of the field at `path` (section.field), for its default. */
function fieldSchema(spec: JobSpec, path: string): z.ZodType | undefined {
  const [section, field] = path.split('.');
  const owner = section === 'algorithm' ? ALGORITHM_PARAMS[spec.algorithm.name] : SECTIONS[section];
  return owner?.shape[field] as z.ZodType | undefined;
}

/**
 * The supervised mixture written canonically: a source of weight 0 is never drawn
 * (src/inner/algos/supervised.ts `drawMixture` keeps weight > 0 only), and with `dataset.size`
 * null every chosen source is used whole whatever its weight, so the weights there are 1.
 */
function canonicalSources(spec: JobSpec): JobSpec['dataset']['sources'] {
  const used = spec.dataset.sources.filter((s) => s.weight > 0);
  return spec.dataset.size === null ? used.map((s) => ({ id: s.id, weight: 1 })) : used;
}

/**
 * The canonical form of a spec that passed validation: every inert field reset to its schema
 * default (removed when optional without one), the supervised mixture written canonically; a
 * task trained by an outside program keeps its spec as it is. Does not change `spec`.
 */
export function withoutInert(spec: JobSpec, brief: Pick<TaskBrief, 'kind' | 'trainer'>, c: InertContext): JobSpec {
  if (brief.trainer) return spec;
  const out = structuredClone(spec) as unknown as Record<string, Record<string, unknown>>;
  for (const rule of inertFields(spec, c)) {
    const [section, field] = rule.path.split('.');
    const schema = fieldSchema(spec, rule.path);
    if (!schema) throw new Error(`inert table: ${rule.path} is not a field of the spec`);
    const fallback = schema.safeParse(undefined);
    if (fallback.success && fallback.data !== undefined) out[section][field] = fallback.data;
    else delete out[section][field];
  }
  const canonical = out as unknown as JobSpec;
  if (c.kind === 'supervised') canonical.dataset.sources = canonicalSources(canonical);
  return canonical;
}
