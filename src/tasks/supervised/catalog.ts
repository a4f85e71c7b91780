/**
 * The standard source catalog of a supervised task, made from its training pool: the
 * kinds of data a practitioner really gets — a small clean set, a big noisy one, one
 * collected under covariate shift, an imbalanced one, a leaky duplicated one, and the
 * clean set with synthetic augmentation.
 */
import { covariateShift, duplicate, imbalance, jitterAugment, labelNoise, subsample } from '../../inner/data/index.js';
import type { SourceRecipe } from './define.js';

/**
 * The ids of the standard catalog, in its order. The embedded agents give each one an output slot,
 * so a task offers at most this many sources.
 */
export const CATALOG_IDS: readonly string[] = ['clean-small', 'noisy-large', 'shifted', 'imbalanced', 'duplicated', 'augmented'];

/** Parameters of the standard catalog for one dataset. */
export interface CatalogOptions {
  /** Size of the pool the sources are drawn from (training part of the clean data). */
  poolSize: number;
  /** Examples in the small clean set. */
  cleanSize: number;
  /** Label-noise rate of the large set (share of labels replaced; for regression, noise in target stds). */
  noise: number;
  /** The feature whose low band the shifted set covers, and words for it. */
  shiftFeature: string;
  shiftWords: string;
  /** Classification: share of each class kept in the imbalanced set. */
  imbalance?: number[];
}

/** Builds the six standard sources. */
export function standardCatalog(o: CatalogOptions): SourceRecipe[] {
  const recipes: SourceRecipe[] = [
    {
      id: 'clean-small',
      description: `a small, carefully checked sample (${o.cleanSize} examples) of the target population; labels verified by hand`,
      examples: o.cleanSize,
      build: (pool, seed) => subsample(pool, o.cleanSize, seed),
    },
    {
      id: 'noisy-large',
      description: `every example collected (about ${o.poolSize}), labelled in bulk without review; the labelling process is known to be unreliable`,
      examples: o.poolSize,
      build: (pool, seed) => labelNoise(pool, o.noise, seed + 3),
    },
    {
      id: 'shifted',
      description: `a large set collected under different conditions: ${o.shiftWords}; labels are reliable`,
      examples: Math.round(o.poolSize * 0.4),
      build: (pool, seed) => covariateShift(pool, o.shiftFeature, 0, 0.4, seed + 4),
    },
    {
      id: 'duplicated',
      description: `a merged export from several systems (about ${Math.round(o.cleanSize * 3.5)} rows); many records appear more than once`,
      examples: Math.round(o.cleanSize * 3.5),
      build: (pool, seed) => duplicate(subsample(pool, o.cleanSize, seed), 5, 0.5, seed + 1),
    },
    {
      id: 'augmented',
      description: `the small checked sample plus 3 synthetic copies of each example with small Gaussian jitter on the features (${o.cleanSize * 4} examples)`,
      examples: o.cleanSize * 4,
      // The same draw as clean-small; jitterAugment keeps the originals first, then the copies.
      build: (pool, seed) => jitterAugment(subsample(pool, o.cleanSize, seed), 3, 0.1, seed + 2),
    },
  ];
  if (o.imbalance) {
    const keep = o.imbalance;
    recipes.splice(3, 0, {
      id: 'imbalanced',
      description:
        'records from a system that mostly logged some classes (kept share per class: ' +
        `${keep.map((k) => `${Math.round(k * 100)}%`).join(', ')}); labels are reliable`,
      examples: Math.round((o.poolSize * keep.reduce((a, b) => a + b, 0)) / keep.length),
      build: (pool, seed) => imbalance(pool, keep, seed + 5),
    });
  }
  return recipes;
}
