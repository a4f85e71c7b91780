import test from 'node:test';
import assert from 'node:assert/strict';
import { Controller, type ControllerTrace } from './controller.js';
import { buildHeads } from './space.js';
import { getPublicTask } from '../../tasks/briefs.js';
import { validateSpec } from '../../inner/spec-check.js';
import { initTf } from '../../util/tf.js';
import { Rng } from '../../util/rng.js';

const { brief } = getPublicTask('cartpole-balance');

test('every proposal is a valid spec and its trace holds the log-probability of its choices', async () => {
  await initTf();
  const c = new Controller({ seed: 3 });
  const probs = await c.probabilities(brief);
  const rng = new Rng(9);
  for (let i = 0; i < 20; i++) {
    const p = await c.propose(brief, { rng, iteration: 0, history: [] });
    assert.ok(validateSpec(p.spec, brief).ok, JSON.stringify(p.spec));
    const t = p.trace as ControllerTrace;
    assert.ok(t.logProb < 0);
    // The algorithm head always counts; its probability is part of the total.
    assert.ok(t.logProb <= Math.log(probs[0][t.choice[0]]) + 1e-9);
  }
});

test('a group-relative update raises the probability of the rewarded choice', async () => {
  await initTf();
  const c = new Controller({ seed: 4 });
  const algoHead = buildHeads(brief).findIndex((h) => h.name === 'algorithm');
  const arsIndex = (buildHeads(brief)[algoHead].options as string[]).indexOf('ars');
  const before = (await c.probabilities(brief))[algoHead][arsIndex];
  const rng = new Rng(5);
  for (let round = 0; round < 5; round++) {
    const items = [];
    for (let g = 0; g < 8; g++) {
      const p = await c.propose(brief, { rng, iteration: round, history: [] });
      const t = p.trace as ControllerTrace;
      items.push({ trace: t, reward: t.choice[algoHead] === arsIndex ? 1 : 0 });
    }
    await c.update([{ brief, items }]);
  }
  const after = (await c.probabilities(brief))[algoHead][arsIndex];
  assert.ok(after > before + 0.1, `P(ars) went from ${before} to ${after}`);
});

test('a checkpoint round-trips: same probabilities and the same next update', async () => {
  await initTf();
  const a = new Controller({ seed: 6 });
  const rng = new Rng(1);
  const p = await a.propose(brief, { rng, iteration: 0, history: [] });
  const q = await a.propose(brief, { rng, iteration: 0, history: [] });
  await a.update([
    {
      brief,
      items: [
        { trace: p.trace, reward: 1 },
        { trace: q.trace, reward: 0 },
      ],
    },
  ]);
  const saved = JSON.parse(JSON.stringify(await a.state()));
  const b = new Controller({ seed: 99 });
  await b.load(saved);
  assert.deepEqual(await b.probabilities(brief), await a.probabilities(brief));
  const group = [
    {
      brief,
      items: [
        { trace: q.trace, reward: 1 },
        { trace: p.trace, reward: 0 },
      ],
    },
  ];
  await a.update(group);
  await b.update(group);
  assert.deepEqual(await b.probabilities(brief), await a.probabilities(brief));
});

test('the design space decodes into valid specs for every task', async () => {
  await initTf();
  const { listTasks } = await import('../../tasks/briefs.js');
  const c = new Controller({ seed: 8 });
  const rng = new Rng(2);
  for (const { brief: b } of listTasks()) {
    let valid = 0;
    for (let i = 0; i < 12; i++) {
      const p = await c.propose(b, { rng, iteration: 0, history: [] });
      const r = validateSpec(p.spec, b);
      if (r.ok) valid++;
      // The only invalid proposal the space allows: a supervised mixture with every weight 0.
      else assert.match(r.error.message, /dataset\.sources/, `${b.id}: ${r.error.message}`);
    }
    assert.ok(valid >= 6, `${b.id}: ${valid} of 12 valid`);
  }
});

