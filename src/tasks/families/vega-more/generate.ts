/**
 * The vega-more family (held out as a whole): real vega-datasets tables the tabular family never
 * uses — gapminder, movies, two-city weather, US airports (`inner/data/real-more.ts`) — with a
 * drawn target (the table's own class or one of its numeric columns), a drawn subset of the other
 * features, a drawn share of the rows, the metric and the standard catalog's corruption strengths.
 */
import { loadAirports, loadGapminder, loadMovies, loadTwoCityWeather, subsample } from '../../../inner/data/index.js';
import type { Dataset } from '../../../inner/data/types.js';
import { Rng, mixSeed } from '../../../util/rng.js';
import type { ExtraTask } from '../../extra.js';
import { type SupervisedMetricName, type SupervisedTaskDef, supervisedSpec } from '../../supervised-def.js';
import { standardCatalog } from '../../supervised/catalog.js';
import { retarget, selectFeatures } from '../tabular/generate.js';
import { type TaskFamily, familyOrigin, familyTaskId, sig } from '../types.js';
import { vegaMoreHidden } from './hidden.js';

/** A base table, the numeric columns that may serve as a regression target, and its name in words. */
interface Base {
  name: string;
  words: string;
  load(): Dataset;
  numeric: string[];
}

/** The base tables (none of them used by the tabular family). */
export const VEGA_MORE_BASES: Base[] = [
  { name: 'gapminder', words: 'gapminder country statistics, 1955–2005', load: loadGapminder, numeric: ['life_expect', 'fertility', 'log_population'] },
  { name: 'movies', words: 'films with box-office and ratings data', load: loadMovies, numeric: ['imdb_rating', 'rotten_tomatoes', 'log_worldwide_gross'] },
  { name: 'weather', words: 'daily weather in New York and Seattle, 2012–2015', load: loadTwoCityWeather, numeric: ['temp_max', 'temp_min', 'wind'] },
  { name: 'airports', words: 'US airports of eight states', load: loadAirports, numeric: [] },
];

/** The parameters one vega-more task is made from. */
export interface VegaMoreParams {
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

/** Draws one task's parameters. */
export function drawVegaMoreParams(rng: Rng): VegaMoreParams {
  const base = VEGA_MORE_BASES[rng.int(VEGA_MORE_BASES.length)];
  const full = base.load();
  const target = base.numeric.length === 0 || rng.next() < 0.4 ? full.target : base.numeric[rng.int(base.numeric.length)];
  const d = retarget(full, target);
  const k = Math.max(2, Math.ceil(d.features.length * rng.uniform(0.5, 1)));
  const order = d.features.map((f) => ({ f, r: rng.next() })).sort((a, b) => a.r - b.r).map((x) => x.f);
  const features = d.features.filter((f) => order.slice(0, k).includes(f));
  const metrics: SupervisedMetricName[] = d.kind === 'classification' ? ['accuracy', 'macro-f1', 'log-loss'] : ['rmse', 'mae', 'r2'];
  const numericFeatures = features.filter((f) => new Set(d.x.map((row) => row[d.features.indexOf(f)])).size > 3);
  const shiftFeature = numericFeatures.length ? numericFeatures[rng.int(numericFeatures.length)] : features[0];
  const classes = d.classes?.length ?? 0;
  return {
    base: base.name,
    target,
    features,
    rowShare: sig(rng.uniform(0.5, 1), 2),
    metric: metrics[rng.int(metrics.length)],
    noise: sig(rng.uniform(0.1, 0.45), 2),
    cleanShare: sig(rng.uniform(0.05, 0.2), 2),
    shiftFeature,
    ...(classes ? { imbalance: Array.from({ length: classes }, (_, c) => (c === 0 ? 1 : sig(rng.uniform(0.2, 1), 2))) } : {}),
  };
}

/** The task definition for one set of parameters (its data loads lazily, once). */
export function vegaMoreTask(id: string, p: VegaMoreParams, seed: number): SupervisedTaskDef {
  const base = VEGA_MORE_BASES.find((b) => b.name === p.base)!;
  let data: Dataset | null = null;
  const load = (): Dataset => {
    if (!data) {
      const d = selectFeatures(retarget(base.load(), p.target), p.features);
      data = subsample(d, Math.round(d.x.length * p.rowShare), mixSeed(seed, 0x7e6a));
    }
    return data;
  };
  const d = load();
  const { testFraction } = vegaMoreHidden();
  const rows = d.x.length;
  const poolSize = rows - Math.round(rows * testFraction);
  const cleanSize = Math.max(10, Math.round(poolSize * p.cleanShare));
  const what = d.kind === 'classification' ? `the class of ${d.target} (${d.classes!.join(', ')})` : `${d.target} (${(d.descriptions[d.target] ?? d.target).replace(/\.$/, '')})`;
  return {
    id,
    title: `Predict ${d.target} from ${p.features.length} columns of the ${p.base} data`,
    family: 'vega-more-fam',
    split: 'held-out',
    data: 'real',
    description:
      `Predict ${what} from ${p.features.join(', ')} (${base.words}; vega-datasets, about ${rows} rows in all). ` +
      'Several data sources of different quality are available.',
    metric: p.metric,
    load,
    ...vegaMoreHidden(),
    sources: standardCatalog({
      poolSize,
      cleanSize,
      noise: p.noise,
      shiftFeature: p.shiftFeature,
      shiftWords: `only the rows with the lowest values of ${p.shiftFeature} (lowest 40%)`,
      ...(p.imbalance ? { imbalance: p.imbalance } : {}),
    }),
    baseline: supervisedSpec(id, { sources: [{ id: 'noisy-large', weight: 1 }], objective: d.kind === 'classification' ? 'cross-entropy' : 'mse', epochs: 40, examples: 20_000 }),
    maxExamples: 50_000,
    maxWallSeconds: 120,
  };
}

/** The vega-more family (held out). */
export const vegaMoreFamily: TaskFamily = {
  name: 'vega-more',
  kind: 'supervised',
  split: 'held-out',
  description: 'held-out real vega-datasets tables (gapminder, movies, New York/Seattle weather, US airports) with drawn target, feature subset, row share, metric and source corruptions',
  generate(count, seed): ExtraTask[] {
    const rng = new Rng(mixSeed(seed, 0x7e6a0));
    return Array.from({ length: count }, (_, i) => {
      const id = familyTaskId('vega-more', seed, i);
      return { kind: 'supervised' as const, def: vegaMoreTask(id, drawVegaMoreParams(rng), mixSeed(seed, i)), origin: familyOrigin('vega-more', seed) };
    });
  },
};
