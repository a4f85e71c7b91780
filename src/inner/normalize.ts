/**
 * Running mean and variance of observations (Gymnasium's `NormalizeObservation`:
 * parallel-variance batch updates, epsilon 1e-8, clipping at ±10).
 */
export class RunningNorm {
  readonly mean: Float64Array;
  readonly var: Float64Array;
  count = 1e-4;
  readonly clip = 10;

  /** Creates statistics for vectors of length `dim`. */
  constructor(readonly dim: number) {
    this.mean = new Float64Array(dim);
    this.var = new Float64Array(dim).fill(1);
  }

  /** Folds `rows` vectors (row by row in `x`) into the statistics. */
  update(x: ArrayLike<number>, rows: number): void {
    const d = this.dim;
    for (let i = 0; i < d; i++) {
      let m = 0;
      for (let r = 0; r < rows; r++) m += x[r * d + i];
      m /= rows;
      let v = 0;
      for (let r = 0; r < rows; r++) {
        const e = x[r * d + i] - m;
        v += e * e;
      }
      v /= rows;
      const delta = m - this.mean[i];
      const tot = this.count + rows;
      const newMean = this.mean[i] + (delta * rows) / tot;
      const m2 = this.var[i] * this.count + v * rows + (delta * delta * this.count * rows) / tot;
      this.mean[i] = newMean;
      this.var[i] = m2 / tot;
    }
    this.count += rows;
  }

  /** Writes normalised, clipped copies of `rows` vectors into `out` (which may be `x` itself). */
  apply<T extends Float64Array | Float32Array>(x: ArrayLike<number>, rows: number, out: T): T {
    const d = this.dim;
    for (let r = 0; r < rows; r++) {
      for (let i = 0; i < d; i++) {
        const z = (x[r * d + i] - this.mean[i]) / Math.sqrt(this.var[i] + 1e-8);
        out[r * d + i] = z > this.clip ? this.clip : Math.max(z, -this.clip);
      }
    }
    return out;
  }

  /** The frozen form stored in a policy file. */
  freeze(): { mean: number[]; std: number[]; clip: number } {
    return {
      mean: Array.from(this.mean),
      std: Array.from(this.var, (v) => Math.sqrt(v + 1e-8)),
      clip: this.clip,
    };
  }
}
