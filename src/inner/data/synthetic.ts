/**
 * Seeded 2-D toy problems for binary classification (features `x1`, `x2`). Labels alternate
 * row by row (class 0 on even rows), so each class holds ⌈n/2⌉ or ⌊n/2⌋ rows.
 */
import { Rng } from '../../util/rng.js';
import type { Dataset } from './types.js';

function checkN(n: number): void {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer, got ${n}`);
}

function checkNoise(noise: number): void {
  if (!Number.isFinite(noise) || noise < 0) throw new RangeError(`noise must be a finite number >= 0, got ${noise}`);
}

function make(name: string, classes: string[], x: number[][], y: number[], summary: string): Dataset {
  return {
    name,
    features: ['x1', 'x2'],
    target: 'label',
    kind: 'classification',
    classes,
    x,
    y,
    descriptions: {
      x1: 'Horizontal coordinate of the point.',
      x2: 'Vertical coordinate of the point.',
      label: `Which of the two classes the point belongs to (${classes.join(' or ')}).`,
    },
    summary,
  };
}

/**
 * Two interleaved spirals of 1.5 turns each, radius growing from 0 to 1, the second the first
 * rotated by half a turn; isotropic Gaussian noise of std `noise` on each coordinate.
 */
export function twoSpirals(n: number, noise: number, seed: number): Dataset {
  checkN(n);
  checkNoise(noise);
  const rng = new Rng(seed);
  const x: number[][] = [];
  const y: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = i % 2;
    const t = Math.sqrt(rng.next()); // uniform density along the arm's area
    const angle = t * 3 * Math.PI + c * Math.PI;
    x.push([t * Math.cos(angle) + noise * rng.normal(), t * Math.sin(angle) + noise * rng.normal()]);
    y.push(c);
  }
  return make('two-spirals', ['spiral_a', 'spiral_b'], x, y, `Two interleaved spirals, ${n} points, noise ${noise}.`);
}

/**
 * Two interleaving half circles (scikit-learn's `make_moons`, angles drawn uniformly): the upper
 * moon (cos t, sin t) and the lower (1 − cos t, 0.5 − sin t), t ∈ [0, π]; Gaussian noise of std `noise`.
 */
export function moons(n: number, noise: number, seed: number): Dataset {
  checkN(n);
  checkNoise(noise);
  const rng = new Rng(seed);
  const x: number[][] = [];
  const y: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = i % 2;
    const t = Math.PI * rng.next();
    const [px, py] = c === 0 ? [Math.cos(t), Math.sin(t)] : [1 - Math.cos(t), 0.5 - Math.sin(t)];
    x.push([px + noise * rng.normal(), py + noise * rng.normal()]);
    y.push(c);
  }
  return make('moons', ['upper', 'lower'], x, y, `Two interleaving moons, ${n} points, noise ${noise}.`);
}

/**
 * A `cells`×`cells` checkerboard on [−1, 1]²: each point is uniform inside a cell drawn uniformly
 * among the cells of its class's colour; class = (column + row) mod 2. No label noise.
 */
export function checkerboard(n: number, cells: number, seed: number): Dataset {
  checkN(n);
  if (!Number.isInteger(cells) || cells < 2) throw new RangeError(`cells must be an integer >= 2, got ${cells}`);
  const rng = new Rng(seed);
  const byColour: [number, number][][] = [[], []];
  for (let i = 0; i < cells; i++) for (let j = 0; j < cells; j++) byColour[(i + j) % 2].push([i, j]);
  const w = 2 / cells;
  const x: number[][] = [];
  const y: number[] = [];
  for (let k = 0; k < n; k++) {
    const c = k % 2;
    const [i, j] = byColour[c][rng.int(byColour[c].length)];
    x.push([-1 + (i + rng.next()) * w, -1 + (j + rng.next()) * w]);
    y.push(c);
  }
  return make('checkerboard', ['black', 'white'], x, y, `A ${cells}x${cells} checkerboard, ${n} points.`);
}
