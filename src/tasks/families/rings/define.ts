/**
 * The rings family (held out as a whole): classification whose shape differs from every train
 * family's. Either concentric shells (class c on the sphere of radius (c + 1)/k in 2–5 dimensions,
 * k = 2–4, radial noise) or the sign parity of 2–3 coordinates (XOR and its 3-D cousin, decided by
 * no single feature), each with uniform distractor features, a drawn number of points, metric and
 * source corruption strengths.
 */
import { shells, signParity } from '../../../inner/data/index.js';
import type { Dataset } from '../../../inner/data/types.js';
import { type Rng, mixSeed } from '../../../util/rng.js';
import type { SupervisedMetricName, SupervisedTaskDef } from '../../supervised/define.js';
import { type TaskFamily, drawTasks, intIn, sig } from '../types.js';
import { type SourceCorruption, generatedDataTask } from '../catalog-task.js';

/**
 * Share of each generated rings task's rows held out for the hidden test set: public, as the sources'
 * sizes follow from it (the split itself is drawn from the evaluation secret on the evaluation side).
 */
export const RINGS_TEST_FRACTION = 0.3;

/** The parameter ranges (integers inclusive). */
export const RINGS_SPACE = {
  shapes: ['shells', 'parity'] as const,
  classes: [2, 4],
  dims: [2, 5],
  /** Shells: radial noise std as a share of the gap between neighbouring shells. */
  shellNoise: [0.05, 0.35],
  bits: [2, 3],
  parityNoise: [0, 0.15],
  distractors: [0, 4],
  points: [400, 2400],
  labelNoise: [0.1, 0.4],
  cleanShare: [0.03, 0.15],
  metrics: ['accuracy', 'macro-f1', 'log-loss'] as SupervisedMetricName[],
} as const;

/** The parameters one rings task is made from. */
export interface RingsParams extends SourceCorruption {
  shape: (typeof RINGS_SPACE.shapes)[number];
  /** Classes (shells) or 2 (parity). */
  classes: number;
  /** Dimensions of the shells, or coordinates whose signs make the parity. */
  dims: number;
  /** Radial noise std (shells) or coordinate noise std (parity). */
  noise: number;
  distractors: number;
  points: number;
  metric: SupervisedMetricName;
  imbalance: number[];
}

/** Draws one task's parameters. */
export function drawRingsParams(rng: Rng): RingsParams {
  const s = RINGS_SPACE;
  const shape = s.shapes[rng.int(2)];
  const classes = shape === 'shells' ? intIn(rng, s.classes) : 2;
  const dims = shape === 'shells' ? intIn(rng, s.dims) : intIn(rng, s.bits);
  const noise = shape === 'shells' ? sig(rng.uniform(s.shellNoise[0], s.shellNoise[1]) / classes, 2) : sig(rng.uniform(s.parityNoise[0], s.parityNoise[1]), 2);
  const distractors = intIn(rng, s.distractors);
  return {
    shape,
    classes,
    dims,
    noise,
    distractors,
    points: 100 * Math.round(rng.uniform(s.points[0], s.points[1]) / 100),
    metric: s.metrics[rng.int(s.metrics.length)],
    labelNoise: sig(rng.uniform(s.labelNoise[0], s.labelNoise[1]), 2),
    cleanShare: sig(rng.uniform(s.cleanShare[0], s.cleanShare[1]), 2),
    shiftFeature: `x${1 + rng.int(dims + distractors)}`,
    imbalance: Array.from({ length: classes }, (_, c) => (c === 0 ? 1 : sig(rng.uniform(0.1, 1), 2))),
  };
}

function generateData(p: RingsParams, seed: number): Dataset {
  if (p.shape === 'shells') return shells(p.points, { classes: p.classes, dims: p.dims, noise: p.noise, distractors: p.distractors }, seed);
  return signParity(p.points, { bits: p.dims, noise: p.noise, distractors: p.distractors }, seed);
}

/** What the label is, in words. */
function shapeWords(p: RingsParams): string {
  const total = p.dims + p.distractors;
  if (p.shape === 'shells') {
    const radii = Array.from({ length: p.classes }, (_, c) => sig((c + 1) / p.classes, 2)).join(', ');
    const extra = p.distractors ? `; x${p.dims + 1} to x${total} are uniform on [-1, 1] and carry no information` : '';
    return (
      `by which of ${p.classes} concentric spherical shells around the origin of the space of x1 to x${p.dims} they lie on (radii ${radii}, ` +
      `innermost first; each point's radius carries Gaussian noise of standard deviation ${p.noise}, its direction is uniform)${extra}`
    );
  }
  const extra = p.distractors ? `; the other ${p.distractors} features are uniform on [-1, 1] and carry no information (which ones is not known)` : '';
  return (
    `by the parity of the signs of ${p.distractors ? `${p.dims} of the ${total}` : `all ${total}`} features (the class is "odd" ` +
    `when an odd number of them is negative; ${p.dims === 2 ? 'an XOR of two signs' : 'no single feature or pair tells the class'}), ` +
    `each of those uniform on [-1, 1] with Gaussian noise of standard deviation ${p.noise} added after labelling${extra}`
  );
}

/** The task definition for one set of parameters (its points are generated lazily, once). */
export function ringsTask(id: string, p: RingsParams, dataSeed: number): SupervisedTaskDef {
  const total = p.dims + p.distractors;
  return generatedDataTask({
    id,
    family: 'rings',
    split: 'held-out',
    title:
      p.shape === 'shells'
        ? `Classify ${p.points} points onto ${p.classes} concentric shells in ${p.dims} dimensions`
        : `Classify ${p.points} points by the sign parity of ${p.dims} of ${total} features`,
    description:
      `Classify points with ${total} features (x1 to x${total}) ${shapeWords(p)}. ` +
      `${p.points} points in all, equally many per class. Several data sources of different quality are available.`,
    metric: p.metric,
    points: p.points,
    testFraction: RINGS_TEST_FRACTION,
    make: () => generateData(p, dataSeed),
    labelNoise: p.labelNoise,
    cleanShare: p.cleanShare,
    shiftFeature: p.shiftFeature,
    imbalance: p.imbalance,
  });
}

/** The rings family (held out). */
export const ringsFamily: TaskFamily = {
  name: 'rings',
  kind: 'supervised',
  split: 'held-out',
  description:
    'held-out classification of concentric shells (2-4 classes in 2-5 dimensions) or the sign parity ' +
    'of 2-3 coordinates, with drawn noise, distractor features, points, metric and source corruptions',
  generate: drawTasks('rings', 0x4146, 'supervised', drawRingsParams, (id, params, i, seed) => ringsTask(id, params, mixSeed(seed, i, 0x4146, 0xda7a))),
};
