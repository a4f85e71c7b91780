/**
 * Adam over a small plain vector (parameters that live outside an MLP, such as PPO's
 * state-independent log std), with the same formulation and settings as `FusedMlp.adam`.
 */
import type { AdamStep } from './mlp.js';

/** Adam moments for a vector of `n` parameters. */
export class VecAdam {
  private readonly m: Float64Array;
  private readonly v: Float64Array;
  private t = 0;

  /** Moments for `n` parameters, starting at zero. */
  constructor(n: number) {
    this.m = new Float64Array(n);
    this.v = new Float64Array(n);
  }

  /** One step: `params` move against `grads` (scaled by `gradScale`). */
  step(params: Float64Array, grads: ArrayLike<number>, o: AdamStep): void {
    const b1 = o.beta1 ?? 0.9;
    const b2 = o.beta2 ?? 0.999;
    const eps = o.eps ?? 1e-8;
    const s = o.gradScale ?? 1;
    this.t += 1;
    const step = o.lr / (1 - b1 ** this.t);
    const isb = 1 / Math.sqrt(1 - b2 ** this.t);
    const decay = 1 - o.lr * (o.decoupledDecay ?? 0);
    for (let i = 0; i < params.length; i++) {
      const g = s * grads[i] + (o.l2 ?? 0) * params[i];
      this.m[i] = b1 * this.m[i] + (1 - b1) * g;
      this.v[i] = b2 * this.v[i] + (1 - b2) * g * g;
      params[i] = params[i] * decay - (step * this.m[i]) / (Math.sqrt(this.v[i]) * isb + eps);
    }
  }
}
