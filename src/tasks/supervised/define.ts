/**
 * The public half of a supervised task: its dataset, the catalog of sources (how each is
 * made from the training pool, described in words), the baseline spec, and the brief
 * built from them. The split into training pool and hidden test set, the anchors and an
 * evaluation command belong to `evaluate.ts`, on the harness side, looked up by task id;
 * nothing here imports it.
 */
import type { CommandTrainer, TaskBrief } from '../../spec/brief.js';
import type { JobSpecInput } from '../../spec/schema.js';
import type { Dataset } from '../../spec/data.js';

/** One source of the catalog: made from the training pool by a seeded recipe. */
export interface SourceRecipe {
  id: string;
  /** What a practitioner would write in the data card. */
  description: string;
  /** Approximate number of examples (exact counts depend on the pool). */
  examples: number;
  build(pool: Dataset, seed: number): Dataset;
}

/** The metrics of supervised tasks. */
export type SupervisedMetricName = 'accuracy' | 'macro-f1' | 'log-loss' | 'rmse' | 'mae' | 'r2';

/** Everything that defines a supervised task. */
export interface SupervisedTaskDef {
  id: string;
  title: string;
  family: string;
  split: 'train' | 'held-out' | 'example';
  data: 'real' | 'synthetic';
  description: string;
  /** The canonical metric of the hidden evaluation. */
  metric: SupervisedMetricName;
  /** Loads the clean distribution (deterministic). */
  load(): Dataset;
  /**
   * Share of the clean data held out for the hidden test set: round(testFraction · count) rows of
   * each class (of all rows for regression). Which rows is drawn from the evaluation secret; how
   * many is public (the brief's `evaluation.rows`).
   */
  testFraction: number;
  sources: SourceRecipe[];
  baseline: JobSpecInput;
  maxExamples: number;
  maxWallSeconds: number;
  /** An outside program trains the jobs instead of the built-in engine. */
  trainer?: CommandTrainer;
}

const METRIC_WORDS = {
  accuracy:
    'accuracy of the predicted class on a held-out test set drawn from the clean distribution; ' +
    'normalised so that always predicting the most frequent class scores 0 and a perfect model scores 1',
  'macro-f1':
    'macro-averaged F1 over the classes on a held-out test set drawn from the clean distribution; ' +
    'normalised so that always predicting the most frequent class scores 0 and a perfect model scores 1',
  rmse:
    'root-mean-square error of the prediction on a held-out test set drawn from the clean distribution ' +
    '(lower is better); normalised so that predicting the training mean scores 0 and an exact model scores 1',
  'log-loss':
    'log-loss (cross-entropy) of the predicted class probabilities on a held-out test set drawn from the clean distribution (lower ' +
    "is better); normalised so that predicting the training pool's class frequencies scores 0 and a certain, correct model scores 1",
  mae:
    'mean absolute error of the prediction on a held-out test set drawn from the clean distribution (lower ' +
    'is better); normalised so that predicting the training median scores 0 and an exact model scores 1',
  r2:
    'coefficient of determination (R²) of the prediction on a held-out test set drawn from the clean ' +
    'distribution; normalised so that predicting the training mean scores 0 and an exact model scores 1',
} as const;

/** Rows of the hidden test set: round(testFraction · count) of each class, of all rows for regression (the rule of `split`, inner/data). */
export function testRows(d: Dataset, testFraction: number): number {
  if (d.kind !== 'classification') return Math.round(testFraction * d.y.length);
  const counts = new Map<number, number>();
  for (const y of d.y) counts.set(y, (counts.get(y) ?? 0) + 1);
  return [...counts.values()].reduce((a, c) => a + Math.round(testFraction * c), 0);
}

/** Each feature's kind, level count and share of missing cells (of the whole table: public like its size). */
function columnFacts(d: Dataset): NonNullable<TaskBrief['supervised']>['columns'] {
  return d.features.map((name, j) => {
    const c = d.columns![j];
    const missing = d.x.length ? Number((d.x.filter((row) => Number.isNaN(row[j])).length / d.x.length).toFixed(3)) : 0;
    return c.kind === 'categorical' ? { name, kind: c.kind, levels: c.levels.length, missing } : { name, kind: c.kind, missing };
  });
}

/** The brief of a supervised task: features, target, the source catalog, caps; never the test set. */
export function supervisedBrief(def: SupervisedTaskDef): TaskBrief {
  const d = def.load();
  const features = d.features.map((name) => ({ name, description: d.descriptions[name] ?? name }));
  return {
    id: def.id,
    title: def.title,
    family: def.family,
    kind: 'supervised',
    split: def.split,
    data: def.data,
    description: def.description,
    environment: {
      id: 'dataset',
      observation: features,
      actions: d.kind === 'classification' ? `predict one of ${d.classes!.length} classes` : 'predict a real value',
      params: [],
      wrappers: [],
    },
    rewardVariables: [...features, { name: 'label', description: d.kind === 'classification' ? "the example's class index" : "the example's target value" }],
    demonstrations: [],
    supervised: {
      features,
      target: { name: d.target, description: d.descriptions[d.target] ?? d.target, type: d.kind, classes: d.classes },
      ...(d.columns ? { columns: columnFacts(d) } : {}),
      sources: def.sources.map((s) => ({ id: s.id, description: s.description, examples: s.examples })),
    },
    algorithms: ['supervised'],
    budget: { maxEnvSteps: 0, maxExamples: def.maxExamples, maxWallSeconds: def.maxWallSeconds },
    metric: METRIC_WORDS[def.metric],
    evaluation: { rows: testRows(d, def.testFraction) },
    ...(def.trainer ? { trainer: def.trainer } : {}),
  };
}

/** A baseline spec for supervised tasks, the way a practitioner starts: one source, Adam, an MLP. */
export function supervisedSpec(
  task: string,
  o: {
    sources: { id: string; weight: number }[];
    objective: 'cross-entropy' | 'focal' | 'mse' | 'huber';
    hidden?: number[];
    epochs?: number;
    examples: number;
    learningRate?: number;
    batchSize?: number;
    labelSmoothing?: number;
    size?: number | null;
    seed?: number;
    /** Share held back for validation (default 0.1); 0 trains on every row, so the seed draws no split. */
    validationFraction?: number;
    weightDecay?: number;
    schedule?: 'constant' | 'cosine' | 'step';
  },
): JobSpecInput {
  return {
    task,
    environment: { params: {}, wrappers: [], numEnvs: 1, standardize: true, inputNoise: 0, mixup: 0 },
    reward: { objective: o.objective, labelSmoothing: o.labelSmoothing ?? 0, weight: null },
    dataset: { demonstrations: null, sources: o.sources, size: o.size ?? null, validationFraction: o.validationFraction ?? 0.1 },
    model: { hidden: o.hidden ?? [64, 64], activation: 'relu', dropout: 0 },
    algorithm: {
      name: 'supervised',
      optimizer: 'adam',
      learningRate: o.learningRate ?? 0.001,
      weightDecay: o.weightDecay ?? 0,
      schedule: o.schedule ?? 'constant',
      batchSize: o.batchSize ?? 32,
      epochs: o.epochs ?? 50,
    },
    budget: { examples: o.examples, targetReturn: null },
    seed: o.seed ?? 1,
  };
}
