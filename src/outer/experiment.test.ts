import test from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pairedVerdict } from '../util/paired-difference.js';
import { type HeldOutRow, PRESET_DRAWS, familyOf, resolveFamilies, runTransfer, summarizeHeldOut, transferPreset } from './experiment.js';
import { iterationTasks } from './loop.js';
import { FAMILIES_PRIOR } from './agents/prior.js';
import { FAMILIES } from '../tasks/families/index.js';
import { LocalExecutor } from '../run/local.js';
import { skipWithoutPython } from '../testing/python.js';
import { Store } from '../store/store.js';
import { derivedEvalSecret, evalIdentity, evalSecret } from '../tasks/secret.js';

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
      { trainTasks: ['penguins-species'], heldOutTasks: ['iris-species'], iterations: 1, group: 2, seed: 3, secrets: 2, python, anchor: 0.5 },
      ex,
    );
    assert.deepEqual(
      Object.keys(r.heldOut).sort(),
      [
        'baseline',
        'controllerAdaptBest16',
        'controllerBest16',
        'controllerBest4',
        'priorZeroShot',
        'randomBest16',
        'randomBest4',
        'searchBest16',
        'searchBest4',
        'zeroShot',
        ...OPTUNA_KEYS,
      ].sort(),
    );
    for (const k of [...OPTUNA_KEYS, 'priorZeroShot']) assert.equal(r.heldOut[k as keyof typeof r.heldOut], null, k);
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
    // One seed under each of two secrets (the installation's first), each in its own directory, its runs scored under its secret.
    assert.deepEqual(
      r.perSeed.map((p) => [p.secret, p.seed]),
      [
        [0, 3],
        [1, 3],
      ],
    );
    assert.equal(r.secrets[0].evalId, evalIdentity());
    assert.notEqual(r.secrets[1].evalId, r.secrets[0].evalId);
    for (const p of r.perSeed) {
      const where = join(dir, `secret-${p.secret + 1}`);
      assert.ok(existsSync(join(where, 'meta')));
      assert.equal(p.evalId, r.secrets[p.secret].evalId);
      const store = new Store(join(where, 'iris-species', 'random'));
      assert.equal(store.getRun()!.evalIdentity, p.evalId, 'the held-out runs are scored under their secret');
      store.close();
      const meta = new Store(join(where, 'meta'));
      const saved = meta.db.prepare('SELECT state FROM checkpoints').all() as { state: string }[];
      meta.close();
      assert.ok(saved.length > 0 && saved.every((c) => JSON.parse(c.state).options.anchor === 0.5), 'the controller took the anchor given');
      const { readBack, ...written } = p; // whether this invocation read it back is not the repetition's
      assert.equal(readBack, false, 'a first run reads nothing back');
      const { key, ...recorded } = JSON.parse(readFileSync(join(where, 'repetition.json'), 'utf8'));
      assert.deepEqual(recorded, JSON.parse(JSON.stringify(written)), 'each repetition is written as it finishes');
      assert.match(key, /^[0-9a-f]{16}$/, 'with the key of its inputs');
    }
    assert.equal(evalSecret(), derivedEvalSecret(0), 'the installation secret is back afterwards');
    // The means and spreads are over the repetitions; each secret's figures are its own.
    const z = r.perSeed.map((p) => p.heldOut.zeroShot!);
    assert.ok(Math.abs(r.heldOut.zeroShot! - (z[0] + z[1]) / 2) < 1e-12);
    assert.ok(Math.abs(r.spread.zeroShot! - Math.abs(z[0] - z[1]) / Math.SQRT2) < 1e-12);
    for (const p of r.perSeed) {
      assert.equal(r.secrets[p.secret].heldOut.zeroShot, p.heldOut.zeroShot);
      assert.equal(r.secrets[p.secret].verdict.zeroShotBeatsRandom4EverySeed, p.heldOut.zeroShot! > p.heldOut.randomBest4!);
    }
    for (const f of Object.values(r.files)) assert.ok(existsSync(f), f);
    assert.match(readFileSync(r.files.curveSvg, 'utf8'), /^<svg/);
    assert.match(readFileSync(r.files.markdown, 'utf8'), /\| iris-species \|/);
    assert.match(readFileSync(r.files.markdown, 'utf8'), /## Held-out means per repetition/);
    assert.match(readFileSync(r.files.markdown, 'utf8'), new RegExp(`## Verdict per evaluation secret[^]*\\| 2 \\(${r.secrets[1].evalId}\\) \\|`));
    assert.match(readFileSync(r.files.markdown, 'utf8'), /\| iris-species \| secret 2 \|/, 'the family (a hand-written task is its own) in each repetition');
    assert.deepEqual(JSON.parse(readFileSync(r.files.json, 'utf8')).heldOut, r.heldOut);
    // The comparison on confirmed scores (the default): the rows the verdicts and aims compare confirmed, the other best-of-4 rows not.
    const confirmed = r.confirmed!;
    for (const k of ['searchBest4', ...OPTUNA_KEYS]) assert.equal(confirmed.heldOut[k as keyof typeof confirmed.heldOut], null, k);
    for (const k of ['zeroShot', 'controllerBest4', 'controllerBest16', 'controllerAdaptBest16', 'randomBest4', 'randomBest16', 'searchBest16'] as const) {
      assert.ok(Number.isFinite(confirmed.heldOut[k]), k);
    }
    assert.equal(confirmed.heldOut.baseline, r.heldOut.baseline, "the baseline's score is a mean over the harness's seeds already");
    for (const p of r.perSeed) {
      assert.ok(existsSync(join(dir, `secret-${p.secret + 1}`, 'iris-species', 'confirm-picks', 'store.db')));
      assert.equal(confirmed.secrets[p.secret].heldOut.zeroShot, p.confirmed!.heldOut.zeroShot);
    }
    assert.match(readFileSync(r.files.markdown, 'utf8'), /## On confirmed scores[^]*## Verdict, confirmed scores[^]*- under secret 2: zero-shot/);
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
    // Every held-out family draws its preset count: at least 6 in `full` (a family's mean and spread), 3 in `quick` (no single draw decides a family).
    for (const f of heldFamilies) {
      const n = q.heldOutTasks.filter((t) => familyOf(t) === f).length;
      assert.equal(n, PRESET_DRAWS[name].heldOut, `${name}: ${f} has ${n} held-out tasks`);
      assert.ok(n >= (name === 'full' ? 6 : 3), `${name}: ${f} has ${n} held-out tasks`);
    }
    // `full` compares every method; `quick` the frozen controller with random search, and every update of its meta-training spans as many tasks as the full one's.
    assert.equal(q.compare ?? 'all', name === 'full' ? 'all' : 'random');
    assert.equal(q.tasksPerIteration, 12);
    // `quick` starts from the families prior, the full preset's (no meta-training), `full` meta-trains its own.
    assert.equal(q.prior ?? null, name === 'quick' ? FAMILIES_PRIOR : null);
    if (name === 'full') {
      assert.ok(q.trainTasks.length >= 200, `full: ${q.trainTasks.length} train tasks`);
      assert.ok(heldFamilies.size >= 5, `full: ${heldFamilies.size} held-out families`);
      const kinds = new Set(
        Object.values(FAMILIES)
          .filter((f) => f.split === 'held-out')
          .map((f) => f.kind),
      );
      assert.deepEqual([...kinds].sort(), ['control', 'supervised'], 'control and supervised families are held out');
    }
  }
});

