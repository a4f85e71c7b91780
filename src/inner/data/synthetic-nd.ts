/**
 * Seeded synthetic problems in several dimensions (features `x1`…`xd`): Gaussian blobs and
 * concentric shells / sign parity for classification, Friedman's three benchmark functions for
 * regression. Classes alternate row by row (class `i mod k` on row i), so they are balanced.
 */
import { Rng } from '../../util/rng.js';
import { std } from './stats.js';
import type { Dataset } from './types.js';

function check(ok: boolean, message: string): void {
  if (!ok) throw new RangeError(message);
}

const names = (d: number): string[] => Array.from({ length: d }, (_, j) => `x${j + 1}`);
const isInt = (v: number, lo: number, hi: number): boolean => Number.isInteger(v) && v >= lo && v <= hi;

/** Options of `gaussianBlobs`. */
export interface BlobOptions {
  /** Number of classes (2–10), one blob each. */
  classes: number;
  /** Dimensions the blob centres differ in (1–10). */
  informative: number;
  /** Extra standard-normal features that carry no information (0–20). */
  noiseFeatures: number;
  /** Standard deviation of each blob around its centre, in units of the centres' spread (> 0). */
  spread: number;
}

/**
 * Gaussian-mixture classification: class centres drawn from a standard normal in the informative
 * dimensions, each point its class centre plus isotropic Gaussian noise of std `spread`; then
 * `noiseFeatures` standard-normal columns, and all columns put in a seeded random order.
 */
export function gaussianBlobs(n: number, o: BlobOptions, seed: number): Dataset {
  check(isInt(n, 0, 1e7), `n must be a non-negative integer, got ${n}`);
  check(isInt(o.classes, 2, 10), `classes must be an integer in [2, 10], got ${o.classes}`);
  check(isInt(o.informative, 1, 10), `informative must be an integer in [1, 10], got ${o.informative}`);
  check(isInt(o.noiseFeatures, 0, 20), `noiseFeatures must be an integer in [0, 20], got ${o.noiseFeatures}`);
  check(Number.isFinite(o.spread) && o.spread > 0, `spread must be a finite number > 0, got ${o.spread}`);
  const rng = new Rng(seed);
  const centres = Array.from({ length: o.classes }, () => Array.from({ length: o.informative }, () => rng.normal()));
  const d = o.informative + o.noiseFeatures;
  const order = rng.permutation(d);
  const x: number[][] = [];
  const y: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = i % o.classes;
    const raw = [...centres[c].map((m) => m + o.spread * rng.normal()), ...Array.from({ length: o.noiseFeatures }, () => rng.normal())];
    x.push(order.map((j) => raw[j]));
    y.push(c);
  }
  const classes = Array.from({ length: o.classes }, (_, c) => `blob_${c + 1}`);
  const features = names(d);
  return {
    name: 'blobs',
    features,
    target: 'label',
    kind: 'classification',
    classes,
    x,
    y,
    descriptions: {
      ...Object.fromEntries(features.map((f) => [f, `Coordinate ${f.slice(1)} of the point (unitless, roughly standard normal).`])),
      label: `Which of ${o.classes} Gaussian clusters the point was drawn from.`,
    },
    summary: `Gaussian mixture, ${o.classes} classes, ${o.informative} informative and ${o.noiseFeatures} noise dimensions, spread ${o.spread}, ${n} points.`,
  };
}

/** The three Friedman regression benchmarks (Friedman 1991; Breiman 1996). */
export type FriedmanVariant = 1 | 2 | 3;

/** Options of `friedman`. */
export interface FriedmanOptions {
  variant: FriedmanVariant;
  /** Std of the additive Gaussian noise, as a share of the std of the noise-free target (0–1). */
  noise: number;
  /** Extra uniform [0, 1] features the target does not depend on (0–20). */
  extraFeatures: number;
}

/** Input ranges of the Friedman functions (#2 and #3 share theirs). */
export const FRIEDMAN_INPUTS: Record<FriedmanVariant, [number, number][]> = {
  1: [
    [0, 1],
    [0, 1],
    [0, 1],
    [0, 1],
    [0, 1],
  ],
  2: [
    [0, 100],
    [40 * Math.PI, 560 * Math.PI],
    [0, 1],
    [1, 11],
  ],
  3: [
    [0, 100],
    [40 * Math.PI, 560 * Math.PI],
    [0, 1],
    [1, 11],
  ],
};

