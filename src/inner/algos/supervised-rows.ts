/**
 * The supervised trainer's rows in single precision (`supervised.ts`): inputs standardised and
 * targets label-smoothed or standardised once, packed row-major, and the minibatch buffers a
 * training step gathers its rows into and augments in place, so that a step allocates nothing.
 * The values are those the trainer computed row by row before (the same double-precision
 * expression, rounded once to single precision); `supervised-determinism.test.ts` pins them.
 */

/** Per-feature means and standard deviations the inputs are standardised with. */
export interface InputNorm {
  mean: number[];
  std: number[];
}

/** The inputs of rows `idx` of `x`, standardised by `norm` when given, packed [idx.length × d]. */
export function packInputs(x: readonly (readonly number[])[], idx: ArrayLike<number>, d: number, norm: InputNorm | null): Float32Array {
  const out = new Float32Array(idx.length * d);
  for (let r = 0; r < idx.length; r++) {
    const row = x[idx[r]];
    const o = r * d;
    if (norm) for (let j = 0; j < d; j++) out[o + j] = (row[j] - norm.mean[j]) / norm.std[j];
    else for (let j = 0; j < d; j++) out[o + j] = row[j];
  }
  return out;
}

/** How targets become network targets: `k` label-smoothed class rows (smoothing `eps`), or standardised values. */
export type TargetCoding = { classify: true; k: number; eps: number } | { classify: false; mean: number; std: number };

/** The targets of rows `idx` of `y`: label-smoothed class rows [n × k], or standardised values [n]. */
export function packTargets(y: readonly number[], idx: ArrayLike<number>, t: TargetCoding): Float32Array {
  if (!t.classify) return Float32Array.from(idx, (i) => (y[i] - t.mean) / t.std);
  const { k, eps } = t;
  const out = new Float32Array(idx.length * k);
  for (let r = 0; r < idx.length; r++) {
    for (let c = 0; c < k; c++) out[r * k + c] = eps / k;
    out[r * k + y[idx[r]]] += 1 - eps;
  }
  return out;
}

/** Every drawn row packed once, an epoch's order, and one minibatch's buffers (reused from step to step). */
export class Minibatches {
  /** The epoch's shuffled training rows (indices into the packed rows). */
  readonly order: Int32Array;
  /** The minibatch's inputs [batch × d] and targets [batch × yw], augmented in place. */
  readonly xb: Float32Array;
  readonly yb: Float32Array;
  /** Scratch of mixup: the mixed inputs and targets, and each row's partner. */
  readonly xm: Float32Array;
  readonly ym: Float32Array;
  readonly partner: Int32Array;

  /**
   * `x` [rows × d] and `y` [rows × yw] are every drawn row packed (`packInputs`, `packTargets`),
   * `w` each row's loss weight; `train` the training rows.
   */
  constructor(
    readonly x: Float32Array,
    readonly y: Float32Array,
    readonly w: Float32Array,
    readonly train: readonly number[],
    readonly batch: number,
    readonly d: number,
    readonly yw: number,
  ) {
    this.order = new Int32Array(train.length);
    this.xb = new Float32Array(batch * d);
    this.yb = new Float32Array(batch * yw);
    this.xm = new Float32Array(batch * d);
    this.ym = new Float32Array(batch * yw);
    this.partner = new Int32Array(batch);
  }

  /** Copies the rows `order[start … start + batch)` into `xb`, `yb` and their weights into `wb`. */
  gather(start: number, wb: Float32Array): void {
    const { d, yw, order, x, y, w, xb, yb } = this;
    for (let r = 0; r < this.batch; r++) {
      const i = order[start + r];
      for (let j = 0; j < d; j++) xb[r * d + j] = x[i * d + j];
      for (let c = 0; c < yw; c++) yb[r * yw + c] = y[i * yw + c];
      wb[r] = w[i];
    }
  }

  /** Mixup of the minibatch in place: row r becomes lam·row r + (1 − lam)·row partner[r], inputs and targets. */
  mix(lam: number): void {
    const { d, yw, xb, yb, xm, ym, partner } = this;
    for (let r = 0; r < this.batch; r++) {
      const p = partner[r];
      for (let j = 0; j < d; j++) xm[r * d + j] = lam * xb[r * d + j] + (1 - lam) * xb[p * d + j];
      for (let c = 0; c < yw; c++) ym[r * yw + c] = lam * yb[r * yw + c] + (1 - lam) * yb[p * yw + c];
    }
    xb.set(xm);
    yb.set(ym);
  }
}