test('per held-out family: the mean over its tasks and seeds, its spread over tasks and over seeds, its comparisons, and in how many families each holds', () => {
  const row = (task: string, v: Partial<HeldOutRow>): HeldOutRow => ({
    task,
    zeroShot: 0.5,
    controllerBest4: 0.5,
    controllerBest16: 0.5,
    controllerAdaptBest16: 0.5,
    priorZeroShot: 0.5,
    randomBest4: 0.5,
    randomBest16: 0.5,
    searchBest4: 0.5,
    searchBest16: 0.5,
    optunaTpeBest4: null,
    optunaTpeBest16: null,
    optunaCmaesBest4: null,
    optunaCmaesBest16: null,
    optunaTpeSeededBest4: null,
    optunaTpeSeededBest16: null,
    optunaCmaesSeededBest4: null,
    optunaCmaesSeededBest16: null,
    baseline: 0.2,
    ...v,
  });
  const tasks = ['rings-fam-1-0', 'rings-fam-1-1', 'counts-fam-1-0', 'my-own-task'];
  // rings: zero-shot 0.6 and 0.8 in seed 1, 0.7 and 0.9 in seed 2, against random best of 16 0.7 and search best of 16 0.9.
  // counts: zero-shot level with both searches' best of 16 (0.5). my-own-task (hand-written, its own family): below random best of 4.
  const seed = (z: number[], r4: number): HeldOutRow[] => [
    row(tasks[0], { zeroShot: z[0], randomBest4: r4, randomBest16: 0.7, searchBest16: 0.9, controllerAdaptBest16: 0.95 }),
    row(tasks[1], { zeroShot: z[1], randomBest4: r4, randomBest16: 0.7, searchBest16: 0.9, controllerAdaptBest16: 0.95 }),
    row(tasks[2], { zeroShot: 0.5, randomBest4: 0.4 }),
    row(tasks[3], { zeroShot: 0.1, randomBest4: 0.3, randomBest16: null }),
  ];
  const means = (rows: HeldOutRow[]) => ({ ...rows[0], zeroShot: rows.reduce((a, r) => a + r.zeroShot!, 0) / rows.length });
  const perSeed = [seed([0.6, 0.8], 0.5), seed([0.7, 0.9], 0.75)].map((rows) => ({ rows, heldOut: means(rows) }));
  const s = summarizeHeldOut(tasks, perSeed);
  assert.deepEqual(
    s.families.map((f) => [f.task, f.tasks]),
    [
      ['rings', 2],
      ['counts', 1],
      ['my-own-task', 1],
    ],
  );
  const [rings, counts, own] = s.families;
  const close = (a: number | null, b: number, what: string) => assert.ok(a !== null && Math.abs(a - b) < 1e-12, `${what}: ${a} vs ${b}`);
  close(rings.zeroShot, 0.75, 'rings: the mean over its tasks and seeds');
  close(rings.taskSpread.zeroShot, Math.SQRT2 * 0.1, 'rings: over tasks (0.65 and 0.85)');
  close(rings.seedSpread.zeroShot, Math.SQRT1_2 * 0.1, 'rings: over seeds (0.7 and 0.8)');
  assert.deepEqual(
    rings.perSeed.map((m) => m.zeroShot),
    [0.7, 0.8],
  );
  assert.equal(counts.taskSpread.zeroShot, 0, 'one task: no spread over tasks');
  assert.equal(own.randomBest16, null, 'no value, no mean');
  assert.equal(own.taskSpread.randomBest16, null);
  // rings: above random best of 4 in both seeds (0.7 vs 0.5, 0.8 vs 0.75), level with random best of 16, below search's.
  assert.deepEqual(rings.verdict, {
    zeroShotBeatsRandom4EverySeed: true,
    adaptBest16AtLeastSearchBest16: true,
    zeroShotAtLeastRandomBest16: true,
    zeroShotAtLeastSearchBest16: false,
    zeroShotAtLeastBothBest16: false,
    zeroShotAtLeastEveryBest16: false,
  });
  assert.equal(counts.verdict.zeroShotAtLeastBothBest16, true, 'level counts');
  assert.equal(counts.verdict.zeroShotAtLeastEveryBest16, true, 'an Optuna row that did not run does not count against it');
  assert.deepEqual(own.verdict, {
    zeroShotBeatsRandom4EverySeed: false,
    adaptBest16AtLeastSearchBest16: true,
    zeroShotAtLeastRandomBest16: null, // no random best of 16 to be level with: not compared
    zeroShotAtLeastSearchBest16: false,
    zeroShotAtLeastBothBest16: false,
    zeroShotAtLeastEveryBest16: false,
  });
  assert.deepEqual(s.verdict.families, {
    heldOutFamilies: 3,
    zeroShotBeatsRandom4EverySeed: 2,
    adaptBest16AtLeastSearchBest16: 3,
    zeroShotAtLeastRandomBest16: 2,
    zeroShotAtLeastSearchBest16: 1,
    zeroShotAtLeastBothBest16: 1,
    zeroShotAtLeastEveryBest16: 1,
  });
  // The comparisons on all tasks use the means over all of them, as before.
  close(s.heldOut.zeroShot, (0.5 + 0.55) / 2, 'the mean over seeds of the per-seed means');
  assert.equal(s.verdict.zeroShotAtLeastBothBest16, false);
  // An Optuna row's best of 16 above the zero-shot job takes the every-search verdict away, and only that one.
  const optuna = summarizeHeldOut(
    [tasks[2]],
    [0.5, 0.5].map(() => ({ rows: [row(tasks[2], { zeroShot: 0.5, randomBest4: 0.4, optunaCmaesSeededBest16: 0.6 })], heldOut: row(tasks[2], {}) })),
  );
  assert.equal(optuna.families[0].verdict.zeroShotAtLeastBothBest16, true);
  assert.equal(optuna.families[0].verdict.zeroShotAtLeastEveryBest16, false);
  // Without the learning searches (compare: random) their comparisons are not made (null) and hold in no family; the others stand.
  const randomOnly = summarizeHeldOut(
    [tasks[2]],
    [1].map(() => {
      const r = row(tasks[2], { zeroShot: 0.6, randomBest4: 0.4, randomBest16: 0.55, searchBest4: null, searchBest16: null, controllerAdaptBest16: null });
      return { rows: [r], heldOut: r };
    }),
  );
  const notRun = {
    zeroShotBeatsRandom4EverySeed: true,
    adaptBest16AtLeastSearchBest16: null,
    zeroShotAtLeastRandomBest16: true,
    zeroShotAtLeastSearchBest16: null,
    zeroShotAtLeastBothBest16: null,
    zeroShotAtLeastEveryBest16: null, // random search alone is not every search
  };
  assert.deepEqual(randomOnly.families[0].verdict, notRun);
  const { families: counted, ...overall } = randomOnly.verdict;
  assert.deepEqual(overall, notRun);
  assert.equal(counted.zeroShotAtLeastSearchBest16, 0);
  assert.equal(counted.zeroShotAtLeastEveryBest16, 0);
  assert.equal(counted.zeroShotAtLeastRandomBest16, 1);

  // Paired by task: rings' two tasks differ from search's best of 16 by −0.25 and −0.05 (task means over seeds),
  // a mean of −0.15 whose 90% interval (t(0.95, 1) = tan(0.45π), the Cauchy's quantile; sd/√2 = 0.1) reaches above 0: level, not below.
  const ringsPaired = s.paired.families[0];
  close(ringsPaired.vs.searchBest16?.mean ?? null, -0.15, 'rings vs search best of 16');
  close(ringsPaired.vs.searchBest16?.hi ?? null, -0.15 + Math.tan(0.45 * Math.PI) * 0.1, 'its upper bound');
  assert.equal(ringsPaired.notBelowEveryBest16, true);
  assert.equal(s.paired.families[1].notBelowEveryBest16, null, 'one task: no interval');
  assert.equal(s.paired.all.tasks, 4);
  // Six tasks whose zero-shot job trails one Optuna row by 0.1 ± 0.01: below, however level it is with the others.
  const six = Array.from({ length: 6 }, (_, i) => `rings-fam-1-${i}`);
  const trailing = summarizeHeldOut(six, [
    { rows: six.map((t, i) => row(t, { zeroShot: 0.5 + 0.01 * (i % 2), optunaTpeSeededBest16: 0.6 })), heldOut: row('x', {}) },
  ]);
  assert.notEqual(pairedVerdict(trailing.paired.families[0].vs.searchBest16 ?? null), 'below');
  assert.equal(pairedVerdict(trailing.paired.families[0].vs.optunaTpeSeededBest16 ?? null), 'below');
  assert.equal(trailing.paired.families[0].notBelowEveryBest16, false);
  assert.equal(trailing.paired.notBelowEveryBest16, 0);
  // Without the model-based search the paired comparison with every best of 16 is not made.
  assert.equal(randomOnly.paired.all.notBelowEveryBest16, null);
  assert.equal(randomOnly.paired.all.vs.searchBest16, null);
});

