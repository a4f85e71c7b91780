import test from 'node:test';
import assert from 'node:assert/strict';
import { getPublicTask, listTasks } from '../../tasks/briefs.js';
import type { ControlTaskDef } from '../../tasks/control/define.js';
import { Rng } from '../../util/rng.js';
import { HEAD_NAMES, buildHeads, choicePoint, decode, describeSpace, headLayout, nearestChoice, pointChoice, searchParams } from './space.js';
import { CONTROL_HEADS, SUPERVISED_HEADS, at } from './space-heads.js';

test('every task’s heads have distinct output slots', () => {
  for (const { brief } of listTasks()) {
    const slots = headLayout(buildHeads(brief)).map((l) => l.slot);
    assert.equal(new Set(slots).size, slots.length, brief.id);
  }
});

test('a decision keeps its slot across briefs with different heads', () => {
  // two-moons has five sources and iris six: the heads after the sources shift position, not slot.
  const slotOf = (id: string, name: string): number => {
    const brief = listTasks().find((t) => t.brief.id === id)!.brief;
    const heads = buildHeads(brief);
    return headLayout(heads)[heads.findIndex((h) => h.name === name)].slot;
  };
  const pos = (id: string, name: string): number => buildHeads(listTasks().find((t) => t.brief.id === id)!.brief).findIndex((h) => h.name === name);
  assert.notEqual(pos('two-moons', 'optimizer'), pos('iris-species', 'optimizer'));
  assert.equal(slotOf('two-moons', 'optimizer'), slotOf('iris-species', 'optimizer'));
  // Control and supervised briefs do not share a slot for a same-named head.
  assert.notEqual(slotOf('cartpole-balance', 'hidden'), slotOf('iris-species', 'hidden'));
});

test('the algorithm head places each algorithm in its own option slot', () => {
  const pend = listTasks().find((t) => t.brief.id === 'pendulum-swingup')!.brief;
  const cart = listTasks().find((t) => t.brief.id === 'cartpole-balance')!.brief;
  const ppoSlot = (b: typeof pend): number => {
    const heads = buildHeads(b);
    const i = heads[0].options.indexOf('ppo');
    return headLayout(heads)[0].optionSlots[i];
  };
  assert.equal(ppoSlot(pend), ppoSlot(cart));
});

test("a user task's own source ids take the standard source slots its catalogue leaves free, in order", () => {
  const base = listTasks().find((t) => t.brief.id === 'iris-species')!.brief;
  const withSources = (ids: string[]) => ({
    ...base,
    id: 'own',
    supervised: { ...base.supervised!, sources: ids.map((id) => ({ id, description: id, examples: 10 })) },
  });
  const slotsOf = (ids: string[]): Record<string, number> => {
    const brief = withSources(ids);
    const heads = buildHeads(brief);
    const layout = headLayout(heads);
    return Object.fromEntries(heads.map((h, i) => [h.name, layout[i].slot]).filter(([n]) => (n as string).startsWith('source:')));
  };
  const std = slotsOf(['clean-small', 'noisy-large', 'shifted', 'imbalanced', 'duplicated', 'augmented']);
  assert.deepEqual(slotsOf(['main', 'crowd']), { 'source:main': std['source:clean-small'], 'source:crowd': std['source:noisy-large'] });
  // A source named like a standard one keeps that slot; the others take the free ones.
  assert.deepEqual(slotsOf(['main', 'noisy-large']), { 'source:main': std['source:clean-small'], 'source:noisy-large': std['source:noisy-large'] });
  assert.deepEqual(slotsOf(['noisy-large', 'main']), { 'source:noisy-large': std['source:noisy-large'], 'source:main': std['source:clean-small'] });
  assert.throws(() => slotsOf(['a', 'b', 'c', 'd', 'e', 'f', 'g']), /more than 6 sources/);
});

test("a generated control task states its nominal physics as the parameters' defaults, and the design space trains on them or around them", async () => {
  const { registerFamilyTasks } = await import('../../tasks/families/index.js');
  const [task] = registerFamilyTasks('cartpole', 1, 9);
  const b = getPublicTask(task.def.id).brief;
  const nominal = (task.def as ControlTaskDef).params.map((p) => p.default);
  assert.deepEqual(
    b.environment.params.map((p) => p.default),
    nominal,
    "the brief's defaults are the drawn physics, not the simulator's",
  );
  const heads = buildHeads(b);
  const at = heads.findIndex((h) => h.name === 'randomize');
  const choice = heads.map(() => 0);
  const exact = decode(b, heads, choice, 1).environment?.params as Record<string, number>;
  assert.deepEqual(Object.values(exact), nominal);
  choice[at] = 1;
  const band = decode(b, heads, choice, 1).environment?.params as Record<string, [number, number]>;
  for (const [i, [lo, hi]] of Object.values(band).entries()) assert.ok(lo < nominal[i]! && nominal[i]! < hi);
});