test("the trace's log-probability is the policy's log-probability of the sampled spec", async () => {
  await initTf();
  const c = new Controller({ seed: 12 });
  const heads = buildHeads(brief);
  const probs = await c.probabilities(brief);
  const rng = new Rng(4);
  const counts = new Array<number>(heads[0].options.length).fill(0);
  const { activeHeads } = await import('./space.js');
  for (let i = 0; i < 400; i++) {
    const p = await c.propose(brief, { rng, iteration: 0, history: [] });
    const t = p.trace as ControllerTrace;
    const active = activeHeads(heads, t.choice);
    const expected = t.choice.reduce((a, ch, h) => a + (active[h] ? Math.log(probs[h][ch]) : 0), 0);
    assert.ok(Math.abs(t.logProb - expected) < 1e-9);
    counts[t.choice[0]]++;
  }
  // Sampling follows the probabilities (loose: 400 draws).
  counts.forEach((n, k) => assert.ok(Math.abs(n / 400 - probs[0][k]) < 0.1, `option ${k}: ${n / 400} vs ${probs[0][k]}`));
});

test('brief features are finite for every task, and an update on every task keeps the weights finite', async () => {
  await initTf();
  const { listTasks } = await import('../../tasks/briefs.js');
  const { briefFeatures } = await import('./features.js');
  const c = new Controller({ seed: 21 });
  const rng = new Rng(5);
  const groups = [];
  for (const { brief: b } of listTasks()) {
    assert.ok(Array.from(briefFeatures(b)).every(Number.isFinite), `${b.id} features`);
    const items = [];
    for (let i = 0; i < 3; i++) items.push({ trace: (await c.propose(b, { rng, iteration: 0, history: [] })).trace, reward: i });
    groups.push({ brief: b, items });
  }
  const stats = await c.update(groups);
  for (const v of Object.values(stats)) assert.ok(Number.isFinite(v), JSON.stringify(stats));
  for (const { brief: b } of listTasks()) for (const p of await c.probabilities(b)) assert.ok(p.every(Number.isFinite));
});

test('a greedy proposal is the mode of the policy, whatever the random stream', async () => {
  await initTf();
  const c = new Controller({ seed: 30 });
  const probs = await c.probabilities(brief);
  const a = await c.propose(brief, { rng: new Rng(1), iteration: 0, history: [], greedy: true });
  const b = await c.propose(brief, { rng: new Rng(2), iteration: 0, history: [], greedy: true });
  const choice = (a.trace as ControllerTrace).choice;
  assert.deepEqual(
    choice,
    probs.map((p) => p.indexOf(Math.max(...p))),
  );
  assert.deepEqual((b.trace as ControllerTrace).choice, choice);
});

test('anchored on the baseline: with a strong anchor the mode is the baseline spec’s nearest choice on every task and family draw', async () => {
  await initTf();
  const { listTasks } = await import('../../tasks/briefs.js');
  const { FAMILIES, registerFamilyTasks } = await import('../../tasks/families/index.js');
  for (const family of Object.keys(FAMILIES)) registerFamilyTasks(family, 2, 11);
  const { baselineChoice } = await import('./controller.js');
  const { activeHeads } = await import('./space.js');
  for (const seed of [1, 2]) {
    const strong = new Controller({ seed, anchor: 30 });
    const free = new Controller({ seed, anchor: 0 });
    for (const { brief: b } of listTasks()) {
      const heads = buildHeads(b);
      const base = baselineChoice(b, heads)!;
      assert.equal(base.length, heads.length, b.id);
      const greedy = await strong.propose(b, { rng: new Rng(1), iteration: 0, history: [], greedy: true });
      const mode = greedy.trace as ControllerTrace;
      assert.deepEqual(mode.choice, base, `${b.id}: the mode is the baseline's choice`);
      // Written relative to the baseline: the baseline's choice is the baseline spec itself, with the proposal's seed.
      const { seed: _, ...spec } = greedy.spec as Record<string, unknown>;
      const { seed: __, ...baseline } = getPublicTask(b.id).baseline as Record<string, unknown>;
      assert.deepEqual(spec, baseline, `${b.id}: the baseline's choice writes the baseline spec`);
      // The anchor only adds to the baseline's options: each of them is at least as likely as without it.
      const [pa, pf] = [await strong.probabilities(b), await free.probabilities(b)];
      const active = activeHeads(heads, base);
      base.forEach((o, h) => {
        if (active[h] && heads[h].options.length > 1) assert.ok(pa[h][o] >= pf[h][o], `${b.id} ${heads[h].name}`);
      });
    }
  }
});