test("compare 'random': the controller's rows, random search's and the baseline run, the learning searches do not, and their comparisons read 'not run'", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-transfer-random-'));
  const ex = new LocalExecutor({ workers: 2 });
  try {
    const python = join(tmpdir(), 'no-such-python-for-optuna');
    const r = await runTransfer(
      dir,
      { trainTasks: ['penguins-species'], heldOutTasks: ['iris-species'], iterations: 1, group: 2, seed: 4, compare: 'random', python },
      ex,
    );
    for (const k of ['controllerAdaptBest16', 'searchBest4', 'searchBest16', ...OPTUNA_KEYS]) assert.equal(r.heldOut[k as keyof typeof r.heldOut], null, k);
    for (const k of ['zeroShot', 'controllerBest4', 'controllerBest16', 'randomBest4', 'randomBest16', 'baseline'] as const) {
      assert.ok(Number.isFinite(r.heldOut[k]), k);
    }
    assert.deepEqual(readdirSync(join(dir, 'iris-species')).sort(), ['confirm-picks', 'controller', 'random'], 'no run of a method left out');
    assert.equal(r.verdict.zeroShotAtLeastSearchBest16, null);
    assert.equal(r.verdict.zeroShotAtLeastEveryBest16, null, 'random search alone is not every search');
    assert.equal(r.verdict.zeroShotBeatsRandom4EverySeed, r.heldOut.zeroShot! > r.heldOut.randomBest4!);
    assert.ok(!r.notes.some((n) => n.startsWith('SKIPPED')), 'no Optuna rows were asked for, so none is missing');
    const markdown = readFileSync(r.files.markdown, 'utf8');
    assert.match(markdown, /Compared with random search only/);
    assert.match(markdown, /level with model-based search's best of 16: \*\*not run\*\*/);

    // The repetition keeps its meta-trained weights; a run from them trains nothing on the train tasks and writes the same zero-shot job.
    assert.ok(existsSync(join(dir, 'prior.json')), 'the meta-trained prior is saved');
    const again = join(dir, 'from-prior');
    const p = await runTransfer(
      again,
      { trainTasks: [], heldOutTasks: ['iris-species'], iterations: 1, group: 2, seed: 4, compare: 'random', python, prior: dir },
      ex,
    );
    assert.ok(!existsSync(join(again, 'meta')) && !existsSync(join(again, 'prior.json')), 'no meta-training, no new prior');
    assert.deepEqual(p.curve, []);
    const first = (d: string): unknown => {
      const store = new Store(join(d, 'iris-species', 'controller'));
      try {
        const run = store.getRun()!;
        return store.jobs(run.id).find((j) => j.kind === 'proposal')!.spec;
      } finally {
        store.close();
      }
    };
    assert.deepEqual(first(again), first(dir), "the prior's zero-shot job is the meta-trained controller's");
    assert.equal(p.heldOut.zeroShot, r.heldOut.zeroShot);
    assert.match(readFileSync(p.files.markdown, 'utf8'), /Meta-training: none in this run; the controller starts from the prior/);
    assert.match(readFileSync(p.files.curveSvg, 'utf8'), /No meta-training in this run/);

    // Its repetition.json alone (as committed from another session) rebuilds the report: the same
    // figures, nothing trained, and the time the repetition took when it ran.
    assert.equal(p.perSeed[0].readBack, false);
    const summaryOnly = join(dir, 'summary-only');
    mkdirSync(summaryOnly);
    copyFileSync(join(again, 'repetition.json'), join(summaryOnly, 'repetition.json'));
    const back = await runTransfer(
      summaryOnly,
      { trainTasks: [], heldOutTasks: ['iris-species'], iterations: 1, group: 2, seed: 4, compare: 'random', python, prior: dir },
      ex,
    );
    assert.deepEqual(back.heldOut, p.heldOut);
    assert.deepEqual(back.confirmed, p.confirmed);
    assert.ok(!existsSync(join(summaryOnly, 'iris-species')), 'no job ran');
    assert.equal(back.perSeed[0].readBack, true);
    const took = back.perSeed[0].wallSeconds;
    assert.equal(took, p.perSeed[0].wallSeconds, 'the time recorded when it ran');
    assert.match(
      readFileSync(back.files.markdown, 'utf8'),
      new RegExp(`1 of 1 repetitions had finished before and were read back from their repetition.json: they took ${(took / 60).toFixed(1)} min in all`),
    );
  } finally {
    await ex.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a prior that is missing or does not fit the controller stops the experiment before anything runs, in one line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-transfer-prior-'));
  const ex = new LocalExecutor({ workers: 1 });
  try {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ format: 'rrl-controller-prior/1', provenance: {}, state: { options: { hidden: 8 }, weights: [[1, 2]] } }));
    for (const [prior, message] of [
      [join(dir, 'nowhere.json'), /does not exist/],
      [bad, /wrong shape/],
    ] as const) {
      const out = join(dir, 'run');
      await assert.rejects(runTransfer(out, { trainTasks: [], heldOutTasks: ['iris-species'], iterations: 1, group: 2, seed: 1, prior }, ex), (err: Error) => {
        assert.match(err.message, message);
        assert.ok(!err.message.includes('\n'), err.message);
        return true;
      });
      assert.ok(!existsSync(out), 'nothing was written');
    }
  } finally {
    await ex.close();
    rmSync(dir, { recursive: true, force: true });
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
    const r = await runTransfer(
      dir,
      { trainTasks: [], heldOutTasks: [], families, tasksPerIteration: 2, iterations: 2, group: 2, seed: 5, python, confirmPicks: false },
      ex,
    );
    assert.equal(r.confirmed, null, 'single scores only');
    assert.doesNotMatch(readFileSync(r.files.markdown, 'utf8'), /On confirmed scores/);
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
    assert.equal(r.families[0].tasks, 1);
    assert.equal(r.verdict.families.heldOutFamilies, 1);
    assert.equal(r.verdict.families.zeroShotAtLeastBothBest16, r.verdict.zeroShotAtLeastBothBest16 ? 1 : 0, 'one family: the same comparison');
    const md = readFileSync(r.files.markdown, 'utf8');
    assert.match(md, /## Held-out families/);
    assert.match(md, /## Verdict per held-out family/);
    assert.match(md, /\| rings \| (yes|no) \| (yes|no) \| (yes|no) \| (yes|no) \| (yes|no) \|/);
    assert.match(md, /in \*\*[01] of 1\*\* held-out families/);
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
          jobs.map((j) => j.round),
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
    // Their best of 16 is confirmed with the others' (their best of 4 is not).
    for (const s of ['Tpe', 'Cmaes', 'TpeSeeded', 'CmaesSeeded']) {
      assert.ok(Number.isFinite(r.confirmed!.heldOut[`optuna${s}Best16` as keyof Omit<HeldOutRow, 'task'>]), s);
      assert.equal(r.confirmed!.heldOut[`optuna${s}Best4` as keyof Omit<HeldOutRow, 'task'>], null, s);
    }
  } finally {
    await ex.close();
  }
});