/** The noise-free Friedman function `variant` at `x` (its first 5 or 4 inputs). */
export function friedmanFunction(variant: FriedmanVariant, x: number[]): number {
  if (variant === 1) return 10 * Math.sin(Math.PI * x[0] * x[1]) + 20 * (x[2] - 0.5) ** 2 + 10 * x[3] + 5 * x[4];
  const inner = x[1] * x[2] - 1 / (x[1] * x[3]);
  if (variant === 2) return Math.sqrt(x[0] ** 2 + inner ** 2);
  return Math.atan(inner / x[0]);
}

/**
 * Friedman regression: inputs uniform on the variant's ranges (`FRIEDMAN_INPUTS`) followed by
 * `extraFeatures` irrelevant uniform [0, 1] inputs; target the variant's function plus Gaussian
 * noise of std `noise` × std(noise-free targets of the sample).
 */
export function friedman(n: number, o: FriedmanOptions, seed: number): Dataset {
  check(isInt(n, 0, 1e7), `n must be a non-negative integer, got ${n}`);
  check(o.variant === 1 || o.variant === 2 || o.variant === 3, `variant must be 1, 2 or 3, got ${o.variant}`);
  check(Number.isFinite(o.noise) && o.noise >= 0 && o.noise <= 1, `noise must be in [0, 1], got ${o.noise}`);
  check(isInt(o.extraFeatures, 0, 20), `extraFeatures must be an integer in [0, 20], got ${o.extraFeatures}`);
  const rng = new Rng(seed);
  const ranges = FRIEDMAN_INPUTS[o.variant];
  const x: number[][] = [];
  const f: number[] = [];
  for (let i = 0; i < n; i++) {
    const row = [...ranges.map(([lo, hi]) => rng.uniform(lo, hi)), ...Array.from({ length: o.extraFeatures }, () => rng.next())];
    x.push(row);
    f.push(friedmanFunction(o.variant, row));
  }
  const sd = n > 1 ? o.noise * std(f) : 0;
  const y = f.map((v) => v + sd * rng.normal());
  const features = names(ranges.length + o.extraFeatures);
  return {
    name: `friedman${o.variant}`,
    features,
    target: 'y',
    kind: 'regression',
    x,
    y,
    descriptions: {
      ...Object.fromEntries(
        features.map((name, j) => {
          const [lo, hi] = ranges[j] ?? [0, 1];
          const r = `uniform on [${+lo.toFixed(2)}, ${+hi.toFixed(2)}]`;
          return [name, j < ranges.length ? `Input ${name}, ${r}.` : `Input ${name}, ${r}; the target does not depend on it.`];
        }),
      ),
      y: `The response: Friedman function #${o.variant} of the inputs plus Gaussian measurement noise.`,
    },
    summary: `Friedman #${o.variant}, ${n} points, noise ${o.noise} of the signal's std, ${o.extraFeatures} irrelevant inputs.`,
  };
}

/** Options of `shells`. */
export interface ShellOptions {
  /** Number of classes (2–6): class c lives on the shell of radius (c + 1) / classes. */
  classes: number;
  /** Dimensions of the space the shells live in (2–10). */
  dims: number;
  /** Std of the Gaussian noise on the radius (≥ 0). */
  noise: number;
  /** Extra uniform [−1, 1] features that carry no information (0–20). */
  distractors: number;
}

/**
 * Concentric shells: class c's points have a uniformly random direction in `dims` dimensions and
 * radius (c + 1)/classes plus Gaussian noise of std `noise`; then `distractors` uniform [−1, 1]
 * columns (the shells' coordinates come first).
 */
