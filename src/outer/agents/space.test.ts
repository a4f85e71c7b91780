import test from 'node:test';
import assert from 'node:assert/strict';
import { getPublicTask, listTasks } from '../../tasks/briefs.js';
import type { ControlTaskDef } from '../../tasks/control/define.js';
import { buildHeads, decode, headLayout } from './space.js';

test('every task’s heads have distinct output slots', () => {
  for (const { brief } of listTasks()) {
    const slots = headLayout(brief, buildHeads(brief)).map((l) => l.slot);
    assert.equal(new Set(slots).size, slots.length, brief.id);
  }
});

test('a decision keeps its slot across briefs with different heads', () => {
  // two-moons has five sources and iris six: the heads after the sources shift position, not slot.
  const slotOf = (id: string, name: string): number => {
    const brief = listTasks().find((t) => t.brief.id === id)!.brief;
    const heads = buildHeads(brief);
    return headLayout(brief, heads)[heads.findIndex((h) => h.name === name)].slot;
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
    return headLayout(b, heads)[0].optionSlots[i];
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
    const layout = headLayout(brief, heads);
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
