#!/usr/bin/env node
// The hidden evaluation of examples/softmax-trainer.mjs, run by the harness (never in a job):
//
//   node examples/softmax-eval.mjs JOB_DIR HELD_OUT_JSON
//
// HELD_OUT_JSON ({ x: number[][], y: number[] }) is the task's hidden test set, written by
// the harness to a private temporary file for this call only. Prints {"raw": accuracy, "rows": [1|0 per
// test row]}; the harness bootstraps the rows for the score's standard error.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, heldOutPath] = process.argv.slice(2);
if (!dir || !heldOutPath) {
  console.error('usage: softmax-eval.mjs JOB_DIR HELD_OUT_JSON');
  process.exit(2);
}
const m = JSON.parse(readFileSync(join(dir, 'weights.json'), 'utf8'));
if (m.format !== 'softmax-regression/v1') throw new Error(`weights.json: unknown format "${m.format}"`);
const test = JSON.parse(readFileSync(heldOutPath, 'utf8'));
const rows = test.x.map((x, i) => {
  const xs = x.map((v, k) => (v - m.mean[k]) / m.std[k]);
  const logits = m.W.map((w, c) => m.b[c] + w.reduce((a, wk, k) => a + wk * xs[k], 0));
  return logits.indexOf(Math.max(...logits)) === test.y[i] ? 1 : 0;
});
console.log(JSON.stringify({ raw: rows.reduce((a, b) => a + b, 0) / rows.length, rows }));