export function shells(n: number, o: ShellOptions, seed: number): Dataset {
  check(isInt(n, 0, 1e7), `n must be a non-negative integer, got ${n}`);
  check(isInt(o.classes, 2, 6), `classes must be an integer in [2, 6], got ${o.classes}`);
  check(isInt(o.dims, 2, 10), `dims must be an integer in [2, 10], got ${o.dims}`);
  check(Number.isFinite(o.noise) && o.noise >= 0, `noise must be a finite number >= 0, got ${o.noise}`);
  check(isInt(o.distractors, 0, 20), `distractors must be an integer in [0, 20], got ${o.distractors}`);
  const rng = new Rng(seed);
  const x: number[][] = [];
  const y: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = i % o.classes;
    let dir: number[];
    let norm: number;
    do {
      dir = Array.from({ length: o.dims }, () => rng.normal());
      norm = Math.hypot(...dir);
    } while (norm === 0);
    const r = (c + 1) / o.classes + o.noise * rng.normal();
    x.push([...dir.map((v) => (r * v) / norm), ...Array.from({ length: o.distractors }, () => rng.uniform(-1, 1))]);
    y.push(c);
  }
  const features = names(o.dims + o.distractors);
  return {
    name: 'shells',
    features,
    target: 'shell',
    kind: 'classification',
    classes: Array.from({ length: o.classes }, (_, c) => `shell_${c + 1}`),
    x,
    y,
    descriptions: {
      ...Object.fromEntries(features.map((f, j) => [f, j < o.dims ? `Coordinate ${f.slice(1)} of the point.` : `Feature ${f}, uniform on [-1, 1].`])),
      shell: `Which of ${o.classes} concentric shells the point lies on (shell 1 innermost).`,
    },
    summary: `Concentric shells, ${o.classes} classes in ${o.dims} dimensions, radial noise ${o.noise}, ${o.distractors} distractors, ${n} points.`,
  };
}

/** Options of `signParity`. */
export interface ParityOptions {
  /** Number of coordinates whose signs make the label (2–4). */
  bits: number;
  /** Std of the Gaussian noise added to those coordinates after labelling (≥ 0). */
  noise: number;
  /** Extra uniform [−1, 1] features that carry no information (0–20). */
  distractors: number;
}

/**
 * Sign parity (XOR in more dimensions): `bits` coordinates uniform on [−1, 1], the label 1 when an
 * odd number of them is negative, else 0; those coordinates then get Gaussian noise of std
 * `noise`; then `distractors` uniform [−1, 1] columns, all columns in a seeded random order.
 */
export function signParity(n: number, o: ParityOptions, seed: number): Dataset {
  check(isInt(n, 0, 1e7), `n must be a non-negative integer, got ${n}`);
  check(isInt(o.bits, 2, 4), `bits must be an integer in [2, 4], got ${o.bits}`);
  check(Number.isFinite(o.noise) && o.noise >= 0, `noise must be a finite number >= 0, got ${o.noise}`);
  check(isInt(o.distractors, 0, 20), `distractors must be an integer in [0, 20], got ${o.distractors}`);
  const rng = new Rng(seed);
  const d = o.bits + o.distractors;
  const order = rng.permutation(d);
  const x: number[][] = [];
  const y: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = i % 2;
    // Draw the magnitudes and all signs but the last freely; the last sign makes the parity c.
    const v = Array.from({ length: o.bits }, () => rng.next());
    let negatives = 0;
    for (let j = 0; j < o.bits - 1; j++) {
      if (rng.next() < 0.5) {
        v[j] = -v[j];
        negatives++;
      }
    }
    if (negatives % 2 !== c) v[o.bits - 1] = -v[o.bits - 1];
    const raw = [...v.map((u) => u + o.noise * rng.normal()), ...Array.from({ length: o.distractors }, () => rng.uniform(-1, 1))];
    x.push(order.map((j) => raw[j]));
    y.push(c);
  }
  const features = names(d);
  return {
    name: 'sign-parity',
    features,
    target: 'parity',
    kind: 'classification',
    classes: ['even', 'odd'],
    x,
    y,
    descriptions: {
      ...Object.fromEntries(features.map((f) => [f, `Feature ${f}, roughly on [-1, 1].`])),
      parity: `Whether an odd number of ${o.bits} hidden coordinates (among the features) is negative.`,
    },
    summary: `Sign parity of ${o.bits} coordinates, noise ${o.noise}, ${o.distractors} distractors, ${n} points.`,
  };
}
