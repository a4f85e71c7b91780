import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateSpec } from '../../inner/spec-check.js';
import { getPublicTask } from '../../tasks/briefs.js';
import { FAMILIES, registerFamilyTasks } from '../../tasks/families/index.js';
import { Rng } from '../../util/rng.js';
import { initTf } from '../../util/tf.js';
import { CHECKPOINT_VERSION, Controller, proposalFrom } from './controller.js';
import { type ControllerPrior, FAMILIES_PRIOR, PRIOR_FORMAT, SHIPPED_PRIOR, controllerFromPrior, readPrior, writePrior } from './prior.js';
import { activeHeads, buildHeads, headLayout } from './space.js';
import { trainAgent } from '../loop.js';
import { LocalExecutor } from '../../run/local.js';
import { Store } from '../../store/store.js';

for (const [name, path] of [
  ['shipped', SHIPPED_PRIOR],
  ['families', FAMILIES_PRIOR],
] as const)
  test(`the ${name} prior fits this code’s controller, and its zero-shot job is a valid spec on tasks of every family, train and held out`, async () => {
    const prior = readPrior(path);
    assert.equal(prior.format, PRIOR_FORMAT);
    assert.ok(prior.provenance.iterations >= 1 && prior.provenance.evalId, 'it says how it was made');
    const controller = await controllerFromPrior(prior, 1);
    for (const family of Object.keys(FAMILIES)) {
      for (const t of registerFamilyTasks(family, 2, 7)) {
        const brief = getPublicTask(t.def.id).brief;
        const { spec } = await controller.propose(brief, { rng: new Rng(1), iteration: 0, history: [], greedy: true });
        const checked = validateSpec(spec, brief);
        assert.ok(checked.ok, `${t.def.id}: ${checked.ok ? '' : JSON.stringify(checked.error)}`);
      }
    }
  });