test("the optimisers' parameters come from the heads: numeric ranges (log when spaced by factors), categoricals, no one-option head", () => {
  const byName = (id: string) => new Map(searchParams(buildHeads(getPublicTask(id).brief)).map((p) => [p.name, p]));
  const cart = byName('cartpole-balance');
  assert.deepEqual(cart.get('ppo.learningRate'), { name: 'ppo.learningRate', kind: 'float', low: 1e-4, high: 3e-3, log: true });
  assert.deepEqual(cart.get('envSteps'), { name: 'envSteps', kind: 'int', low: 2500, high: 50_000, log: true });
  assert.deepEqual(cart.get('ppo.gamma'), { name: 'ppo.gamma', kind: 'float', low: 0.98, high: 0.99, log: false });
  assert.deepEqual(cart.get('ppo.entropyCoef'), { name: 'ppo.entropyCoef', kind: 'float', low: 0, high: 0.01, log: false });
  assert.deepEqual(cart.get('hidden'), { name: 'hidden', kind: 'categorical', choices: ['[]', '[16]', '[32,32]', '[64,64]'] });
  assert.equal(cart.get('demonstrations')?.kind ?? 'none', getPublicTask('cartpole-balance').brief.demonstrations.length ? 'categorical' : 'none');
  const iris = byName('iris-species');
  assert.ok(!iris.has('algorithm'), 'one option: no parameter');
  assert.deepEqual(iris.get('source:noisy-large'), { name: 'source:noisy-large', kind: 'float', low: 0, high: 1, log: false });
  assert.deepEqual(iris.get('optimizer'), { name: 'optimizer', kind: 'categorical', choices: ['sgd', 'adam', 'adamw'] });
});

test('a point maps to one option per head and back, and a spec of the space to its own choice', () => {
  const rng = new Rng(5);
  for (const { brief } of listTasks()) {
    const heads = buildHeads(brief);
    for (let k = 0; k < 20; k++) {
      const choice = heads.map((h) => rng.int(h.options.length));
      const multi = heads.map((h) => new Set(h.options.map((o) => JSON.stringify(o))).size > 1);
      assert.deepEqual(
        pointChoice(heads, choicePoint(heads, choice)).filter((_, i) => multi[i]),
        choice.filter((_, i) => multi[i]),
        brief.id,
      );
      const spec = decode(brief, heads, choice, 7);
      assert.deepEqual(decode(brief, heads, nearestChoice(brief, heads, spec), 7), spec, `${brief.id}: ${JSON.stringify(choice)}`);
    }
  }
  // A point between options takes the nearest (on a log scale for a learning rate); one outside the range is refused.
  const heads = buildHeads(getPublicTask('cartpole-balance').brief);
  const point = choicePoint(
    heads,
    heads.map(() => 0),
  );
  const lr = heads.findIndex((h) => h.name === 'ppo.learningRate');
  assert.equal(heads[lr].options[pointChoice(heads, { ...point, 'ppo.learningRate': 6e-4 })[lr]], 1e-3, 'log: 6e-4 is nearer 1e-3 than 3e-4');
  assert.throws(() => pointChoice(heads, { ...point, 'ppo.learningRate': 0.5 }), /outside/);
  assert.throws(() => pointChoice(heads, { ...point, hidden: '[7]' }), /none of its choices/);
  const { envSteps: _, ...missing } = point;
  assert.throws(() => pointChoice(heads, missing), /no value for "envSteps"/);
});

test("a task's baseline maps to the nearest choice the space can write", async () => {
  const { registerFamilyTasks } = await import('../../tasks/families/index.js');
  const [task] = registerFamilyTasks('acrobot', 1, 1);
  const { brief, baseline } = getPublicTask(task.def.id);
  const heads = buildHeads(brief);
  const spec = decode(brief, heads, nearestChoice(brief, heads, baseline), 1) as Record<string, any>;
  assert.equal(spec.algorithm.name, 'ppo');
  assert.deepEqual(spec.model.hidden, baseline.model.hidden);
  assert.deepEqual(spec.environment.wrappers, baseline.environment.wrappers);
  assert.deepEqual(Object.keys(spec.environment.params), Object.keys(baseline.environment.params ?? {}));
  assert.equal(spec.reward.expression, 'r');
  assert.equal(spec.algorithm.learningRate, (baseline.algorithm as { learningRate: number }).learningRate);
});

test('early stopping is a decision of the supervised space: a baseline without it maps to patience 0, a spec with it to its option', () => {
  const { brief, baseline } = getPublicTask('two-moons');
  const heads = buildHeads(brief);
  const es = heads.findIndex((h) => h.name === 'earlyStopping');
  assert.deepEqual(heads[es].options, [0, 10]);
  assert.equal(nearestChoice(brief, heads, baseline)[es], 0);
  const choice = nearestChoice(brief, heads, baseline);
  choice[es] = 1;
  const spec = decode(brief, heads, choice, 1) as { algorithm: { earlyStoppingPatience: number } };
  assert.equal(spec.algorithm.earlyStoppingPatience, 10);
  assert.equal(nearestChoice(brief, heads, spec)[es], 1);
  assert.equal(
    buildHeads(getPublicTask('cartpole-balance').brief).findIndex((h) => h.name === 'earlyStopping'),
    -1,
    'not a control decision',
  );
});

