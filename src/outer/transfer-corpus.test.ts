import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixtureDoc, fixtureRandom, writeCorpus } from '../testing/corpus.js';
import type { FixtureTable } from '../testing/corpus.js';
import { LocalExecutor } from '../run/local.js';
import { FAMILIES_PRIOR, SHIPPED_PRIOR, controllerFromPrior, readPrior } from './agents/prior.js';
import { Controller } from './agents/controller.js';
import { Store } from '../store/store.js';
import { runTransfer } from './experiment.js';
import { optunaArmsOf } from './transfer-arms.js';
import { corpusPreset, resolveCorpus } from './transfer-options.js';
import { OPTUNA_ARMS } from './transfer-summary.js';

const corpus = mkdtempSync(join(tmpdir(), 'rrl-transfer-corpus-'));
const dirs: string[] = [];
test.after(() => {
  rmSync(corpus, { recursive: true, force: true });
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A table of 170 rows whose documented response `y` depends on two features and a categorical one, with missing cells. */
function table(pkg: string, item: string, seed: number): FixtureTable {
  const r = fixtureRandom(seed);
  const n = 170;
  const a = Array.from({ length: n }, () => r() * 4);
  const b = Array.from({ length: n }, () => r() * 2);
  const kind = Array.from({ length: n }, (_, i) => ['north', 'south', 'east'][i % 3]);
  const y = a.map((v, i) => v + 2 * b[i] + (kind[i] === 'south' ? 1.5 : 0) + r());
  return {
    package: pkg,
    item,
    doc: fixtureDoc(`${item} of ${pkg}`, 'The response is `y`, a yield measured on each plot.', {
      y: 'yield, kg',
      a: 'water, l',
      b: 'fertiliser, kg',
      kind: 'the plot’s side of the field',
    }),
    columns: [
      { name: 'y', kind: 'numeric', data: y },
      { name: 'a', kind: 'numeric', data: a.map((v, i) => (i % 11 === 0 ? null : v)) },
      { name: 'b', kind: 'numeric', data: b },
      { name: 'kind', kind: 'categorical', data: kind },
    ],
  };
}

// One train package (a package on neither split list) and two held-out packages of the committed list.
writeCorpus(corpus, [table('fieldtrials', 'plots', 1), table('lme4', 'yields', 2), table('plm', 'harvest', 3)]);

test("the corpus presets: compare 'corpus' runs Optuna's seeded samplers only; the presets' sizes", () => {
  assert.deepEqual(
    optunaArmsOf({ compare: 'corpus' } as never).map((a) => a.label),
    OPTUNA_ARMS.filter((a) => a.seeded).map((a) => a.label),
  );
  assert.deepEqual(optunaArmsOf({ compare: 'random' } as never), []);
  const full = corpusPreset('corpus');
  assert.equal(full.compare, 'corpus');
  assert.equal(full.referencePrior, FAMILIES_PRIOR, 'the reference row is the prior shipped before the corpus');
  assert.ok(full.families?.length && full.corpus?.on === 'held-out');
  const quick = corpusPreset('corpus-quick', 'validation');
  assert.equal(quick.prior, SHIPPED_PRIOR);
  assert.equal(quick.corpus?.on, 'validation');
  assert.deepEqual(quick.families, []);
});

test('resolveCorpus draws per package, the same tasks every time, a larger draw keeping the smaller one', async () => {
  const base = { trainTasks: [], heldOutTasks: [], iterations: 1, group: 2, seed: 1 };
  const one = await resolveCorpus({ ...base, corpus: { on: 'held-out', trainPerPackage: 1, perPackage: 1, dir: corpus } });
  assert.deepEqual(one.trainTasks.length, 1);
  assert.ok(one.trainTasks[0].startsWith('corpus-fieldtrials-plots-'));
  assert.deepEqual(
    one.heldOutTasks.map((t) => t.split('-')[1]),
    ['lme4', 'plm'],
  );
  const again = await resolveCorpus({ ...base, corpus: { on: 'held-out', trainPerPackage: 1, perPackage: 1, dir: corpus } });
  assert.deepEqual(again.heldOutTasks, one.heldOutTasks);
  const more = await resolveCorpus({ ...base, corpus: { on: 'held-out', trainPerPackage: 0, perPackage: 5, dir: corpus } });
  assert.deepEqual(more.trainTasks, []);
  for (const id of one.heldOutTasks) assert.ok(more.heldOutTasks.includes(id));
  await assert.rejects(
    resolveCorpus({ ...base, corpus: { on: 'validation', trainPerPackage: 0, perPackage: 1, dir: join(corpus, 'none') } }),
    /python\/fetch-corpus\.sh/,
  );
});

test('a transfer experiment on corpus tasks: meta-trained on the train package (from a prior, --init), compared per held-out package with the reference prior and the aims', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-transfer-corpus-run-'));
  dirs.push(dir);
  const ex = new LocalExecutor({ workers: 2 });
  try {
    const python = join(tmpdir(), 'no-such-python-for-optuna');
    const r = await runTransfer(
      dir,
      {
        trainTasks: [],
        heldOutTasks: [],
        iterations: 1,
        group: 2,
        seed: 3,
        compare: 'corpus',
        python,
        referencePrior: SHIPPED_PRIOR,
        init: SHIPPED_PRIOR,
        corpus: { on: 'held-out', trainPerPackage: 1, perPackage: 1, dir: corpus },
      },
      ex,
    );
    assert.ok(existsSync(join(dir, 'meta')), 'meta-trained on the train package');
    // init: meta-training started from the prior's weights and trained; its checkpoint stays near that prior, not near random weights.
    const meta = new Store(join(dir, 'meta'));
    const saved = meta.db.prepare('SELECT state FROM checkpoints ORDER BY rowid DESC LIMIT 1').get() as { state: string };
    meta.close();
    const after = (JSON.parse(saved.state) as { weights: number[][] }).weights;
    const start = ((await (await controllerFromPrior(readPrior(SHIPPED_PRIOR), 3)).state()) as { weights: number[][] }).weights;
    const fresh = ((await new Controller(readPrior(SHIPPED_PRIOR).state.options).state()) as { weights: number[][] }).weights;
    const distance = (a: number[][], b: number[][]): number => Math.hypot(...a.flatMap((w, i) => w.map((v, j) => v - b[i][j])));
    assert.ok(distance(after, start) > 0, 'it trained');
    assert.ok(distance(after, start) < distance(after, fresh) / 4, 'from the prior’s weights');
    assert.deepEqual(
      r.families.map((f) => f.task),
      ['corpus-lme4', 'corpus-plm'],
      'one family per package',
    );
    for (const row of r.rows) {
      for (const k of ['zeroShot', 'controllerBest4', 'randomBest16', 'priorZeroShot', 'baseline'] as const)
        assert.ok(Number.isFinite(row[k]), `${row.task} ${k}`);
      assert.ok(existsSync(join(dir, row.task, 'prior')), 'the reference prior ran');
    }
    for (const row of r.confirmed!.rows) assert.ok(Number.isFinite(row.priorZeroShot) && Number.isFinite(row.controllerBest4), 'both confirmed');
    assert.ok(r.notes.some((n) => n.startsWith('SKIPPED the Optuna rows (TPE and CMA-ES seeded)')));
    assert.deepEqual(
      r.aims?.single.map((a) => a.family),
      ['corpus-lme4', 'corpus-plm', 'all'],
    );
    assert.equal(r.aims?.single[0].zeroShotAboveBaseline, null, 'a package with one task is not judged');
    const markdown = readFileSync(r.files.markdown, 'utf8');
    assert.match(markdown, /## Aims on real domains, paired by task, confirmed scores/);
    assert.match(markdown, /reference prior zero-shot/);
  } finally {
    await ex.close();
  }
});