test('the anchor is learned: rewarding a departure from the baseline lowers the lean on that head', async () => {
  await initTf();
  const c = new Controller({ seed: 41, anchor: 1 });
  const heads = buildHeads(brief);
  const { baselineChoice } = await import('./controller.js');
  const base = baselineChoice(brief, heads)!;
  const h = heads.findIndex((x) => x.name === 'activation');
  const before = (await c.probabilities(brief))[h][base[h]];
  const rng = new Rng(8);
  for (let round = 0; round < 5; round++) {
    const items = [];
    for (let g = 0; g < 8; g++) {
      const t = (await c.propose(brief, { rng, iteration: round, history: [] })).trace as ControllerTrace;
      items.push({ trace: t, reward: t.choice[h] === base[h] ? 0 : 1 });
    }
    await c.update([{ brief, items }]);
  }
  const after = (await c.probabilities(brief))[h][base[h]];
  assert.ok(after < before - 0.1, `P(baseline's activation) went from ${before} to ${after}`);
});

test('a checkpoint saved before the anchor loads as the policy it saved (anchor off); a brief of no known task has no anchor', async () => {
  await initTf();
  const old = new Controller({ seed: 5, anchor: 0 });
  const saved = (await old.state()) as { weights: number[][] };
  const b = new Controller({ seed: 77, anchor: 2 });
  await b.load({ weights: saved.weights.slice(0, 4) });
  assert.deepEqual(await b.probabilities(brief), await old.probabilities(brief));
  await assert.rejects(b.load({ weights: saved.weights.slice(0, 3) }), /wrong shape/);
  const { baselineChoice } = await import('./controller.js');
  assert.equal(baselineChoice({ ...brief, id: 'no-such-task' }), null);
  const unknown = { ...brief, id: 'no-such-task' };
  assert.deepEqual(await new Controller({ seed: 5, anchor: 30 }).probabilities(unknown), await old.probabilities(unknown));
});

test('a checkpoint saved before the last heads of HEAD_NAMES loads: the heads it had keep its policy, a new head starts at the anchor alone', async () => {
  await initTf();
  const { HEAD_NAMES } = await import('./space.js');
  const { padHeadSlots } = await import('./controller.js');
  const { listTasks } = await import('../../tasks/briefs.js');
  // The head in the last slot, whichever was declared last, on a task that has it.
  const last = HEAD_NAMES.at(-1);
  const sup = listTasks()
    .map((t) => t.brief)
    .find((b) => buildHeads(b).some((h) => h.name === last));
  assert.ok(sup, `a built-in task has the head ${last}`);
  const heads = buildHeads(sup);
  const es = heads.findIndex((h) => h.name === last);
  const now = new Controller({ seed: 6, anchor: 1.5 });
  const { weights } = (await now.state()) as { weights: number[][] };
  // The same weights as a controller without the last slot would have saved them (rows of w2 and wa lose their last columns).
  const H = HEAD_NAMES.length;
  const O = weights[3].length / H;
  const hidden = weights[1].length;
  const drop = (rows: number[], width: number, cut: number): number[] =>
    Array.from({ length: rows.length / width }, (_, r) => rows.slice(r * width, (r + 1) * width - cut)).flat();
  const older = [weights[0], weights[1], drop(weights[2], H * O, O), weights[3].slice(0, (H - 1) * O), drop(weights[4], H, 1), weights[5].slice(0, H - 1)];
  const loaded = new Controller({ seed: 99, anchor: 1.5 });
  await loaded.load({ weights: older });
  const [a, b] = [await now.probabilities(sup), await loaded.probabilities(sup)];
  heads.forEach((_, h) => {
    if (h !== es) a[h].forEach((p, o) => assert.ok(Math.abs(p - b[h][o]) < 1e-6, `head ${heads[h].name}`));
  });
  // Untrained: logits 0, the anchor's strength (1.5) on the baseline's option alone.
  const n = b[es].length;
  const lean = Math.exp(1.5) / (Math.exp(1.5) + n - 1);
  const sorted = [...b[es]].sort((x, y) => y - x);
  assert.ok(Math.abs(sorted[0] - lean) < 1e-5, JSON.stringify(b[es]));
  for (const p of sorted.slice(1)) assert.ok(Math.abs(p - 1 / (Math.exp(1.5) + n - 1)) < 1e-5, JSON.stringify(b[es]));
  // Shapes of no older layout are refused, not padded.
  assert.equal(padHeadSlots(weights, hidden, 1), null);
  assert.equal(padHeadSlots([weights[0], weights[1], weights[2].slice(1), weights[3].slice(0, O)], hidden, 1), null);
  await assert.rejects(loaded.load({ weights: [weights[0], weights[1], weights[2].slice(1), weights[3]] }), /wrong shape/);
});

