/**
 * The public definition of a supervised task file's task, from its checked data (`load.ts` reads
 * and checks the files): the source catalogue (the training part of the main file, each extra
 * source without its near-copies of held-out rows, and the standard catalogue made from the
 * training part), the caps and the baseline spec. The standard catalogue needs no near-copy filter:
 * its rows are drawn from the training part, as the main source's are, so it carries no row the
 * main source does not (the filter guards rows from outside the split). What the
 * evaluation reads from the same file (the test share, the anchors) is in `evaluate.ts`.
 */
import type { Dataset } from '../../spec/data.js';
import { type SourceRecipe, type SupervisedTaskDef, supervisedSpec } from '../supervised/define.js';
import { CATALOG_IDS } from '../supervised/catalog.js';
import { poolCatalog } from '../supervised/pool-catalog.js';
import type { DistinctRows, NearCopies } from './near-copies.js';
import type { SupervisedTaskFile } from './schema.js';

/** An extra source of a task file, read and checked: its rows, and which main rows each nearly copies. */
export interface ExtraSource {
  id: string;
  description: string;
  x: number[][];
  y: number[];
  near: NearCopies;
  distinct: DistinctRows;
  /** The near-copy rule in words. */
  rule: string;
}

/** The training pool's size: the rows of the main file the hidden test split leaves. */
export function poolSizeOf(task: SupervisedTaskFile, rows: number): number {
  return rows - Math.round(rows * task.split.testFraction);
}

/**
 * The anchors a task file gives, in the metric's raw units (higher is better: errors negated), or
 * undefined when it gives none.
 */
export function taskFileAnchors(task: SupervisedTaskFile): { random?: number; reference?: number; how?: string } | undefined {
  const negate = task.metric === 'rmse' || task.metric === 'mae' || task.metric === 'log-loss';
  const raw = (v: number | undefined): number | undefined => (v === undefined ? undefined : negate ? -v : v);
  const anchors = { random: raw(task.anchors.trivial), reference: raw(task.anchors.reference), how: task.anchors.how };
  if (anchors.random === undefined && anchors.reference === undefined && !anchors.how) return undefined;
  return Object.fromEntries(Object.entries(anchors).filter(([, v]) => v !== undefined));
}

/**
 * Which distinct main rows the split held out: those with more copies in the main file than in
 * the training pool (a row and its duplicates are one feature vector).
 */
function heldOutRows(distinct: DistinctRows, pool: number[][]): boolean[] {
  const inPool = new Array<number>(distinct.rows.length).fill(0);
  for (const row of pool) {
    const u = distinct.find(row);
    if (u >= 0) inPool[u]++;
  }
  return distinct.count.map((c, u) => c > inPool[u]);
}

/** The rows of a source to keep once the split is drawn: none that is a near-copy of a held-out row. */
function keptRows(near: NearCopies, held: boolean[]): number[] {
  const keep: number[] = [];
  near.matches.forEach((m, i) => {
    if (m !== null && !m.some((u) => held[u])) keep.push(i);
  });
  return keep;
}

/**
 * The catalogue sources a task file gets beside its own: a source of the user's named after a
 * catalogue source takes its place, and the sources in all are at most as many as the standard
 * catalogue has (the embedded agents give each source one of that many output slots). What does not fit is
 * left out, clean-small first (the main file's training part holds its rows), then from the end.
 */
function roomyCatalog(full: SourceRecipe[], own: ReadonlySet<string>): SourceRecipe[] {
  const rest = full.filter((r) => !own.has(r.id));
  const room = Math.max(0, CATALOG_IDS.length - own.size);
  const order = [...rest.filter((r) => r.id !== 'clean-small'), ...rest.filter((r) => r.id === 'clean-small')];
  const kept = new Set(order.slice(0, room).map((r) => r.id));
  return rest.filter((r) => kept.has(r.id));
}

/** The task definition of a checked supervised task file: `dataset` is its main file's data (`mainName`), `extras` its extra sources. */
export function supervisedFileTask(task: SupervisedTaskFile, dataset: Dataset, mainName: string, extras: ExtraSource[]): SupervisedTaskDef {
  const data = task.data;
  const poolSize = poolSizeOf(task, dataset.x.length);
  const caps = task.caps;
  const maxExamples = caps.maxExamples ?? Math.max(20_000, Math.min(1_000_000, 50 * poolSize));
  const mainRecipe: SourceRecipe = {
    id: data.id,
    description: data.description ?? `the training part of ${mainName}: every row not held out for the hidden evaluation (about ${poolSize} rows)`,
    examples: poolSize,
    build: (pool) => pool,
  };
  const extraRecipes: SourceRecipe[] = extras.map((e) => ({
    id: e.id,
    description: e.description,
    examples: e.x.length,
    // Rows of the main file that the split held out are hidden test rows: a near-copy of one in an extra source is dropped.
    build: (pool) => {
      const keep = keptRows(e.near, heldOutRows(e.distinct, pool.x));
      const history = `source ${e.id}: ${keep.length} of ${e.x.length} rows (${e.x.length - keep.length} near-copies of hidden test rows dropped: ${e.rule})`;
      return { ...pool, name: `${task.id}/${e.id}`, x: keep.map((i) => e.x[i]), y: keep.map((i) => e.y[i]), history: [history] };
    },
  }));
  const own = new Set([data.id, ...extras.map((e) => e.id)]);
  const catalog = data.catalog ? roomyCatalog(poolCatalog(dataset, poolSize), own) : [];
  const base = task.baseline;
  return {
    id: task.id,
    title: task.title,
    family: task.family ?? task.id,
    testFraction: task.split.testFraction,
    split: task.experiments === 'none' ? 'example' : task.experiments,
    data: 'real',
    description: task.description,
    metric: task.metric,
    load: () => ({
      ...dataset,
      features: [...dataset.features],
      x: dataset.x.map((r) => [...r]),
      y: [...dataset.y],
      descriptions: { ...dataset.descriptions },
    }),
    sources: [mainRecipe, ...extraRecipes, ...catalog],
    baseline: supervisedSpec(task.id, {
      sources: [{ id: base.source ?? data.id, weight: 1 }],
      objective: base.objective ?? (data.type === 'classification' ? 'cross-entropy' : 'mse'),
      hidden: base.hidden,
      epochs: base.epochs,
      learningRate: base.learningRate,
      batchSize: base.batchSize,
      examples: base.examples ?? Math.floor(maxExamples / 2),
    }),
    maxExamples,
    maxWallSeconds: caps.maxWallSeconds,
  };
}
