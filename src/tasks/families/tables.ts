/**
 * What the two real-table families (`tabular`, `vega-more`) share: a family over base tables
 * with a drawn target (the table's own or one of its numeric columns), a drawn subset of the other
 * features, a drawn share of the rows, the metric, and the standard source catalog with drawn
 * corruption strengths (label noise, shifted feature, class imbalance, clean-sample size). Each
 * family folder names its tables, ranges and test share.
 */
import { subsample } from '../../inner/data/index.js';
import type { Dataset } from '../../spec/data.js';
import { type Rng, mixSeed } from '../../util/rng.js';
import { type SupervisedMetricName, type SupervisedTaskDef, supervisedSpec } from '../supervised/define.js';
import { standardCatalog } from '../supervised/catalog.js';
import { type TaskFamily, drawTasks, sig } from './types.js';

/** A base table, the numeric columns that may serve as a regression target, and (optionally) what it is in words. */
export interface TableBase {
  name: string;
  load(): Dataset;
  numeric: string[];
  words?: string;
  /** Features every task of this table keeps (the rest are drawn); without them the target cannot be predicted at all. */
  keep?: string[];
}

/** One table family's settings. */
export interface TableFamilyConfig {
  name: string;
  split: 'train' | 'held-out';
  description: string;
  bases: TableBase[];
  /** The metrics a classification task may draw (regression: RMSE, MAE, R²). */
  classificationMetrics: SupervisedMetricName[];
  /** Upper end of the drawn label-noise rate (the lower is 0.1). */
  maxNoise: number;
  /** Lower end of the drawn relative size of a non-first class in the imbalanced source. */
  minImbalance: number;
  /** Salts of the family's parameter stream and of each task's row subsample. */
  salt: number;
  rowSalt: number;
  /**
   * Share of each task's rows held out for the hidden test set: public, as the sources' sizes follow
   * from it (the family's `evaluate.ts` hands it to the evaluation, which draws the split).
   */
  testFraction: number;
}

/**
 * The data set with `target` as its target: the own target, or a numeric feature as a regression
 * target (a regression data set's own target then becomes a feature; a class target is dropped).
 */
export function retarget(d: Dataset, target: string): Dataset {
  if (target === d.target) return d;
  const j = d.features.indexOf(target);
  if (j < 0) throw new Error(`retarget: "${target}" is not a column of ${d.name}`);
  const keep = d.features.map((_, k) => k).filter((k) => k !== j);
  const withOld = d.kind === 'regression';
  return {
    name: d.name,
    features: [...keep.map((k) => d.features[k]), ...(withOld ? [d.target] : [])],
    target,
    kind: 'regression',
    x: d.x.map((row, i) => [...keep.map((k) => row[k]), ...(withOld ? [d.y[i]] : [])]),
    y: d.x.map((row) => row[j]),
    descriptions: d.descriptions,
    summary: d.summary,
    history: [...(d.history ?? []), `retarget(${target})`],
  };
}

/** The data set restricted to `features`, in their order. */
export function selectFeatures(d: Dataset, features: string[]): Dataset {
  const idx = features.map((f) => d.features.indexOf(f));
  return { ...d, features, x: d.x.map((row) => idx.map((k) => row[k])), history: [...(d.history ?? []), `select(${features.join(',')})`] };
}

/** The parameters one table task is made from. */
export interface TableParams {
  base: string;
  target: string;
  features: string[];
  /** Share of the base table's rows the task uses. */
  rowShare: number;
  metric: SupervisedMetricName;
  noise: number;
  cleanShare: number;
  shiftFeature: string;
  imbalance?: number[];
}

