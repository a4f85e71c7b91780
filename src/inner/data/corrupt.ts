/**
 * Seeded, pure dataset transformations — the "what went wrong with this data" catalogue of
 * supervised tasks. Each takes a Dataset and returns a new one (the input is never mutated),
 * appends a line to `history`, and draws every random choice from `Rng(mixSeed(seed, tag))`, so
 * the same arguments always give the same rows. Bad arguments throw a RangeError naming them.
 */
import { Rng, mixSeed } from '../../util/rng.js';
import { classCounts, column, quantile, std } from './stats.js';
import type { Dataset } from './types.js';

/** Per-transformation stream tags, so one seed reused across transformations gives unrelated draws. */
const TAG = { subsample: 1, labelNoise: 2, covariateShift: 3, imbalance: 4, duplicate: 5, jitter: 6, split: 7 } as const;

function rngFor(seed: number, tag: number): Rng {
  return new Rng(mixSeed(seed, tag));
}

function check(ok: boolean, message: string): void {
  if (!ok) throw new RangeError(message);
}

const isFraction = (v: number): boolean => Number.isFinite(v) && v >= 0 && v <= 1;

/** A new dataset like `d` with the given rows and one more history line; arrays are fresh copies. */
function derive(d: Dataset, x: number[][], y: number[], entry: string): Dataset {
  return {
    ...d,
    features: [...d.features],
    classes: d.classes ? [...d.classes] : undefined,
    ...(d.columns ? { columns: d.columns.map((c) => (c.kind === 'categorical' ? { kind: c.kind, levels: [...c.levels] } : c)) } : {}),
    x: x.map((r) => [...r]),
    y: [...y],
    descriptions: { ...d.descriptions },
    history: [...(d.history ?? []), entry],
  };
}

/** The rows of `d` at `idx`, in that order. */
function pick(d: Dataset, idx: readonly number[], entry: string): Dataset {
  return derive(
    d,
    idx.map((i) => d.x[i]),
    idx.map((i) => d.y[i]),
    entry,
  );
}

