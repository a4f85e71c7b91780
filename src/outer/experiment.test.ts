import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { familyOf, resolveFamilies, runTransfer, transferPreset } from './experiment.js';
import { iterationTasks } from './loop.js';
import { FAMILIES } from '../tasks/families/index.js';
import { LocalExecutor } from '../run/local.js';
import { skipWithoutPython } from '../testing/python.js';

const OPTUNA_KEYS = [
  'optunaCmaesBest16',
  'optunaCmaesBest4',
  'optunaCmaesSeededBest16',
  'optunaCmaesSeededBest4',
  'optunaTpeBest16',
  'optunaTpeBest4',
  'optunaTpeSeededBest16',
  'optunaTpeSeededBest4',
];
const OPTUNA_LABELS = ['TPE', 'CMA-ES', 'TPE seeded', 'CMA-ES seeded'].flatMap((s) => [`optuna ${s} best of 4`, `optuna ${s} best of 16`]);

test('the transfer experiment writes its tables and plots and reports every method', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-transfer-'));
  const ex = new LocalExecutor({ workers: 2 });
  try {
    // Without a Python for the Optuna rows: they are skipped, loudly, and the rest runs.
    const python = join(tmpdir(), 'no-such-python-for-optuna');
    const r = await runTransfer(
      dir,
      { trainTasks: ['penguins-species'], heldOutTasks: ['iris-species'], iterations: 1, group: 2, seed: 3, seeds: 2, python },
      ex,
    );
    assert.deepEqual(
      Object.keys(r.heldOut).sort(),
      [
        'baseline',
        'controllerAdaptBest16',
        'controllerBest16',
        'controllerBest4',
        'randomBest16',
        'randomBest4',
        'searchBest16',
        'searchBest4',
        'zeroShot',
        ...OPTUNA_KEYS,
      ].sort(),
    );
    for (const k of OPTUNA_KEYS) assert.equal(r.heldOut[k as keyof typeof r.heldOut], null, k);
    assert.equal(r.notes.length, 1);
    assert.match(r.notes[0], /^SKIPPED the Optuna rows .*no-such-python-for-optuna.*run python\/setup-venv\.sh/);
    assert.ok(readFileSync(r.files.markdown, 'utf8').includes(`**${r.notes[0]}**`));
    for (const v of Object.values(r.heldOut)) assert.ok(v === null || Number.isFinite(v));
    const row = r.rows[0];
    assert.ok(row.controllerBest16! >= row.controllerBest4! && row.controllerBest4! >= row.zeroShot!, 'best of more samples is never worse');
    assert.ok(row.randomBest16! >= row.randomBest4!);
    assert.ok(row.controllerAdaptBest16! >= row.zeroShot!, 'the adapting controller starts from the same mode');
    assert.ok(row.searchBest16! >= row.searchBest4!);
    assert.equal(r.curve.length, 1);
    // Two seeds, each in its own directory; the reported means are the means over the seeds.
    assert.deepEqual(
      r.perSeed.map((p) => p.seed),
      [3, 4],
    );
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

test('the presets draw every family: train families for meta-training, whole held-out families for the comparison', async () => {
  const { listTasks } = await import('../tasks/briefs.js');
  for (const name of ['quick', 'full'] as const) {
    const q = resolveFamilies(transferPreset(name));
    const split = new Map(listTasks().map((t) => [t.brief.id, t.brief.split]));
    for (const t of q.trainTasks) assert.equal(split.get(t), 'train', t);
    for (const t of q.heldOutTasks) assert.equal(split.get(t), 'held-out', t);
    const trainFamilies = new Set(q.trainTasks.map(familyOf));
    const heldFamilies = new Set(q.heldOutTasks.map(familyOf));
    for (const f of heldFamilies) assert.ok(!trainFamilies.has(f), `${name}: family ${f} is on both sides`);
    assert.deepEqual([...trainFamilies, ...heldFamilies].sort(), Object.keys(FAMILIES).sort(), `${name}: every family is used`);
    if (name === 'full') {
      assert.ok(q.trainTasks.length >= 200, `full: ${q.trainTasks.length} train tasks`);
      assert.ok(heldFamilies.size >= 3, `full: ${heldFamilies.size} held-out families`);
      const kinds = new Set(
        Object.values(FAMILIES)
          .filter((f) => f.split === 'held-out')
          .map((f) => f.kind),
      );
      assert.deepEqual([...kinds].sort(), ['control', 'supervised'], 'control and supervised families are held out');
    }
  }
});

test('meta-training over many tasks takes a few per iteration, each about equally often, and never twice in one iteration', () => {
  const tasks = Array.from({ length: 10 }, (_, i) => `t${i}`);
  assert.deepEqual(iterationTasks(tasks, 3, 1), tasks, 'no per-iteration count: every task');
  const seen = new Map<string, number>();
  for (let it = 0; it < 5; it++) {
    const got = iterationTasks(tasks, it, 7, 4);
    assert.deepEqual(got, iterationTasks(tasks, it, 7, 4), 'the same iteration always takes the same tasks');
    assert.equal(new Set(got).size, got.length);
    assert.ok(got.length >= 3 && got.length <= 4);
    for (const t of got) seen.set(t, (seen.get(t) ?? 0) + 1);
  }
  // 20 draws over two passes of 10: every task once per pass, less any repeat dropped at the pass boundary.
  assert.equal(seen.size, 10);
  for (const n of seen.values()) assert.ok(n >= 1 && n <= 2);
  assert.notDeepEqual(iterationTasks(tasks, 0, 7, 4), iterationTasks(tasks, 0, 8, 4), 'another seed, another order');
});

test('over families: meta-training never sees a held-out family, and the report has a row per held-out family and the verdict', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-transfer-fam-'));
  const ex = new LocalExecutor({ workers: 2 });
  try {
    const families = [
      { family: 'blobs', count: 3, seed: 2 },
      { family: 'rings', count: 1, seed: 2 },
    ];
    // The Optuna rows off (their own test is below): the families are this test's subject.
    const python = join(tmpdir(), 'no-such-python-for-optuna');
    const r = await runTransfer(dir, { trainTasks: [], heldOutTasks: [], families, tasksPerIteration: 2, iterations: 2, group: 2, seed: 5, python }, ex);
    assert.deepEqual(r.options.heldOutTasks, ['rings-fam-2-0']);
    assert.deepEqual(r.options.trainTasks, ['blobs-fam-2-0', 'blobs-fam-2-1', 'blobs-fam-2-2']);
    const { Store } = await import('../store/store.js');
    const store = new Store(join(dir, 'meta'));
    try {
      const tasks = new Set(store.jobs(store.getRun()!.id).map((j) => j.task));
      assert.ok(tasks.size >= 2 && [...tasks].every((t) => t.startsWith('blobs-fam-2-')), [...tasks].join(', '));
    } finally {
      store.close();
    }
    assert.deepEqual(
      r.families.map((f) => f.task),
      ['rings'],
    );
    assert.equal(r.families[0].zeroShot, r.rows[0].zeroShot);
    assert.equal(r.verdict.zeroShotBeatsRandom4EverySeed, r.heldOut.zeroShot! > r.heldOut.randomBest4!);
    const md = readFileSync(r.files.markdown, 'utf8');
    assert.match(md, /## Held-out families/);
    assert.match(md, /Meta-training: 3 blobs tasks; 2 iterations × 2 proposals per task \(2 tasks per iteration\)/);
    assert.match(md, /## Verdict/);
  } finally {
    await ex.close();
  }
});

test("the held-out comparison lists Optuna's TPE and CMA-ES, plain and seeded, best of 4 and 16", {
  skip: skipWithoutPython('the Optuna rows of the transfer experiment', ['optuna', 'cmaes']),
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-transfer-optuna-'));
  const ex = new LocalExecutor({ workers: 2 });
  try {
    const r = await runTransfer(dir, { trainTasks: ['penguins-species'], heldOutTasks: ['iris-species'], iterations: 1, group: 2, seed: 2 }, ex);
    assert.deepEqual(r.notes, []);
    const row = r.rows[0];
    for (const s of ['Tpe', 'Cmaes', 'TpeSeeded', 'CmaesSeeded']) {
      const b4 = row[`optuna${s}Best4` as keyof typeof row] as number;
      const b16 = row[`optuna${s}Best16` as keyof typeof row] as number;
      assert.ok(Number.isFinite(b4) && Number.isFinite(b16) && b16 >= b4, `${s}: ${b4}, ${b16}`);
    }
    // Each ran as four rounds of four, like the model-based search; a seeded study's first job is the baseline spec.
    const { Store } = await import('../store/store.js');
    for (const name of ['optuna-tpe', 'optuna-cmaes', 'optuna-tpe-seeded', 'optuna-cmaes-seeded']) {
      const store = new Store(join(dir, 'iris-species', name));
      try {
        const jobs = store.jobs(store.getRun()!.id, { kind: 'proposal' });
        assert.deepEqual(
          jobs.map((j) => j.iteration),
          [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3],
          name,
        );
        assert.ok(
          jobs.every((j) => j.status === 'succeeded'),
          `${name}: ${jobs.map((j) => j.error).join('; ')}`,
        );
        assert.equal((jobs[0].trace as { baseline?: boolean }).baseline === true, name.endsWith('-seeded'), name);
      } finally {
        store.close();
      }
    }
    const md = readFileSync(r.files.markdown, 'utf8');
    for (const label of OPTUNA_LABELS) assert.ok(md.includes(`| ${label} |`) || md.includes(`| ${label}`), label);
    const svg = readFileSync(r.files.comparisonSvg, 'utf8');
    for (const label of OPTUNA_LABELS) assert.ok(svg.includes(label), `the held-out plot shows ${label}`);
    assert.equal(JSON.parse(readFileSync(r.files.json, 'utf8')).heldOut.optunaTpeSeededBest16, r.heldOut.optunaTpeSeededBest16);
  } finally {
    await ex.close();
  }
});