/** Draws one task's parameters from `cfg`'s space. */
export function drawTableParams(cfg: TableFamilyConfig, rng: Rng): TableParams {
  const base = cfg.bases[rng.int(cfg.bases.length)];
  const full = base.load();
  const target = base.numeric.length === 0 || rng.next() < 0.4 ? full.target : base.numeric[rng.int(base.numeric.length)];
  const d = retarget(full, target);
  const keep = base.keep ?? [];
  const optional = d.features.filter((f) => !keep.includes(f));
  const k = Math.max(2 - keep.length, Math.ceil(optional.length * rng.uniform(0.5, 1)));
  const order = optional
    .map((f) => ({ f, r: rng.next() }))
    .sort((a, b) => a.r - b.r)
    .map((x) => x.f);
  const features = d.features.filter((f) => keep.includes(f) || order.slice(0, k).includes(f));
  const metrics: SupervisedMetricName[] = d.kind === 'classification' ? cfg.classificationMetrics : ['rmse', 'mae', 'r2'];
  const numericFeatures = features.filter((f) => new Set(d.x.map((row) => row[d.features.indexOf(f)])).size > 3);
  const shiftFeature = numericFeatures.length ? numericFeatures[rng.int(numericFeatures.length)] : features[0];
  const classes = d.classes?.length ?? 0;
  return {
    base: base.name,
    target,
    features,
    rowShare: sig(rng.uniform(0.5, 1), 2),
    metric: metrics[rng.int(metrics.length)],
    noise: sig(rng.uniform(0.1, cfg.maxNoise), 2),
    cleanShare: sig(rng.uniform(0.05, 0.2), 2),
    shiftFeature,
    ...(classes ? { imbalance: Array.from({ length: classes }, (_, c) => (c === 0 ? 1 : sig(rng.uniform(cfg.minImbalance, 1), 2))) } : {}),
  };
}

/** The task definition for one set of parameters (its data loads lazily, once). */
export function tableTask(cfg: TableFamilyConfig, id: string, p: TableParams, seed: number): SupervisedTaskDef {
  const base = cfg.bases.find((b) => b.name === p.base)!;
  let data: Dataset | null = null;
  const load = (): Dataset => {
    if (!data) {
      const d = selectFeatures(retarget(base.load(), p.target), p.features);
      data = subsample(d, Math.round(d.x.length * p.rowShare), mixSeed(seed, cfg.rowSalt));
    }
    return data;
  };
  const d = load();
  const rows = d.x.length;
  const poolSize = rows - Math.round(rows * cfg.testFraction);
  const cleanSize = Math.max(10, Math.round(poolSize * p.cleanShare));
  const what =
    d.kind === 'classification'
      ? `the class of ${d.target} (${d.classes!.join(', ')})`
      : `${d.target} (${(d.descriptions[d.target] ?? d.target).replace(/\.$/, '')})`;
  const source = base.words ? `${base.words}; vega-datasets` : `${p.base} data from vega-datasets`;
  const features = p.features.join(', ');
  return {
    id,
    title: `Predict ${d.target} from ${p.features.length} columns of the ${p.base} data`,
    family: `${cfg.name}-fam`,
    testFraction: cfg.testFraction,
    split: cfg.split,
    data: 'real',
    description: `Predict ${what} from ${features} (${source}, about ${rows} rows in all). Several data sources of different quality are available.`,
    metric: p.metric,
    load,
    sources: standardCatalog({
      poolSize,
      cleanSize,
      noise: p.noise,
      shiftFeature: p.shiftFeature,
      shiftWords: `only the rows with the lowest values of ${p.shiftFeature} (lowest 40%)`,
      ...(p.imbalance ? { imbalance: p.imbalance } : {}),
    }),
    baseline: supervisedSpec(id, {
      sources: [{ id: 'noisy-large', weight: 1 }],
      objective: d.kind === 'classification' ? 'cross-entropy' : 'mse',
      epochs: 40,
      examples: 20_000,
    }),
    maxExamples: 50_000,
    maxWallSeconds: 120,
  };
}

/** A task family over `cfg`'s tables. */
export function tableFamily(cfg: TableFamilyConfig): TaskFamily {
  return {
    name: cfg.name,
    kind: 'supervised',
    split: cfg.split,
    description: cfg.description,
    generate: drawTasks(
      cfg.name,
      cfg.salt,
      'supervised',
      (rng) => drawTableParams(cfg, rng),
      (id, params, i, seed) => tableTask(cfg, id, params, mixSeed(seed, i)),
    ),
  };
}
