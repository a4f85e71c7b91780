/**
 * `npm run bench -- crossover`: one training step (forward, backward, Adam) of an MLP
 * [8, w, w, 2] on a batch of n rows, on the fused engine and on TensorFlow.js (wasm), alternating,
 * over widths and batches; prints the time per step of each and which is faster. That every job
 * trains on the fused engine (`src/inner/nn/mlp.ts`) rests on this table.
 */
import { num, table } from '../src/cli/format.js';
import { FusedMlp } from '../src/inner/nn/mlp.js';
import { forward, makeNet } from '../src/testing/tf-mlp.js';
import { initTf, tf } from '../src/util/tf.js';
import { Rng } from '../src/util/rng.js';

function timeIt(run: () => void, minMs: number): number {
  run();
  let reps = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < minMs) {
    run();
    reps += 1;
  }
  return (performance.now() - t0) / reps;
}

/** Milliseconds per training step of each engine, per (width, batch). */
export async function crossover(): Promise<Record<string, unknown>> {
  const backend = await initTf();
  const rows: { width: number; batch: number; fusedMs: number; tfjsMs: number }[] = [];
  const widths = (process.env.RRL_CROSSOVER_WIDTHS ?? '32,64,128,256,512').split(',').map(Number);
  const batches = (process.env.RRL_CROSSOVER_BATCHES ?? '32,128,512,2048').split(',').map(Number);
  for (const w of widths) {
    for (const n of batches) {
      const sizes = [8, w, w, 2];
      const rng = new Rng(1);
      const x = Float32Array.from({ length: n * 8 }, () => rng.normal());
      const fused = new FusedMlp(sizes, 'tanh', n);
      const fusedStep = (): void => {
        fused.input(n).set(x);
        const out = fused.forward(n);
        const g = fused.gradOutput(n);
        for (let i = 0; i < n; i++) g[i * fused.outStride] = out[i * fused.outStride] / n;
        fused.backward(n);
        fused.adam({ lr: 1e-4 });
      };
      const net = makeNet(sizes, 1, rng);
      const vars = [...net.w, ...net.b];
      const opt = tf.train.adam(1e-4);
      const xt = tf.tensor2d(x, [n, 8]);
      const tfStep = (): void => {
        const loss = opt.minimize(() => tf.mul(0.5, tf.mean(tf.square(tf.slice(forward(net, xt, 'tanh'), [0, 0], [n, 1])))) as tf.Scalar, true, vars);
        loss?.dataSync();
        loss?.dispose();
      };
      const budget = Number(process.env.RRL_CROSSOVER_MS ?? 300);
      let f = Infinity;
      let t = Infinity;
      for (let rep = 0; rep < 2; rep++) {
        f = Math.min(f, timeIt(fusedStep, budget));
        t = Math.min(t, timeIt(tfStep, budget));
      }
      xt.dispose();
      opt.dispose();
      for (const v of vars) v.dispose();
      rows.push({ width: w, batch: n, fusedMs: f, tfjsMs: t });
      process.stderr.write(`crossover: width ${w} batch ${n}: fused ${f.toFixed(3)} ms, tfjs ${t.toFixed(3)} ms\n`);
    }
  }
  console.log(
    table(
      ['width', 'batch', 'fused ms/step', `tfjs (${backend}) ms/step`, 'faster'],
      rows.map((r) => [
        String(r.width),
        String(r.batch),
        num(r.fusedMs, 3),
        num(r.tfjsMs, 3),
        r.fusedMs <= r.tfjsMs ? `fused ${num(r.tfjsMs / r.fusedMs, 2)}×` : `tfjs ${num(r.fusedMs / r.tfjsMs, 2)}×`,
      ]),
    ),
  );
  return { backend, rows };
}