test('the greedy proposal is the mode among valid specs: on random policies over every supervised task, never an empty mixture, and one head off the mode at the least cost', async () => {
  const { listTasks } = await import('../../tasks/briefs.js');
  const { FAMILIES, registerFamilyTasks } = await import('../../tasks/families/index.js');
  for (const family of Object.keys(FAMILIES)) registerFamilyTasks(family, 1, 12);
  const { validMode } = await import('./controller.js');
  const { decode } = await import('./space.js');
  const rng = new Rng(17);
  let repaired = 0;
  for (const { brief: b } of listTasks().filter((t) => t.brief.kind === 'supervised')) {
    const heads = buildHeads(b);
    for (let trial = 0; trial < 20; trial++) {
      // A random policy; in half the trials every source head leans to weight 0 (the mode is an empty mixture).
      const probs = heads.map((h) => {
        const w = h.options.map(() => 0.05 + rng.next());
        if (trial % 2 === 0 && h.name.startsWith('source:')) w[0] += 5;
        const sum = w.reduce((a, x) => a + x, 0);
        return w.map((x) => x / sum);
      });
      const mode = probs.map((p) => p.indexOf(Math.max(...p)));
      const choice = validMode(b, probs, (c) => decode(b, heads, c, 3));
      assert.ok(validateSpec(decode(b, heads, choice, 3), b).ok, `${b.id}: the greedy spec is valid`);
      const changed = choice.map((c, h) => (c === mode[h] ? -1 : h)).filter((h) => h >= 0);
      if (validateSpec(decode(b, heads, mode, 3), b).ok) assert.deepEqual(changed, [], `${b.id}: a valid mode is kept`);
      else {
        repaired += 1;
        assert.equal(changed.length, 1, `${b.id}: one head changed`);
        const h = changed[0];
        const cost = Math.log(probs[h][mode[h]]) - Math.log(probs[h][choice[h]]);
        // No cheaper single change is valid: every source head's best non-zero weight costs at least as much.
        heads.forEach((x, k) => {
          if (!x.name.startsWith('source:')) return;
          const best = Math.max(...probs[k].slice(1));
          assert.ok(Math.log(probs[k][mode[k]]) - Math.log(best) >= cost - 1e-12, `${b.id}: ${x.name} was cheaper`);
        });
      }
    }
  }
  assert.ok(repaired > 0, 'some modes were empty mixtures');
});

test('a choice written on the baseline: every value is the baseline’s or the one decode writes, a changed head changes what decode changes, and a valid decode stays valid', async () => {
  const { listTasks } = await import('../../tasks/briefs.js');
  const { FAMILIES, registerFamilyTasks } = await import('../../tasks/families/index.js');
  for (const family of Object.keys(FAMILIES)) registerFamilyTasks(family, 1, 13);
  const { baselineChoice, specWriter } = await import('./controller.js');
  const { decode } = await import('./space.js');
  const rng = new Rng(23);
  // Leaves (path → value) of a JSON value; arrays are leaves.
  const leaves = (v: unknown, path = ''): Map<string, string> => {
    const out = new Map<string, string>();
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, x] of Object.entries(v)) for (const [p, y] of leaves(x, `${path}/${k}`)) out.set(p, y);
    } else out.set(path, JSON.stringify(v));
    return out;
  };
  for (const { brief: b, baseline } of listTasks()) {
    const heads = buildHeads(b);
    const base = baselineChoice(b, heads)!;
    const write = specWriter(b, heads, 5);
    const anchor = leaves(decode(b, heads, base, 5));
    const baseLeaves = leaves(baseline);
    for (let trial = 0; trial < 12; trial++) {
      // The baseline's choice with one to three heads changed at random.
      const choice = [...base];
      for (let k = 0; k <= trial % 3; k++) {
        const h = rng.int(heads.length);
        choice[h] = rng.int(heads[h].options.length);
      }
      const plain = decode(b, heads, choice, 5);
      const written = write(choice);
      if (validateSpec(plain, b).ok) assert.ok(validateSpec(written, b).ok, `${b.id}: ${JSON.stringify(written)}`);
      const plainLeaves = leaves(plain);
      for (const [path, value] of leaves(written)) {
        if (path === '/seed') continue;
        assert.ok(value === plainLeaves.get(path) || value === baseLeaves.get(path), `${b.id} ${path}: ${value} is neither decode's nor the baseline's`);
        // Where decode of the choice differs from decode of the baseline's choice, the choice's value is written.
        if (plainLeaves.has(path) && anchor.get(path) !== plainLeaves.get(path)) assert.equal(value, plainLeaves.get(path));
      }
    }
  }
});