/** `k` distinct indices from `pool`, uniformly, returned in ascending order. */
function choose(pool: readonly number[], k: number, rng: Rng): number[] {
  const a = [...pool];
  for (let i = 0; i < k; i++) {
    const j = i + rng.int(a.length - i);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a.slice(0, k).sort((p, q) => p - q);
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** Row indices of each class (classification) or one group of all rows (regression). */
function strata(d: Dataset): number[][] {
  if (d.kind !== 'classification' || !d.classes) return [range(d.y.length)];
  const groups: number[][] = d.classes.map(() => []);
  d.y.forEach((c, i) => groups[c].push(i));
  return groups;
}

const fmt = (v: number): string => String(Math.round(v * 1e6) / 1e6);

/** Subsample: keeps min(n, rows) rows drawn uniformly without replacement, in their original order. */
export function subsample(d: Dataset, n: number, seed: number): Dataset {
  check(Number.isInteger(n) && n >= 0, `subsample: n must be a non-negative integer, got ${n}`);
  const k = Math.min(n, d.y.length);
  return pick(d, choose(range(d.y.length), k, rngFor(seed, TAG.subsample)), `subsample(n=${n}, seed=${seed})`);
}

/**
 * Label noise. Classification: exactly round(rate·n) rows, chosen uniformly, get a different class
 * drawn uniformly from the other classes. Regression: every target gets Gaussian noise of std
 * rate·std(y). Rows keep their order.
 */
export function labelNoise(d: Dataset, rate: number, seed: number): Dataset {
  check(isFraction(rate), `labelNoise: rate must be in [0, 1], got ${rate}`);
  const rng = rngFor(seed, TAG.labelNoise);
  const y = [...d.y];
  if (d.kind === 'classification') {
    const m = d.classes?.length ?? 0;
    check(m >= 2, `labelNoise: dataset ${d.name} needs at least 2 classes, has ${m}`);
    for (const i of choose(range(y.length), Math.round(rate * y.length), rng)) {
      const r = rng.int(m - 1);
      y[i] = r >= y[i] ? r + 1 : r;
    }
  } else {
    const s = rate * std(d.y);
    for (let i = 0; i < y.length; i++) y[i] += s * rng.normal();
  }
  return derive(d, d.x, y, `labelNoise(rate=${fmt(rate)}, seed=${seed})`);
}

/**
 * Covariate shift: keeps only the rows whose `feature` lies within [q(quantileLo), q(quantileHi)]
 * (bounds included; quantiles of that feature over `d`, linear interpolation). Deterministic —
 * `seed` is accepted for a uniform signature and recorded.
 */
export function covariateShift(d: Dataset, feature: string, quantileLo: number, quantileHi: number, seed: number): Dataset {
  check(
    isFraction(quantileLo) && isFraction(quantileHi) && quantileLo <= quantileHi,
    `covariateShift: need 0 <= quantileLo <= quantileHi <= 1, got ${quantileLo}, ${quantileHi}`,
  );
  const v = column(d, feature);
  check(v.length > 0, `covariateShift: dataset ${d.name} is empty`);
  check(d.columns?.[d.features.indexOf(feature)]?.kind !== 'categorical', `covariateShift: feature '${feature}' is categorical; shift along a numeric one`);
  // Rows whose cell is missing are outside every band.
  const present = v.filter((a) => !Number.isNaN(a));
  check(present.length > 0, `covariateShift: feature '${feature}' of ${d.name} has no value`);
  const lo = quantile(present, quantileLo);
  const hi = quantile(present, quantileHi);
  const idx = range(v.length).filter((i) => v[i] >= lo && v[i] <= hi);
  return pick(d, idx, `covariateShift(feature=${feature}, band=[${fmt(quantileLo)}, ${fmt(quantileHi)}] = [${fmt(lo)}, ${fmt(hi)}], seed=${seed})`);
}

/**
 * Class imbalance: keeps round(keepFractions[c]·count[c]) rows of each class c, chosen uniformly,
 * in their original order (classification only).
 */
export function imbalance(d: Dataset, keepFractions: number[], seed: number): Dataset {
  const counts = classCounts(d);
  check(keepFractions.length === counts.length, `imbalance: keepFractions needs one fraction per class (${counts.length}), got ${keepFractions.length}`);
  check(keepFractions.every(isFraction), `imbalance: every keep fraction must be in [0, 1], got [${keepFractions.join(', ')}]`);
  const rng = rngFor(seed, TAG.imbalance);
  const idx = strata(d)
    .flatMap((rows, c) => choose(rows, Math.round(keepFractions[c] * rows.length), rng))
    .sort((p, q) => p - q);
  return pick(d, idx, `imbalance(keep=[${keepFractions.map(fmt).join(', ')}], seed=${seed})`);
}

/**
 * Duplicates (a leaky set whose validation scores look better than they are): round(fraction·n)
 * rows, chosen uniformly, appear `copies` extra times each; all n + round(fraction·n)·copies rows
 * are then shuffled together.
 */
export function duplicate(d: Dataset, copies: number, fraction: number, seed: number): Dataset {
  check(Number.isInteger(copies) && copies >= 0, `duplicate: copies must be a non-negative integer, got ${copies}`);
  check(isFraction(fraction), `duplicate: fraction must be in [0, 1], got ${fraction}`);
  const rng = rngFor(seed, TAG.duplicate);
  const n = d.y.length;
  const chosen = choose(range(n), Math.round(fraction * n), rng);
  const idx = range(n);
  for (const i of chosen) for (let c = 0; c < copies; c++) idx.push(i);
  rng.shuffle(idx);
  return pick(d, idx, `duplicate(copies=${copies}, fraction=${fmt(fraction)}, seed=${seed})`);
}

/**
 * Jitter augmentation: the original rows, followed by `copies` noisy copies of every row, each
 * numeric feature j moved by Gaussian noise of std scale·std(feature j) (population std over the
 * rows where it is present); categorical codes and missing cells are copied as they are; labels kept.
 */
export function jitterAugment(d: Dataset, copies: number, scale: number, seed: number): Dataset {
  check(Number.isInteger(copies) && copies >= 0, `jitterAugment: copies must be a non-negative integer, got ${copies}`);
  check(Number.isFinite(scale) && scale >= 0, `jitterAugment: scale must be a finite number >= 0, got ${scale}`);
  const rng = rngFor(seed, TAG.jitter);
  const sd = d.features.map((f, j) => {
    const present = column(d, f).filter((a) => !Number.isNaN(a));
    return d.columns?.[j]?.kind === 'categorical' || present.length === 0 ? 0 : scale * std(present);
  });
  const x = [...d.x];
  const y = [...d.y];
  for (let c = 0; c < copies; c++) {
    for (let i = 0; i < d.y.length; i++) {
      x.push(d.x[i].map((v, j) => v + sd[j] * rng.normal()));
      y.push(d.y[i]);
    }
  }
  return derive(d, x, y, `jitterAugment(copies=${copies}, scale=${fmt(scale)}, seed=${seed})`);
}

/**
 * Train/test split: round(testFraction·count) rows of each class (classification; of all rows for
 * regression) go to `test`, chosen uniformly; the rest to `train`. Both keep the original row order.
 */
export function split(d: Dataset, testFraction: number, seed: number): { train: Dataset; test: Dataset } {
  check(isFraction(testFraction), `split: testFraction must be in [0, 1], got ${testFraction}`);
  const rng = rngFor(seed, TAG.split);
  const inTest = new Array<boolean>(d.y.length).fill(false);
  for (const rows of strata(d)) for (const i of choose(rows, Math.round(testFraction * rows.length), rng)) inTest[i] = true;
  const all = range(d.y.length);
  const tag = `testFraction=${fmt(testFraction)}, seed=${seed}`;
  return {
    train: pick(
      d,
      all.filter((i) => !inTest[i]),
      `split(${tag}): train`,
    ),
    test: pick(
      d,
      all.filter((i) => inTest[i]),
      `split(${tag}): test`,
    ),
  };
}

/**
 * Concatenation: the rows of `a` then the rows of `b`. Both must have the same kind, target and
 * feature names (b's columns are reordered to a's order); classes are the union, a's first, and
 * b's labels are remapped by class name.
 */
export function concat(a: Dataset, b: Dataset): Dataset {
  check(a.kind === b.kind, `concat: kinds differ (${a.kind} vs ${b.kind})`);
  check(a.target === b.target, `concat: targets differ (${a.target} vs ${b.target})`);
  const sameFeatures = a.features.length === b.features.length && a.features.every((f) => b.features.includes(f));
  check(sameFeatures, `concat: features differ ([${a.features.join(', ')}] vs [${b.features.join(', ')}])`);
  const order = a.features.map((f) => b.features.indexOf(f));
  let classes = a.classes ? [...a.classes] : undefined;
  let by = b.y;
  if (a.kind === 'classification') {
    classes = [...(a.classes ?? [])];
    for (const c of b.classes ?? []) if (!classes.includes(c)) classes.push(c);
    const map = (b.classes ?? []).map((c) => classes!.indexOf(c));
    by = b.y.map((c) => map[c]);
  }
  const bh = b.history?.length ? ` after ${b.history.join(', ')}` : '';
  const out = derive(a, [...a.x, ...b.x.map((r) => order.map((j) => r[j]))], [...a.y, ...by], `concat(${b.name}${bh})`);
  out.classes = classes;
  out.name = a.name === b.name ? a.name : `${a.name}+${b.name}`;
  out.descriptions = { ...b.descriptions, ...a.descriptions };
  return out;
}
