/**
 * The friedman family: synthetic regression on Friedman's three benchmark functions
 * (`friedman` of `inner/data/synthetic-nd.ts`) with a drawn function, measurement noise, number of
 * irrelevant extra inputs, points, metric and source corruption strengths.
 */
import { FRIEDMAN_INPUTS, type FriedmanVariant, friedman } from '../../../inner/data/index.js';
import { type Rng, mixSeed } from '../../../util/rng.js';
import type { SupervisedMetricName, SupervisedTaskDef } from '../../supervised/define.js';
import { type TaskFamily, drawTasks, sig } from '../types.js';
import { type SourceCorruption, generatedDataTask } from '../catalog-task.js';

/**
 * Share of each generated friedman task's rows held out for the hidden test set: public, as the sources'
 * sizes follow from it (the split itself is drawn from the evaluation secret on the evaluation side).
 */
export const FRIEDMAN_TEST_FRACTION = 0.3;

/** The parameter ranges (integers inclusive). */
export const FRIEDMAN_SPACE = {
  variants: [1, 2, 3] as FriedmanVariant[],
  /** Measurement noise, as a share of the noise-free target's standard deviation. */
  noise: [0, 0.3],
  extraFeatures: [0, 6],
  points: [300, 2400],
  /** Target noise of the bulk-labelled source, in target standard deviations. */
  labelNoise: [0.1, 0.5],
  cleanShare: [0.03, 0.15],
  metrics: ['rmse', 'mae', 'r2'] as SupervisedMetricName[],
} as const;

/** The parameters one friedman task is made from. */
export interface FriedmanParams extends SourceCorruption {
  variant: FriedmanVariant;
  noise: number;
  extraFeatures: number;
  points: number;
  metric: SupervisedMetricName;
}

/** Draws one task's parameters. */
export function drawFriedmanParams(rng: Rng): FriedmanParams {
  const s = FRIEDMAN_SPACE;
  const variant = s.variants[rng.int(3)];
  const extraFeatures = s.extraFeatures[0] + rng.int(s.extraFeatures[1] - s.extraFeatures[0] + 1);
  return {
    variant,
    noise: sig(rng.uniform(s.noise[0], s.noise[1]), 2),
    extraFeatures,
    points: 100 * Math.round(rng.uniform(s.points[0], s.points[1]) / 100),
    metric: s.metrics[rng.int(s.metrics.length)],
    labelNoise: sig(rng.uniform(s.labelNoise[0], s.labelNoise[1]), 2),
    cleanShare: sig(rng.uniform(s.cleanShare[0], s.cleanShare[1]), 2),
    shiftFeature: `x${1 + rng.int(FRIEDMAN_INPUTS[variant].length)}`,
  };
}

/** The shape of each function, in words (no formula: the agent gets what a data card would say). */
const SHAPE_WORDS: Record<FriedmanVariant, string> = {
  1: 'a smooth nonlinear function of x1 to x5 (Friedman #1 benchmark: an interaction of x1 and x2 through a sine, a quadratic in x3, linear in x4 and x5)',
  2:
    'a nonlinear function of x1 to x4 (Friedman #2 benchmark: the impedance of an alternating-current ' +
    'circuit with resistance x1, angular frequency x2, inductance x3 and capacitance x4)',
  3:
    'a nonlinear function of x1 to x4 (Friedman #3 benchmark: the phase angle of an alternating-current ' +
    'circuit with resistance x1, angular frequency x2, inductance x3 and capacitance x4)',
};

/** The task definition for one set of parameters (its points are generated lazily, once). */
export function friedmanTask(id: string, p: FriedmanParams, dataSeed: number): SupervisedTaskDef {
  const inputs = FRIEDMAN_INPUTS[p.variant].length;
  const dims = inputs + p.extraFeatures;
  const extraWords =
    p.extraFeatures === 1
      ? ` The other input (x${dims}, uniform on [0, 1]) does not affect y.`
      : p.extraFeatures
        ? ` The other ${p.extraFeatures} inputs (x${inputs + 1} to x${dims}, uniform on [0, 1]) do not affect y.`
        : '';
  const noiseWords =
    p.noise > 0 ? `Gaussian measurement noise of about ${Math.round(p.noise * 100)}% of the signal's standard deviation` : 'no measurement noise';
  return generatedDataTask({
    id,
    family: 'friedman',
    split: 'train',
    title: `Regress y on ${dims} inputs: Friedman #${p.variant}`,
    description:
      `Predict the response y from ${dims} inputs (x1 to x${dims}, each uniform on its ` +
      `own range). y is ${SHAPE_WORDS[p.variant]}, plus ${noiseWords}.${extraWords} ` +
      `${p.points} points in all. Several data sources of different quality are available.`,
    metric: p.metric,
    points: p.points,
    testFraction: FRIEDMAN_TEST_FRACTION,
    make: () => friedman(p.points, { variant: p.variant, noise: p.noise, extraFeatures: p.extraFeatures }, dataSeed),
    labelNoise: p.labelNoise,
    cleanShare: p.cleanShare,
    shiftFeature: p.shiftFeature,
    regression: true,
  });
}

/** The friedman family. */
export const friedmanFamily: TaskFamily = {
  name: 'friedman',
  kind: 'supervised',
  split: 'train',
  description:
    'synthetic regression on the Friedman #1/#2/#3 functions with drawn noise level, ' +
    'irrelevant extra inputs, points, metric (rmse, mae, r2) and source corruptions',
  generate: drawTasks('friedman', 0xf41e, 'supervised', drawFriedmanParams, (id, params, i, seed) =>
    friedmanTask(id, params, mixSeed(seed, i, 0xf41e, 0xda7a)),
  ),
};
