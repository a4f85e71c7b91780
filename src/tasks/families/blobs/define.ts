/**
 * The blobs family: Gaussian-mixture classification (`gaussianBlobs` of `inner/data/synthetic-nd.ts`)
 * with a drawn number of classes, informative dimensions, irrelevant noise features, cluster
 * spread (overlap), number of points, metric and source corruption strengths.
 */
import { gaussianBlobs } from '../../../inner/data/index.js';
import { type Rng, mixSeed } from '../../../util/rng.js';
import type { SupervisedMetricName, SupervisedTaskDef } from '../../supervised/define.js';
import { type TaskFamily, drawTasks, intIn, sig } from '../types.js';
import { type SourceCorruption, generatedDataTask } from '../catalog-task.js';

/**
 * Share of each generated blobs task's rows held out for the hidden test set: public, as the sources'
 * sizes follow from it (the split itself is drawn from the evaluation secret on the evaluation side).
 */
export const BLOBS_TEST_FRACTION = 0.3;

/** The parameter ranges (integers inclusive). */
export const BLOBS_SPACE = {
  classes: [2, 5],
  informative: [2, 6],
  noiseFeatures: [0, 6],
  spread: [0.4, 1.2],
  points: [400, 2400],
  labelNoise: [0.1, 0.45],
  cleanShare: [0.03, 0.15],
  metrics: ['accuracy', 'macro-f1', 'log-loss'] as SupervisedMetricName[],
} as const;

/** The parameters one blobs task is made from. */
export interface BlobsParams extends SourceCorruption {
  classes: number;
  informative: number;
  noiseFeatures: number;
  spread: number;
  points: number;
  metric: SupervisedMetricName;
  imbalance: number[];
}

/** Draws one task's parameters. */
export function drawBlobsParams(rng: Rng): BlobsParams {
  const s = BLOBS_SPACE;
  const classes = intIn(rng, s.classes);
  const informative = intIn(rng, s.informative);
  const noiseFeatures = intIn(rng, s.noiseFeatures);
  return {
    classes,
    informative,
    noiseFeatures,
    spread: sig(rng.uniform(s.spread[0], s.spread[1]), 2),
    points: 100 * Math.round(rng.uniform(s.points[0], s.points[1]) / 100),
    metric: s.metrics[rng.int(s.metrics.length)],
    labelNoise: sig(rng.uniform(s.labelNoise[0], s.labelNoise[1]), 2),
    cleanShare: sig(rng.uniform(s.cleanShare[0], s.cleanShare[1]), 2),
    shiftFeature: `x${1 + rng.int(informative + noiseFeatures)}`,
    imbalance: Array.from({ length: classes }, (_, c) => (c === 0 ? 1 : sig(rng.uniform(0.1, 1), 2))),
  };
}

/** The task definition for one set of parameters (its points are generated lazily, once). */
export function blobsTask(id: string, p: BlobsParams, dataSeed: number): SupervisedTaskDef {
  const dims = p.informative + p.noiseFeatures;
  const noiseWords = p.noiseFeatures
    ? `only ${p.informative} of the ${dims} features carry the clusters, the other ${p.noiseFeatures} are pure standard-normal noise (which ones is not known)`
    : 'every feature carries the clusters';
  return generatedDataTask({
    id,
    family: 'blobs',
    split: 'train',
    title: `Classify ${p.points} points in ${dims} dimensions into ${p.classes} Gaussian clusters`,
    description:
      `Classify points with ${dims} features (x1 to x${dims}) by which of ${p.classes} Gaussian clusters they were drawn from. ` +
      `The cluster centres were drawn from a standard normal; each cluster's points scatter around its centre with standard deviation ` +
      `${p.spread} in every direction, so neighbouring clusters ${p.spread >= 0.7 ? 'overlap considerably' : 'overlap a little'}; ${noiseWords}. ` +
      `${p.points} points in all, equally many per cluster. Several data sources of different quality are available.`,
    metric: p.metric,
    points: p.points,
    testFraction: BLOBS_TEST_FRACTION,
    make: () => gaussianBlobs(p.points, { classes: p.classes, informative: p.informative, noiseFeatures: p.noiseFeatures, spread: p.spread }, dataSeed),
    labelNoise: p.labelNoise,
    cleanShare: p.cleanShare,
    shiftFeature: p.shiftFeature,
    imbalance: p.imbalance,
  });
}

/** The blobs family. */
export const blobsFamily: TaskFamily = {
  name: 'blobs',
  kind: 'supervised',
  split: 'train',
  description:
    'Gaussian-mixture classification with drawn classes (2-5), informative dimensions (2-6), ' +
    'irrelevant noise features (0-6), cluster spread, points, metric and source corruptions',
  generate: drawTasks('blobs', 0xb10b, 'supervised', drawBlobsParams, (id, params, i, seed) => blobsTask(id, params, mixSeed(seed, i, 0xb10b, 0xda7a))),
};