test('family-robust updates: the family with the lower mean reward gains weight by robust × the gap, within bounds, and a checkpoint keeps the weights', async () => {
  await initTf();
  const other = getPublicTask('acrobot-swingup').brief;
  assert.notEqual(other.family, brief.family);
  const groupsWith = async (c: Controller, rng: Rng, high: number, low: number) => {
    const items = async (b: typeof brief, r: number) =>
      Promise.all([0, 1, 2, 3].map(async (k) => ({ trace: (await c.propose(b, { rng, iteration: 0, history: [] })).trace, reward: r + (k - 1.5) / 10 })));
    return [
      { brief, items: await items(brief, high) },
      { brief: other, items: await items(other, low) },
    ];
  };
  for (const robust of [0, 0.5, 1, 3]) {
    const c = new Controller({ seed: 2, robust });
    const rng = new Rng(4);
    let expected = 0;
    for (let round = 0; round < 6; round++) {
      const stats = await c.update(await groupsWith(c, rng, 0.6, -0.4));
      expected = Math.min(2, expected + robust * 0.5);
      const w = Math.exp(expected);
      // Four rows of each family: the low family's weight relative to the mean of the two.
      assert.ok(
        Math.abs(stats['agent/family_weight_max'] - (2 * w) / (w + 1 / w)) < 1e-9,
        `robust ${robust}, round ${round}: ${stats['agent/family_weight_max']}`,
      );
    }
    const state = (await c.state()) as { familyLogWeights: Record<string, number> };
    assert.ok(Math.abs(state.familyLogWeights[other.family] - expected) < 1e-9);
    assert.ok(Math.abs(state.familyLogWeights[brief.family] + expected) < 1e-9);
    const copy = new Controller({ seed: 9, robust });
    await copy.load(JSON.parse(JSON.stringify(state)));
    assert.deepEqual(((await copy.state()) as typeof state).familyLogWeights, state.familyLogWeights);
  }
});

test('family-robust updates: where two families disagree on a decision, the policy follows the one it does worse on', async () => {
  await initTf();
  // The same task under two family names: the policy cannot tell them apart, only the rewards differ.
  const worse = { ...brief, family: `${brief.family}-worse` };
  const h = buildHeads(brief).findIndex((x) => x.name === 'algorithm');
  const options = buildHeads(brief)[h].options as string[];
  const [ars, ppo] = [options.indexOf('ars'), options.indexOf('ppo')];
  for (const seed of [1, 2, 3, 4]) {
    const logOdds: Record<number, number> = {};
    for (const robust of [0, 2]) {
      // No anchor: the baseline's algorithm (PPO) gets no lean of its own.
      const c = new Controller({ seed, robust, anchor: 0 });
      const rng = new Rng(seed);
      for (let round = 0; round < 4; round++) {
        // The better family rewards ARS, the worse one PPO, each within its group; the worse family's rewards are lower throughout.
        const groups = [];
        for (const [b, offset, wanted] of [
          [brief, 0.5, ars],
          [worse, -0.5, ppo],
        ] as const) {
          const items = [];
          for (let k = 0; k < 8; k++) {
            const t = (await c.propose(b, { rng, iteration: round, history: [] })).trace as ControllerTrace;
            items.push({ trace: t, reward: offset + (t.choice[h] === wanted ? 0.2 : 0) });
          }
          groups.push({ brief: b, items });
        }
        await c.update(groups);
      }
      const p = (await c.probabilities(brief))[h];
      logOdds[robust] = Math.log(p[ppo] / p[ars]);
    }
    assert.ok(logOdds[2] > logOdds[0] + 1, `seed ${seed}: log(P(PPO) / P(ARS)) ${logOdds[2]} with robust 2, ${logOdds[0]} without`);
  }
});
