import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTransfer, transferPreset } from './experiment.js';
import { LocalExecutor } from '../run/local.js';

test('the transfer experiment writes its tables and plots and reports every method', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-transfer-'));
  const ex = new LocalExecutor({ workers: 2 });
  try {
    const r = await runTransfer(dir, { trainTasks: ['penguins-species'], heldOutTasks: ['iris-species'], iterations: 1, group: 2, seed: 3, seeds: 2 }, ex);
    assert.deepEqual(Object.keys(r.heldOut).sort(), ['baseline', 'controllerAdaptBest16', 'controllerBest16', 'controllerBest4', 'randomBest16', 'randomBest4', 'searchBest16', 'searchBest4', 'zeroShot']);
    for (const v of Object.values(r.heldOut)) assert.ok(v === null || Number.isFinite(v));
    const row = r.rows[0];
    assert.ok(row.controllerBest16! >= row.controllerBest4! && row.controllerBest4! >= row.zeroShot!, 'best of more samples is never worse');
    assert.ok(row.randomBest16! >= row.randomBest4!);
    assert.ok(row.controllerAdaptBest16! >= row.zeroShot!, 'the adapting controller starts from the same mode');
    assert.ok(row.searchBest16! >= row.searchBest4!);
    assert.equal(r.curve.length, 1);
    // Two seeds, each in its own directory; the reported means are the means over the seeds.
    assert.deepEqual(r.perSeed.map((p) => p.seed), [3, 4]);
    for (const p of r.perSeed) assert.ok(existsSync(join(dir, `seed-${p.seed}`, 'meta')));
    const z = r.perSeed.map((p) => p.heldOut.zeroShot!);
    assert.ok(Math.abs(r.heldOut.zeroShot! - (z[0] + z[1]) / 2) < 1e-12);
    assert.ok(Math.abs(r.spread.zeroShot! - Math.abs(z[0] - z[1]) / Math.SQRT2) < 1e-12);
    for (const f of Object.values(r.files)) assert.ok(existsSync(f), f);
    assert.match(readFileSync(r.files.curveSvg, 'utf8'), /^<svg/);
    assert.match(readFileSync(r.files.markdown, 'utf8'), /\| iris-species \|/);
    assert.match(readFileSync(r.files.markdown, 'utf8'), /## Held-out means per seed/);
    assert.deepEqual(JSON.parse(readFileSync(r.files.json, 'utf8')).heldOut, r.heldOut);
  } finally {
    await ex.close();
  }
});

test('the quick preset uses train tasks for meta-training and held-out tasks for the comparison', async () => {
  const { listTasks } = await import('../tasks/briefs.js');
  const split = new Map(listTasks().map((t) => [t.brief.id, t.brief.split]));
  const q = transferPreset('quick');
  for (const t of q.trainTasks) assert.equal(split.get(t), 'train');
  for (const t of q.heldOutTasks) assert.equal(split.get(t), 'held-out');
});
