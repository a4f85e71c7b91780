/**
 * The tabular family: real data sets from vega-datasets (cars, penguins, Seattle weather, iris)
 * with a drawn target (the data set's own or one of its numeric columns), a drawn subset of the
 * remaining features, a drawn share of the rows, and the standard source catalog with drawn
 * corruption strengths (label noise, shifted feature, class imbalance, clean-sample size).
 */
import { loadCars, loadIris, loadPenguins, loadSeattleWeather, subsample } from '../../../inner/data/index.js';
import type { Dataset } from '../../../spec/data.js';
import { Rng, mixSeed } from '../../../util/rng.js';
import type { ExtraTask } from '../../extra.js';
import { type SupervisedMetricName, type SupervisedTaskDef, supervisedSpec } from '../../supervised-def.js';
import { standardCatalog } from '../../supervised/catalog.js';
import { type TaskFamily, familyOrigin, familyTaskId, sig } from '../types.js';
import { tabularHidden } from './hidden.js';

/** A base data set and the numeric columns that may serve as a regression target. */
interface Base {
  name: string;
  load(): Dataset;
  numeric: string[];
}

const BASES: Base[] = [
  { name: 'cars', load: loadCars, numeric: ['mpg', 'horsepower', 'weight', 'acceleration', 'displacement'] },
  { name: 'penguins', load: loadPenguins, numeric: ['body_mass', 'flipper_length', 'beak_length', 'beak_depth'] },
  { name: 'seattle-weather', load: loadSeattleWeather, numeric: ['temp_max', 'temp_min', 'wind'] },
  { name: 'iris', load: loadIris, numeric: ['petal_width', 'petal_length', 'sepal_length'] },
];

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

/** The parameters one tabular task is made from. */
export interface TabularParams {
  base: string;
  target: string;
  features: string[];
  /** Share of the base data's rows the task uses. */
  rowShare: number;
  metric: SupervisedMetricName;
  noise: number;
  cleanShare: number;
  shiftFeature: string;
  imbalance?: number[];
}

/** Draws one task's parameters. */
export function drawTabularParams(rng: Rng): TabularParams {
  const base = BASES[rng.int(BASES.length)];
  const full = base.load();
  const target = rng.next() < 0.4 ? full.target : base.numeric[rng.int(base.numeric.length)];
  const d = retarget(full, target);
  const k = Math.max(2, Math.ceil(d.features.length * rng.uniform(0.5, 1)));
  const order = d.features.map((f) => ({ f, r: rng.next() })).sort((a, b) => a.r - b.r).map((x) => x.f);
  const features = d.features.filter((f) => order.slice(0, k).includes(f));
  const metrics: SupervisedMetricName[] = d.kind === 'classification' ? ['accuracy', 'macro-f1'] : ['rmse', 'mae', 'r2'];
  const numericFeatures = features.filter((f) => new Set(d.x.map((row) => row[d.features.indexOf(f)])).size > 3);
  const shiftFeature = numericFeatures.length ? numericFeatures[rng.int(numericFeatures.length)] : features[0];
  const classes = d.classes?.length ?? 0;
  return {
    base: base.name,
    target,
    features,
    rowShare: sig(rng.uniform(0.5, 1), 2),
    metric: metrics[rng.int(metrics.length)],
    noise: sig(rng.uniform(0.1, 0.5), 2),
    cleanShare: sig(rng.uniform(0.05, 0.2), 2),
    shiftFeature,
    ...(classes ? { imbalance: Array.from({ length: classes }, (_, c) => (c === 0 ? 1 : sig(rng.uniform(0.1, 1), 2))) } : {}),
  };
}

/** The task definition for one set of parameters (its data loads lazily, once). */
export function tabularTask(id: string, p: TabularParams, seed: number): SupervisedTaskDef {
  const base = BASES.find((b) => b.name === p.base)!;
  let data: Dataset | null = null;
  const load = (): Dataset => {
    if (!data) {
      const d = selectFeatures(retarget(base.load(), p.target), p.features);
      data = subsample(d, Math.round(d.x.length * p.rowShare), mixSeed(seed, 0x7ab));
    }
    return data;
  };
  const d = load();
  const { testFraction } = tabularHidden();
  const rows = d.x.length;
  const poolSize = rows - Math.round(rows * testFraction);
  const cleanSize = Math.max(10, Math.round(poolSize * p.cleanShare));
  const shiftWords = `only the rows with the lowest values of ${p.shiftFeature} (lowest 40%)`;
  const what = d.kind === 'classification' ? `the class of ${d.target} (${d.classes!.join(', ')})` : `${d.target} (${(d.descriptions[d.target] ?? d.target).replace(/\.$/, '')})`;
  return {
    id,
    title: `Predict ${d.target} from ${p.features.length} columns of the ${p.base} data`,
    family: 'tabular-fam',
    split: 'train',
    data: 'real',
    description:
      `Predict ${what} from ${p.features.join(', ')} (${p.base} data from vega-datasets, about ${rows} rows in all). ` +
      'Several data sources of different quality are available.',
    metric: p.metric,
    load,
    ...tabularHidden(),
    sources: standardCatalog({ poolSize, cleanSize, noise: p.noise, shiftFeature: p.shiftFeature, shiftWords, ...(p.imbalance ? { imbalance: p.imbalance } : {}) }),
    baseline: supervisedSpec(id, { sources: [{ id: 'noisy-large', weight: 1 }], objective: d.kind === 'classification' ? 'cross-entropy' : 'mse', epochs: 40, examples: 20_000 }),
    maxExamples: 50_000,
    maxWallSeconds: 120,
  };
}

/** The tabular family. */
export const tabularFamily: TaskFamily = {
  name: 'tabular',
  kind: 'supervised',
  split: 'train',
  description: 'real vega-datasets tables (cars, penguins, Seattle weather, iris) with drawn target, feature subset, row share, metric and source corruptions',
  generate(count, seed): ExtraTask[] {
    const rng = new Rng(mixSeed(seed, 0x7ab1e));
    return Array.from({ length: count }, (_, i) => {
      const id = familyTaskId('tabular', seed, i);
      return { kind: 'supervised' as const, def: tabularTask(id, drawTabularParams(rng), mixSeed(seed, i)), origin: familyOrigin('tabular', seed) };
    });
  },
};
