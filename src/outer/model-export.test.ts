/**
 * Which job `rrl export model` hands over: the best confirmed spec beats a higher single score, the
 * baseline spec is confirmed by its seeds, nothing confirmed falls back to the best single score (the
 * pick says unconfirmed), rungs and failed jobs are never picked, and a run of several tasks needs one named.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { jobRow } from '../testing/job-row.js';
import type { JobRow } from '../store/rows.js';
import { pickExport } from './model-export.js';

const art = { artifactDir: '/x' };
const baselines = (task = 'cars-mpg'): JobRow[] =>
  [0.4, 0.42, 0.38, 0.41, 0.39].map((normalized, slot) => jobRow('baseline', { ...art, task, slot, normalized }));
const confirms = (parent: JobRow, scores: number[]): JobRow[] =>
  scores.map((normalized, slot) => jobRow('confirm', { ...art, parentId: parent.id, slot, normalized }));

test('the best confirmed spec is picked over a higher single score', () => {
  const lucky = jobRow('proposal', { ...art, normalized: 0.9 });
  const steady = jobRow('proposal', { ...art, normalized: 0.7 });
  const all = [...baselines(), lucky, steady, ...confirms(lucky, [0.5, 0.5, 0.52, 0.48, 0.5]), ...confirms(steady, [0.68, 0.7, 0.71, 0.69, 0.7])];
  const pick = pickExport(all, {});
  assert.equal(pick.job.id, steady.id);
  assert.ok(pick.confirmed?.complete && Math.abs(pick.confirmed.normalized! - 0.696) < 1e-9);
  assert.ok(Math.abs(pick.reference.mean! - 0.4) < 1e-9);
});

test('the baseline spec, confirmed by its seeds, is picked when no proposal is confirmed above it', () => {
  const unconfirmed = jobRow('proposal', { ...art, normalized: 0.95 });
  const pick = pickExport([...baselines(), unconfirmed], {});
  assert.equal(pick.job.kind, 'baseline');
  assert.equal(pick.confirmed?.scored, 5);
});

test('nothing confirmed: the best single score, marked unconfirmed; rungs and failed jobs never', () => {
  const all = [
    jobRow('proposal', { ...art, normalized: 0.6 }),
    jobRow('proposal', { ...art, normalized: 0.99, share: 0.25 }),
    jobRow('proposal', { ...art, normalized: null, status: 'failed' }),
    jobRow('rung', { ...art, normalized: 0.98 }),
    jobRow('proposal', { ...art, normalized: 0.7 }),
  ];
  const pick = pickExport(all, {});
  assert.equal(pick.job.normalized, 0.7);
  assert.equal(pick.confirmed, null);
});

test('a run of several tasks needs --task; an unknown task or job, or a job without a model, is one line', () => {
  const all = [...baselines('cars-mpg'), ...baselines('two-moons'), jobRow('proposal', { ...art, task: 'two-moons', normalized: 0.5 })];
  assert.throws(() => pickExport(all, {}), /^Error: the run trained 2 tasks; name one with --task \(cars-mpg, two-moons\)$/);
  assert.equal(pickExport(all, { task: 'two-moons' }).job.task, 'two-moons');
  assert.throws(() => pickExport(all, { task: 'iris-species' }), /no trained model of task "iris-species"/);
  assert.throws(() => pickExport(all, { job: 123456 }), /^Error: the run has no job 123456$/);
  const failed = jobRow('proposal', { status: 'failed', error: 'nan in the loss', normalized: null });
  assert.throws(() => pickExport([failed], { job: failed.id }), /has no model to export \(failed: nan in the loss\)/);
  assert.throws(() => pickExport([], {}), /no succeeded job with a model/);
});
