/**
 * The synthetic family: 2-D binary problems from the seeded generators of
 * `inner/data/synthetic.ts` (two spirals, two moons, a checkerboard of 2–6 cells a side) with a
 * drawn coordinate noise, number of points, metric and source corruption strengths.
 */
import { checkerboard, moons, twoSpirals } from '../../../inner/data/index.js';
import type { Dataset } from '../../../spec/data.js';
import { type Rng, mixSeed } from '../../../util/rng.js';
import type { SupervisedMetricName, SupervisedTaskDef } from '../../supervised/define.js';
import { type TaskFamily, drawTasks, sig } from '../types.js';
import { type SourceCorruption, generatedDataTask } from '../catalog-task.js';

/**
 * Share of each generated synthetic task's points held out for the hidden test set: public, as the sources'
 * sizes follow from it (the split itself is drawn from the evaluation secret on the evaluation side).
 */
export const SYNTHETIC_TEST_FRACTION = 0.3;

/** The generators and their parameter ranges. */
export const SYNTHETIC_SPACE = {
  generators: ['spirals', 'moons', 'checkerboard'] as const,
  points: [400, 2400],
  spiralNoise: [0, 0.08],
  moonNoise: [0.05, 0.35],
  cells: [2, 6],
} as const;

/** The parameters one synthetic task is made from. */
export interface SyntheticParams extends SourceCorruption {
  generator: (typeof SYNTHETIC_SPACE.generators)[number];
  points: number;
  /** Coordinate noise (spirals, moons) or cells a side (checkerboard). */
  level: number;
  metric: SupervisedMetricName;
  shiftFeature: 'x1' | 'x2';
  imbalance: number[];
}

/** Draws one task's parameters. */
export function drawSyntheticParams(rng: Rng): SyntheticParams {
  const g = SYNTHETIC_SPACE.generators[rng.int(3)];
  const s = SYNTHETIC_SPACE;
  const level =
    g === 'checkerboard'
      ? s.cells[0] + rng.int(s.cells[1] - s.cells[0] + 1)
      : sig(g === 'spirals' ? rng.uniform(s.spiralNoise[0], s.spiralNoise[1]) : rng.uniform(s.moonNoise[0], s.moonNoise[1]), 2);
  const metrics: SupervisedMetricName[] = ['accuracy', 'macro-f1', 'log-loss'];
  return {
    generator: g,
    points: 100 * Math.round(rng.uniform(s.points[0], s.points[1]) / 100),
    level,
    metric: metrics[rng.int(metrics.length)],
    labelNoise: sig(rng.uniform(0.1, 0.45), 2),
    cleanShare: sig(rng.uniform(0.03, 0.15), 2),
    shiftFeature: rng.next() < 0.5 ? 'x1' : 'x2',
    imbalance: [1, sig(rng.uniform(0.1, 0.6), 2)],
  };
}

function generateData(p: SyntheticParams, dataSeed: number): Dataset {
  if (p.generator === 'spirals') return twoSpirals(p.points, p.level, dataSeed);
  if (p.generator === 'moons') return moons(p.points, p.level, dataSeed);
  return checkerboard(p.points, p.level, dataSeed);
}

const SHAPE_WORDS = {
  spirals: (l: number) =>
    `which of two interleaved spirals (1.5 turns each, radius 0 to 1) they belong to; each coordinate carries Gaussian noise of standard deviation ${l}`,
  moons: (l: number) => `which of two interleaving half-circles of radius 1 they belong to; each coordinate carries Gaussian noise of standard deviation ${l}`,
  checkerboard: (l: number) => `the colour of their cell on a ${l}×${l} checkerboard covering [-1, 1]²`,
};

/** The task definition for one set of parameters (its points are generated lazily, once). */
export function syntheticTask(id: string, p: SyntheticParams, dataSeed: number): SupervisedTaskDef {
  const side = p.shiftFeature === 'x1' ? 'left' : 'lower';
  return generatedDataTask({
    id,
    family: 'synthetic',
    split: 'train',
    title: `Classify ${p.points} points of the plane: ${p.generator}`,
    description:
      `Classify points of the plane, from their coordinates x1 and x2, by ${SHAPE_WORDS[p.generator](p.level)}. ` +
      `${p.points} points in all, half of each class. Several data sources of different quality are available.`,
    metric: p.metric,
    points: p.points,
    testFraction: SYNTHETIC_TEST_FRACTION,
    make: () => generateData(p, dataSeed),
    labelNoise: p.labelNoise,
    cleanShare: p.cleanShare,
    shiftFeature: p.shiftFeature,
    shiftWords: `sampled from the ${side} part of the plane only (${p.shiftFeature} in the lowest 40%)`,
    imbalance: p.imbalance,
  });
}

/** The synthetic family. */
export const syntheticFamily: TaskFamily = {
  name: 'synthetic',
  kind: 'supervised',
  split: 'train',
  description: '2-D binary problems (spirals, moons, checkerboards) with drawn noise or cell count, number of points, metric and source corruptions',
  generate: drawTasks('synthetic', 0x5e7, 'supervised', drawSyntheticParams, (id, params, i, seed) => syntheticTask(id, params, mixSeed(seed, i, 0xda7a))),
};
