import test from 'node:test';
import assert from 'node:assert/strict';
import { listTasks } from '../../tasks/briefs.js';
import { buildHeads, headLayout } from './space.js';

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
