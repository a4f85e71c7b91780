#!/usr/bin/env node
// A command trainer for recursive-rl: multinomial logistic (softmax) regression, in plain
// JavaScript with no dependencies. recursive-rl runs it as
//
//   node examples/softmax-trainer.mjs SPEC_PATH JOB_DIR
//
// It reads the job spec, the task brief (JOB_DIR/brief.json) and the training rows the
// harness chose (JOB_DIR/data.json: { sources: { id: { x: number[][], y: number[] } } }),
// trains within the spec's example budget, and writes into JOB_DIR:
//   weights.json  the model, in this program's own format
//   curve.jsonl   one {"name","step","wallTime","value"} per line
//   cost.json     {"envSteps": 0, "examples", "wallSeconds", "cpuSeconds"}
//   status.json   {"status": "succeeded", "stopReason", "updates", "trainReturn"}
//                 (or {"status": "failed", "error"} and exit code 1)
// It never sees the hidden test set: examples/softmax-eval.mjs scores the weights on the
// harness side. RRL_EXAMPLE_TRAINER_DELAY_MS slows it down (demos and tests of long jobs).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [specPath, dir] = process.argv.slice(2);
if (!specPath || !dir) {
  console.error('usage: softmax-trainer.mjs SPEC_PATH JOB_DIR');
  process.exit(2);
}
const t0 = performance.now();
const write = (file, value) => writeFileSync(join(dir, file), typeof value === 'string' ? value : JSON.stringify(value, null, 2));

try {
  const delay = Number(process.env.RRL_EXAMPLE_TRAINER_DELAY_MS ?? 0);
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
  const spec = JSON.parse(readFileSync(specPath, 'utf8'));
  const brief = JSON.parse(readFileSync(join(dir, 'brief.json'), 'utf8'));
  const data = JSON.parse(readFileSync(join(dir, 'data.json'), 'utf8'));
  const classes = brief.supervised.target.classes.length;
  const rng = mulberry32(spec.seed);

  // The mixture of sources the spec asks for: `size` rows drawn by weight, or every row once.
  const chosen = spec.dataset.sources.filter((s) => s.weight > 0);
  const rows = [];
  if (spec.dataset.size === null) {
    for (const s of chosen) data.sources[s.id].x.forEach((x, i) => rows.push([x, data.sources[s.id].y[i]]));
  } else {
    const total = chosen.reduce((a, s) => a + s.weight, 0);
    for (const s of chosen) {
      const src = data.sources[s.id];
      const n = Math.round((spec.dataset.size * s.weight) / total);
      for (let i = 0; i < n; i++) {
        const j = Math.floor(rng() * src.y.length);
        rows.push([src.x[j], src.y[j]]);
      }
    }
  }
  if (rows.length < 2) throw new Error('dataset: the chosen sources hold fewer than 2 rows');
  shuffle(rows, rng);
  const nVal = Math.floor(rows.length * spec.dataset.validationFraction);
  const val = rows.slice(0, nVal);
  const train = rows.slice(nVal);

  // Standardise with the training rows' statistics (the weights keep them for prediction).
  const d = train[0][0].length;
  const mean = new Array(d).fill(0);
  const std = new Array(d).fill(1);
  if (spec.environment.standardize) {
    for (const [x] of train) for (let k = 0; k < d; k++) mean[k] += x[k] / train.length;
    for (let k = 0; k < d; k++) std[k] = Math.sqrt(train.reduce((a, [x]) => a + (x[k] - mean[k]) ** 2, 0) / train.length) || 1;
  }
  const z = (x) => x.map((v, k) => (v - mean[k]) / std[k]);

  const W = Array.from({ length: classes }, () => new Array(d).fill(0));
  const b = new Array(classes).fill(0);
  const { learningRate: lr, batchSize, epochs, weightDecay } = spec.algorithm;
  const smoothing = spec.reward.labelSmoothing ?? 0;
  const budget = Math.min(spec.budget.examples, brief.budget.maxExamples);
  let examples = 0;
  let stopReason = 'epochs';
  let epoch = 0;
  const curve = [];
  const log = (name, step, value) => curve.push(JSON.stringify({ name, step, wallTime: (performance.now() - t0) / 1000, value }));
  for (; epoch < epochs; epoch++) {
    shuffle(train, rng);
    let loss = 0;
    for (let i = 0; i < train.length; i += batchSize) {
      const batch = train.slice(i, i + batchSize);
      if (examples + batch.length > budget) {
        stopReason = 'budget';
        break;
      }
      const gW = W.map((r) => r.map(() => 0));
      const gb = b.map(() => 0);
      for (const [x, y] of batch) {
        const xs = z(x);
        const p = softmax(W.map((w, c) => b[c] + dot(w, xs)));
        for (let c = 0; c < classes; c++) {
          const target = (c === y ? 1 - smoothing : 0) + smoothing / classes;
          loss -= target * Math.log(p[c] + 1e-12);
          const g = (p[c] - target) / batch.length;
          gb[c] += g;
          for (let k = 0; k < d; k++) gW[c][k] += g * xs[k];
        }
      }
      for (let c = 0; c < classes; c++) {
        b[c] -= lr * gb[c];
        for (let k = 0; k < d; k++) W[c][k] -= lr * (gW[c][k] + weightDecay * W[c][k]);
      }
      examples += batch.length;
    }
    log('losses/train_loss', examples, loss / Math.max(1, train.length));
    if (val.length) log('charts/val_accuracy', examples, accuracy(val));
    if (stopReason === 'budget') break;
  }
  if (!W.flat().every(Number.isFinite)) throw new Error('training diverged (non-finite weights); lower algorithm.learningRate');

  write('weights.json', { format: 'softmax-regression/v1', features: brief.supervised.features.map((f) => f.name), classes, mean, std, W, b });
  write('curve.jsonl', curve.join('\n') + (curve.length ? '\n' : ''));
  const cpu = process.cpuUsage();
  write('cost.json', { envSteps: 0, examples, wallSeconds: (performance.now() - t0) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6 });
  write('status.json', { status: 'succeeded', stopReason, updates: epoch, trainReturn: val.length ? accuracy(val) : null });
  console.log(`trained ${epoch} epoch(s) on ${train.length} rows, ${examples} examples; validation accuracy ${val.length ? accuracy(val).toFixed(3) : 'n/a'}`);

  function accuracy(set) {
    return set.filter(([x, y]) => argmax(W.map((w, c) => b[c] + dot(w, z(x)))) === y).length / set.length;
  }
} catch (err) {
  write('status.json', { status: 'failed', kind: 'error', error: err.message });
  console.error(`softmax-trainer: ${err.message}`);
  process.exit(1);
}

function dot(a, x) {
  let s = 0;
  for (let k = 0; k < a.length; k++) s += a[k] * x[k];
  return s;
}
function softmax(v) {
  const m = Math.max(...v);
  const e = v.map((x) => Math.exp(x - m));
  const s = e.reduce((a, x) => a + x, 0);
  return e.map((x) => x / s);
}
function argmax(v) {
  return v.indexOf(Math.max(...v));
}
function shuffle(a, rng) {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
}
function mulberry32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
