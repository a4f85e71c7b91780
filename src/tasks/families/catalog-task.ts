/**
 * The part of a generated-data task the synthetic families share (`synthetic`, `blobs`,
 * `friedman`, `rings`): data generated lazily, once; the standard source catalogue cut from the
 * pool the hidden test split leaves; the baseline spec and the caps. Each family brings its data,
 * its words and its corruption strengths.
 */
import type { Dataset } from '../../spec/data.js';
import { type SupervisedMetricName, type SupervisedTaskDef, supervisedSpec } from '../supervised/define.js';
import { standardCatalog } from '../supervised/catalog.js';

/** The drawn strengths of a generated-data task's source corruptions (the standard catalogue's). */
export interface SourceCorruption {
  labelNoise: number;
  cleanShare: number;
  shiftFeature: string;
  /** Relative class sizes of the imbalanced source (classification only). */
  imbalance?: number[];
}

/** What one generated-data task states. */
export interface GeneratedDataTask extends SourceCorruption {
  id: string;
  /** The family's name (the task's family is `<name>-fam`). */
  family: string;
  split: 'train' | 'held-out';
  title: string;
  description: string;
  metric: SupervisedMetricName;
  /** Points generated in all (pool and hidden test split). */
  points: number;
  /** The hidden test split's share, which sizes the pool the sources are cut from (the family's evaluation knows it too). */
  testFraction: number;
  /** Generates the points (called once, when first needed). */
  make(): Dataset;
  /** The shifted source in words (default: only points whose shifted feature lies in its lowest 40%). */
  shiftWords?: string;
  /** Regression: the baseline trains on the squared error for 40 epochs (classification: cross-entropy, 30). */
  regression?: boolean;
}

/** The task definition of a generated-data task. */
export function generatedDataTask(t: GeneratedDataTask): SupervisedTaskDef {
  let data: Dataset | null = null;
  const poolSize = t.points - Math.round(t.points * t.testFraction);
  return {
    id: t.id,
    title: t.title,
    family: `${t.family}-fam`,
    testFraction: t.testFraction,
    split: t.split,
    data: 'synthetic',
    description: t.description,
    metric: t.metric,
    load: () => (data ??= t.make()),
    sources: standardCatalog({
      poolSize,
      cleanSize: Math.max(20, Math.round(poolSize * t.cleanShare)),
      noise: t.labelNoise,
      shiftFeature: t.shiftFeature,
      shiftWords: t.shiftWords ?? `only points whose ${t.shiftFeature} lies in its lowest 40%`,
      ...(t.imbalance ? { imbalance: t.imbalance } : {}),
    }),
    baseline: supervisedSpec(t.id, {
      sources: [{ id: 'noisy-large', weight: 1 }],
      objective: t.regression ? 'mse' : 'cross-entropy',
      epochs: t.regression ? 40 : 30,
      examples: 30_000,
    }),
    maxExamples: 100_000,
    maxWallSeconds: 120,
  };
}