test('a prior written and read back is the same policy (weights kept at float32 precision)', async () => {
  await initTf();
  const dir = mkdtempSync(join(tmpdir(), 'rrl-prior-'));
  try {
    const original = new Controller({ seed: 9, anchor: 0.7 });
    const state = (await original.state()) as { options: object; weights: number[][] };
    const path = join(dir, 'p.json');
    writePrior(path, {
      format: PRIOR_FORMAT,
      provenance: { seed: 9, iterations: 1, trainTasks: 1, evalId: 'x', createdAt: '2026-12-03T00:00:00Z', source: 'test' },
      state,
    });
    const loaded = await controllerFromPrior(readPrior(path), 123);
    for (const id of ['cartpole-balance', 'iris-species']) {
      const brief = getPublicTask(id).brief;
      assert.deepEqual(await loaded.probabilities(brief), await original.probabilities(brief), id);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('anything but a prior is refused in one line that says what it is', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-prior-bad-'));
  try {
    const file = (name: string, text: string): string => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    mkdirSync(join(dir, 'empty'));
    const cases: [string, RegExp][] = [
      [join(dir, 'missing.json'), /does not exist/],
      [file('text.json', 'not json'), /is not JSON/],
      [file('other.json', JSON.stringify({ format: 'something-else' })), /is not a controller prior \(format "something-else"/],
      [file('bare.json', JSON.stringify({ format: PRIOR_FORMAT, provenance: {}, state: { weights: 3 } })), /not a controller state/],
      [join(dir, 'empty'), /without prior.json, meta\/store.db or store.db/],
    ];
    for (const [path, message] of cases) {
      assert.throws(
        () => readPrior(path),
        (err: Error) => message.test(err.message) && !err.message.includes('\n'),
        path,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('rrl train from a prior: the controller’s first proposals are sampled from the prior’s policy', async () => {
  await initTf();
  const dir = mkdtempSync(join(tmpdir(), 'rrl-prior-train-'));
  const ex = new LocalExecutor({ workers: 2 });
  try {
    const source = new Controller({ seed: 9, anchor: 2 });
    const path = join(dir, 'p.json');
    writePrior(path, {
      format: PRIOR_FORMAT,
      provenance: { seed: 9, iterations: 1, trainTasks: 1, evalId: null, createdAt: '2026-12-03T00:00:00Z', source: 'test' },
      state: (await source.state()) as ControllerPrior['state'],
    });
    const brief = getPublicTask('iris-species').brief;
    const probs = await source.probabilities(brief);
    await trainAgent(join(dir, 'run'), { tasks: ['iris-species'], agent: 'controller', iterations: 1, group: 2, seed: 5, prior: path }, ex);
    const store = new Store(join(dir, 'run'));
    try {
      const proposals = store.jobs(store.getRun()!.id).filter((j) => j.kind === 'proposal');
      assert.equal(proposals.length, 2);
      for (const j of proposals) {
        const { choice, logProb } = j.trace as { choice: number[]; logProb: number };
        const active = activeHeads(buildHeads(brief), choice);
        const expected = choice.reduce((a, c, h) => a + (active[h] ? Math.log(probs[h][c]) : 0), 0);
        assert.ok(Math.abs(logProb - expected) < 1e-4, `log-probability ${logProb} under the run's policy, ${expected} under the prior's`);
      }
    } finally {
      store.close();
    }
    await assert.rejects(
      trainAgent(join(dir, 'other'), { tasks: ['iris-species'], agent: 'random', iterations: 1, group: 2, seed: 5, prior: path }, ex),
      /a prior sets the controller's weights; agent "random" takes none/,
    );
  } finally {
    await ex.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the families prior (no stated version) loads and acts as before checkpoints had versions; saved again it states the current one', async () => {
  const prior = readPrior(FAMILIES_PRIOR);
  assert.equal(prior.state.version, undefined);
  const controller = await controllerFromPrior(prior, 1);
  // Its probabilities (as a weighted sum) and greedy choices, recorded with the code before versions, which had 48 head slots.
  const RECORDED_SLOTS = 48;
  const recorded: [string, number, number[]][] = [
    ['cartpole-balance', 802.7107336400659, [1, 3, 0, 1, 0, 0, 1, 1, 0, 0, 4, 1, 3, 0, 2, 1, 0, 0, 1, 0, 1, 1, 1, 1, 2, 2, 0, 1]],
    ['two-moons', 407.7139743830594, [0, 2, 2, 2, 1, 0, 0, 1, 2, 1, 1, 2, 0, 2, 2, 0, 1, 0, 0, 2]],
    ['pendulum-swingup', 414.38733036421763, [0, 3, 1, 0, 0, 0, 1, 2, 1, 0, 4, 1, 3, 1, 1, 1, 1, 1, 1]],
  ];
  const resaved = new Controller(prior.state.options);
  const state = JSON.parse(JSON.stringify(await controller.state()));
  assert.equal(state.version, CHECKPOINT_VERSION);
  await resaved.load(state);
  for (const [id, sum, greedy] of recorded) {
    const brief = getPublicTask(id).brief;
    // A head declared after the recording takes a later slot: the recording covers the heads of its slots.
    const recordedHead = headLayout(buildHeads(brief)).map((l) => l.slot < RECORDED_SLOTS);
    for (const c of [controller, resaved]) {
      const all = await c.probabilities(brief);
      const p = all.filter((_, h) => recordedHead[h]);
      const weighted = p.reduce((a, r, h) => a + r.reduce((b, q, o) => b + q * (o + 1) * (h + 1), 0), 0);
      assert.ok(Math.abs(weighted - sum) < 1e-9, `${id}: ${weighted}`);
      const mode = proposalFrom(brief, all, { rng: new Rng(3), iteration: 0, history: [], greedy: true });
      assert.deepEqual(
        (mode.trace as { choice: number[] }).choice.filter((_, h) => recordedHead[h]),
        greedy,
        id,
      );
    }
  }
  const next = CHECKPOINT_VERSION + 1;
  await assert.rejects(resaved.load({ ...state, version: next }), new RegExp(`version ${next}: this code reads versions 1 to ${CHECKPOINT_VERSION}`));
});

test('a checkpoint from before the table features (version 3) reads a table with categorical columns and missing cells as it did', async () => {
  const prior = readPrior(FAMILIES_PRIOR);
  const old = await controllerFromPrior(prior, 1);
  const fresh = new Controller(prior.state.options);
  const rng = new Rng(5);
  for (const id of ['two-moons', 'cars-mpg']) {
    const brief = getPublicTask(id).brief;
    const sup = brief.supervised!;
    // The same brief with column facts: what a real table's brief carries.
    const columns = sup.features.map((f, j) => ({
      name: f.name,
      kind: j % 2 ? ('categorical' as const) : ('numeric' as const),
      ...(j % 2 ? { levels: 2 + rng.int(30) } : {}),
      missing: rng.uniform(0, 0.5),
    }));
    const withColumns = { ...brief, supervised: { ...sup, columns } };
    // The column-decision heads (slots 48–51) gain options with the facts; every other head's choices are compared.
    const others = headLayout(buildHeads(brief)).map((l) => l.slot < 48);
    const policy = async (c: Controller, b: typeof brief): Promise<number[][]> => (await c.probabilities(b)).filter((_, h) => others[h]);
    assert.deepEqual(await policy(old, withColumns), await policy(old, brief), `${id}: the old policy ignores the new features`);
    assert.notDeepEqual(await policy(fresh, withColumns), await policy(fresh, brief), `${id}: a new controller reads them`);
  }
});