/** Every built-in task and a few of every family's. */
async function everyBrief(): Promise<{ brief: ReturnType<typeof getPublicTask>['brief']; baseline: unknown }[]> {
  const { FAMILIES, registerFamilyTasks } = await import('../../tasks/families/index.js');
  const ids = [...listTasks().map((t) => t.brief.id), ...Object.keys(FAMILIES).flatMap((f) => registerFamilyTasks(f, 1, 2).map((t) => t.def.id))];
  return ids.map((id) => getPublicTask(id));
}

test('the views derived from the declarations agree on every head: decode then nearest gives each option back, the path holds it', () => {
  // The built-in tasks: a generated task's cap may clip an env-steps option to another's value.
  for (const { brief, baseline } of listTasks().map((t) => getPublicTask(t.brief.id))) {
    const heads = buildHeads(brief);
    const base = nearestChoice(brief, heads, baseline);
    heads.forEach((h, i) => {
      h.options.forEach((_, o) => {
        const choice = [...base];
        if (h.algorithm) choice[0] = heads[0].options.indexOf(h.algorithm);
        choice[i] = o;
        const spec = decode(brief, heads, choice, 3);
        assert.notEqual(at(spec, ...h.declaration.path), undefined, `${brief.id} ${h.name}: nothing at ${h.declaration.path.join('.')}`);
        const back = nearestChoice(brief, heads, spec);
        // An option that writes nothing for this choice (a wrapper of another algorithm) reads back as the one that writes the same spec.
        const same = back[i] === o || assert.deepEqual(decode(brief, heads, back, 3), spec) === undefined;
        assert.ok(same, `${brief.id} ${h.name}[${o}]`);
      });
    });
  }
});

test('the description lists every head with its slot, path and parameter; the parameters cover every head of more than one option', async () => {
  const declared = new Set([...SUPERVISED_HEADS, ...CONTROL_HEADS].map((d) => d.slotName ?? d.name));
  for (const name of HEAD_NAMES) assert.ok(declared.has(name) || name.startsWith('source:'), name);
  for (const { brief, baseline } of await everyBrief()) {
    const heads = buildHeads(brief);
    const described = describeSpace(brief, baseline);
    assert.deepEqual(JSON.parse(JSON.stringify(described)), described, 'plain JSON');
    assert.deepEqual(
      described.heads.map((h) => h.name),
      heads.map((h) => h.name),
    );
    // A bounded head is published with its options as they land for the task (the budget's cap applied).
    const published = heads.map((h) => {
      const bound = h.declaration.bound;
      return bound ? { ...h, options: [...new Set(h.options.map((o) => bound(o, brief)))] } : h;
    });
    const params = searchParams(published);
    for (const [i, h] of published.entries()) {
      const d = described.heads[i];
      assert.equal(d.path, h.declaration.path.join('.'));
      assert.ok(HEAD_NAMES.includes(d.slot));
      assert.deepEqual(d.options, h.options);
      assert.equal(d.param !== null, new Set(h.options.map((o) => JSON.stringify(o))).size > 1, `${brief.id} ${h.name}`);
    }
    assert.deepEqual(
      described.heads.flatMap((h) => (h.param ? [h.param] : [])),
      params,
    );
    assert.deepEqual(
      pointChoice(heads, described.baseline!),
      nearestChoice(brief, heads, baseline).map((c, i) => (described.heads[i].param ? c : 0)),
    );
  }
});

test('every task file has a place in the output slots: its main file, up to five sources of its own and the catalogue', async () => {
  const { registerTaskDir } = await import('../../tasks/file/register.js');
  const { taskDir, classificationTask, writeTask } = await import('../../testing/task-files.js');
  const { copyFileSync, rmSync } = await import('node:fs');
  const { join } = await import('node:path');
  const dir = taskDir('rrl-slots-');
  try {
    for (let k = 0; k <= 5; k++) {
      const sources = Array.from({ length: k }, (_, i) => {
        copyFileSync(join(dir, 'data.csv'), join(dir, `extra${i}.csv`));
        return {
          id: i % 2 ? `own-${i}` : ['noisy-large', 'shifted', 'augmented'][i / 2],
          file: `extra${i}.csv`,
          description: `another file of the same columns (${i})`,
        };
      });
      const task = classificationTask(`slots-${k}`);
      writeTask(dir, `slots-${k}.json`, { ...task, data: { ...(task.data as object), sources } });
    }
    await registerTaskDir(dir);
    for (let k = 0; k <= 5; k++) {
      const { brief } = getPublicTask(`slots-${k}`);
      assert.ok(brief.supervised!.sources.length <= 6, `slots-${k}: ${brief.supervised!.sources.length} sources`);
      assert.doesNotThrow(() => headLayout(buildHeads(brief)), `slots-${k}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
