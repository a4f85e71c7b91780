import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HalvingContext, decideRung, effectiveBudget, paidScores, promote, promotedCount, rungShares, rungSpec, successiveHalving } from './fidelity.js';
import { runJob } from '../inner/train.js';
import { dataForJob } from './scoring/hidden-score.js';
import { Rng } from '../util/rng.js';
import { outerReward } from './reward.js';
import { getPublicTask } from '../tasks/briefs.js';
import { validateSpec } from '../inner/spec-check.js';
import { trainAgent } from './loop.js';
import { LocalExecutor } from '../run/local.js';
import { Store } from '../store/store.js';
import { ScriptedAgent } from '../testing/scripted-agent.js';

test('rung shares climb by eta from the minimum share and end at the full budget', () => {
  const close = (a: number[], b: number[]) => assert.ok(a.length === b.length && a.every((v, i) => Math.abs(v - b[i]) < 1e-12), `${a} vs ${b}`);
  close(rungShares({ eta: 3, minShare: 1 / 9 }), [1 / 9, 1 / 3, 1]);
  close(rungShares({ eta: 2, minShare: 0.25 }), [0.25, 0.5, 1]);
  close(rungShares({ eta: 3, minShare: 0.2 }), [0.2, 0.6, 1]);
  close(rungShares({ eta: 3, minShare: 1 }), [1]);
  assert.throws(() => rungShares({ eta: 1, minShare: 0.5 }), /eta must be >= 2/);
  assert.throws(() => rungShares({ eta: 3, minShare: 0 }), /minShare in \(0, 1\]/);
});

test('the top 1/eta of a rung are promoted, at least one, never a failure', () => {
  assert.deepEqual(
    [9, 8, 3, 2, 1, 0].map((n) => promotedCount(n, 3)),
    [3, 2, 1, 1, 1, 0],
  );
  const results = [
    { proposal: 10, status: 'succeeded', normalized: 0.2 },
    { proposal: 11, status: 'failed', normalized: null },
    { proposal: 12, status: 'succeeded', normalized: 0.9 },
    { proposal: 13, status: 'succeeded', normalized: 0.5 },
    { proposal: 14, status: 'succeeded', normalized: 0.9 },
    { proposal: 15, status: 'invalid', normalized: null },
  ];
  assert.deepEqual(promote(results, 3), [12, 14]); // ties: the earlier proposal first
  assert.deepEqual(promote(results, 6), [12]);
  // Fewer successes than places: only the successes go on; none at all, nobody.
  assert.deepEqual(
    promote(
      results.filter((r) => r.status !== 'succeeded' || r.proposal === 13),
      2,
    ),
    [13],
  );
  assert.deepEqual(promote([{ proposal: 1, status: 'failed', normalized: null }], 2), []);
});

test('property: a rung decided early promotes only what the finished rung promotes, and says final only when nothing can change', () => {
  const rng = new Rng(7);
  for (let trial = 0; trial < 500; trial++) {
    const n = 1 + rng.int(12);
    const eta = 2 + rng.int(3);
    // Scores from a few values, so that ties are common; some entrants fail.
    const results = Array.from({ length: n }, (_, i) => {
      const fail = rng.next() < 0.15;
      return { proposal: 100 + i, status: fail ? 'failed' : 'succeeded', normalized: fail ? null : rng.int(5) / 4 };
    });
    const final = promote(results, eta).sort((a, b) => a - b);
    // Finish the entrants in a random order; after each, the decision so far.
    const order = results.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [order[i], order[j]] = [order[j], order[i]];
    }
    const seen = results.map((r) => ({ ...r, status: 'pending', normalized: null as number | null }));
    let wasFinal = false;
    for (const i of order) {
      seen[i] = results[i];
      const d = decideRung(seen, eta);
      for (const p of d.promoted) assert.ok(final.includes(p), `trial ${trial}: ${p} promoted early but not at the end`);
      if (d.final) assert.deepEqual(d.promoted, final, `trial ${trial}: final early with another set`);
      if (wasFinal) assert.ok(d.final, 'once final, final');
      wasFinal = d.final;
    }
    assert.deepEqual(decideRung(results, eta), { promoted: final, final: true });
  }
});

test('property: which rung jobs run and what each proposal settles to never depend on the order jobs finish in', async () => {
  const task = 'two-spirals';
  const brief = getPublicTask(task).brief;
  const baseline = getPublicTask(task).baseline as { model: object; budget: object };
  // A real store; each job's score is a fixed function of its proposal and rung (the scheduler is under test, not training).
  const settle = async (seed: number, fidelity: { eta: number; minShare: number }) => {
    const dir = mkdtempSync(join(tmpdir(), 'rrl-async-halving-'));
    const store = new Store(dir);
    store.createRun('run-1', {});
    const n = 9;
    store.addJobs(
      'run-1',
      Array.from({ length: n }, (_, slot) => ({
        round: 0,
        slot,
        task,
        kind: 'proposal' as const,
        agent: 'random',
        spec: { ...baseline, seed: slot + 1 },
        trace: null,
      })),
    );
    const proposals = store.jobs('run-1', { kind: 'proposal' });
    const rng = new Rng(seed);
    const scoreOf = (parent: number, rung: number): number => ((parent * 7 + rung * 3) % 5) / 4;
    const failing = new Set([proposals[4].id]);
    const c: HalvingContext = {
      store,
      runId: 'run-1',
      iteration: 0,
      fidelity: { mode: 'asha', ...fidelity },
      brief: () => brief,
      runRow: async (row) => {
        // Finish after a random number of turns of the event loop: another order every seed.
        for (let k = rng.int(20); k > 0; k--) await new Promise((r) => setImmediate(r));
        const fail = failing.has(row.parentId as number);
        const v = scoreOf(row.parentId as number, row.rung as number);
        store.finishJobs([
          { id: row.id, outcome: fail ? { status: 'failed', error: 'x' } : { status: 'succeeded', examples: 10, score: { raw: v, normalized: v } } },
        ]);
      },
      progress: () => {},
    };
    await successiveHalving(c, proposals);
    const rungs = store
      .jobs('run-1', { kind: 'rung' })
      .map((j) => `${j.parentId}@${j.rung}`)
      .sort();
    const settled = store.jobs('run-1', { kind: 'proposal' }).map((j) => [j.status, j.normalized, j.share, j.examples]);
    store.close();
    // Synchronous successive halving on the same scores: each rung decided once all of it has finished.
    const expected: string[] = [];
    let entrants = proposals.map((p) => p.id);
    const top = rungShares(fidelity).length - 1;
    for (let r = 0; r <= top && entrants.length; r++) {
      if (r < top && entrants.length === 1) continue; // one entrant: the rung is skipped
      expected.push(...entrants.map((id) => `${id}@${r}`));
      const results = entrants.map((id) => ({
        proposal: id,
        status: failing.has(id) ? 'failed' : 'succeeded',
        normalized: failing.has(id) ? null : scoreOf(id, r),
      }));
      entrants = promote(results, fidelity.eta);
    }
    assert.deepEqual(rungs, expected.sort(), 'the rung jobs synchronous successive halving runs');
    return { rungs, settled };
  };
  for (const fidelity of [
    { eta: 3, minShare: 1 / 9 },
    { eta: 2, minShare: 1 / 8 },
    // 9 → 3 → 1: the rung at 1/3 would have one entrant, which goes on to the full budget untrained there.
    { eta: 3, minShare: 1 / 27 },
  ]) {
    const first = await settle(1, fidelity);
    const top = rungShares({ ...fidelity }).length - 1;
    assert.ok(
      first.rungs.some((r) => r.endsWith(`@${top}`)),
      'someone reached the full budget',
    );
    if (fidelity.minShare === 1 / 27) assert.ok(!first.rungs.some((r) => r.endsWith('@2')), 'the rung with one entrant is skipped');
    for (let seed = 2; seed <= 12; seed++) assert.deepEqual(await settle(seed, fidelity), first, `finish order ${seed}`);
  }
});

test('a rung trains the agent spec with its budget cut by the harness', () => {
  const spirals = getPublicTask('two-spirals');
  const raw = { ...spirals.baseline, budget: { ...spirals.baseline.budget, examples: 90_000 } };
  const checked = validateSpec(raw, spirals.brief);
  assert.ok(checked.ok);
  const low = rungSpec(raw, checked.spec, spirals.brief, 1 / 9) as typeof raw;
  assert.equal(low.budget.examples, Math.ceil(effectiveBudget(checked.spec, spirals.brief) / 9));
  assert.ok(effectiveBudget(checked.spec, spirals.brief) <= 90_000);
  assert.deepEqual({ ...low, budget: null }, { ...raw, budget: null }, 'only the budget changes');
  assert.deepEqual(rungSpec(raw, checked.spec, spirals.brief, 1), raw, 'the full rung is the spec as written');
  const cart = getPublicTask('cartpole-short');
  const c = validateSpec(cart.baseline, cart.brief);
  assert.ok(c.ok);
  const tiny = rungSpec(cart.baseline, c.spec, cart.brief, 1e-6) as { budget: { envSteps: number; stopWhenFlat: boolean } };
  assert.equal(tiny.budget.envSteps, c.spec.environment.numEnvs, 'at least one step per environment');
  assert.equal(tiny.budget.stopWhenFlat, true, 'control rungs stop on a flat training curve');
  assert.ok(validateSpec(tiny, cart.brief).ok);
});

test("a supervised rung's share is a share of the examples the full-budget job really trains on, whatever stops it", async () => {
  // Jobs whose epochs run out before the budget, and jobs the budget stops: the full job's examples
  // are what effectiveBudget says, so rung 0 at 1/9 trains a ninth of them, not a ninth of a budget it would never use.
  for (const id of ['two-spirals', 'iris-species', 'cars-mpg']) {
    const { brief, baseline } = getPublicTask(id);
    for (const [epochs, examples] of [
      [2, brief.budget.maxExamples ?? 0],
      [7, 3_000],
      [40, brief.budget.maxExamples ?? 0],
    ]) {
      const raw = { ...baseline, algorithm: { ...baseline.algorithm, epochs, earlyStoppingPatience: 0 }, budget: { ...baseline.budget, examples } };
      const checked = validateSpec(raw, brief);
      assert.ok(checked.ok, JSON.stringify(checked));
      const dir = mkdtempSync(join(tmpdir(), 'rrl-rung-'));
      const full = await runJob(raw, brief, { outDir: dir, data: dataForJob(id, checked.spec) }).finally(() => rmSync(dir, { recursive: true, force: true }));
      assert.equal(effectiveBudget(checked.spec, brief), full.cost.examples, `${id}, ${epochs} epochs, budget ${examples}`);
      const low = rungSpec(raw, checked.spec, brief, 1 / 9) as typeof raw;
      assert.equal(low.budget.examples, Math.ceil(full.cost.examples / 9));
    }
  }
});

test('a proposal stopped early is paid its own score, never more than one promoted over it, and never a bonus', () => {
  // Rungs 0..2 (top 2). A: promoted to the top (0.6 there). B: stopped at rung 1 with 0.8 (above A's
  // final). C: stopped at rung 0 with 0.3. D: failed at rung 0. E: promoted to the top and failed there.
  const paid = paidScores(
    [
      {
        proposal: 1,
        rungs: [
          { status: 'succeeded', normalized: 0.5 },
          { status: 'succeeded', normalized: 0.7 },
          { status: 'succeeded', normalized: 0.6 },
        ],
      },
      {
        proposal: 2,
        rungs: [
          { status: 'succeeded', normalized: 0.55 },
          { status: 'succeeded', normalized: 0.8 },
        ],
      },
      { proposal: 3, rungs: [{ status: 'succeeded', normalized: 0.3 }] },
      { proposal: 4, rungs: [{ status: 'failed', normalized: null }] },
      {
        proposal: 5,
        rungs: [
          { status: 'succeeded', normalized: 0.6 },
          { status: 'succeeded', normalized: 0.75 },
          { status: 'failed', normalized: null },
        ],
      },
    ],
    2,
  );
  assert.deepEqual(paid, [
    { normalized: 0.6, full: true, rung: 2 },
    { normalized: 0.6, full: false, rung: 1 }, // capped by A's full-budget score (E failed: no cap from it)
    { normalized: 0.3, full: false, rung: 0 },
    { normalized: null, full: false, rung: 0 },
    { normalized: null, full: true, rung: 2 },
  ]);
  // A proposal that skipped a rung (the only entrant there) is paid as one that reached the top,
  // and caps those stopped below it as any finalist does.
  const skipped = paidScores(
    [
      {
        proposal: 1,
        rungs: [
          { status: 'succeeded', normalized: 0.5, rung: 0 },
          { status: 'succeeded', normalized: 0.4, rung: 2 },
        ],
      },
      { proposal: 2, rungs: [{ status: 'succeeded', normalized: 0.45, rung: 0 }] },
    ],
    2,
  );
  assert.deepEqual(skipped, [
    { normalized: 0.4, full: true, rung: 2 },
    { normalized: 0.4, full: false, rung: 0 },
  ]);
  // Stopped early, a score far above the best so far earns no bonus; the same at full budget does.
  const i = { status: 'succeeded' as const, normalized: 0.9, baseline: 0.1, bestSoFar: 0.2, stderr: 0.01, bestStderr: 0.01 };
  assert.equal(outerReward({ ...i, fullBudget: false }).bonus, 0);
  assert.equal(outerReward(i).bonus, 0.5);
});

test('a real run with successive halving: every rung stored, the best promoted, every proposal paid', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-fidelity-'));
  const task = 'two-spirals';
  const baseline = getPublicTask(task).baseline as { model: object; algorithm: object; budget: object };
  const base = { ...baseline, budget: { ...baseline.budget, examples: 20_000 } };
  // Four proposals of different quality (one invalid) on a task whose jobs train in well under a second.
  const agent = new ScriptedAgent(
    (
      [
        { ...base, model: { ...base.model, hidden: [32, 32] }, seed: 1 },
        { ...base, model: { ...base.model, hidden: [4] }, seed: 2 },
        { ...base, algorithm: { ...base.algorithm, learningRate: 7 } },
        { ...base, model: { ...base.model, hidden: [16, 16] }, seed: 3 },
      ] as unknown[]
    ).map((spec) => () => spec),
  );
  const executor = new LocalExecutor({ workers: 2 });
  try {
    const summary = await trainAgent(
      dir,
      { tasks: [task], agent: 'random', iterations: 1, group: 4, seed: 3, fidelity: { mode: 'asha', eta: 2, minShare: 0.25 } },
      executor,
      { agent, cache: null },
    );
    const store = new Store(dir);
    const proposals = store.jobs(summary.run, { kind: 'proposal' });
    const rungs = store.jobs(summary.run, { kind: 'rung' });
    store.close();
    // 3 valid proposals: rung 0 (1/4 of the budget) all three; rung 1 (1/2) would have one entrant,
    // so it is skipped (it could decide nothing); rung 2 (full) that one.
    assert.deepEqual(
      rungs.map((r) => r.rung),
      [0, 0, 0, 2],
    );
    assert.equal(proposals[2].status, 'invalid');
    assert.match(proposals[2].error ?? '', /algorithm\.learningRate/);
    assert.ok(rungs.every((r) => r.status === 'succeeded' && r.normalized !== null));
    const budget = (r: { spec: unknown }) => (r.spec as { budget: { examples: number } }).budget.examples;
    const full = base.budget.examples;
    assert.deepEqual(rungs.map(budget), [full / 4, full / 4, full / 4, full]);
    // The promoted one is the best of rung 0, and it alone reached the full budget.
    const r0 = rungs.filter((r) => r.rung === 0);
    const bestAt0 = r0.reduce((a, b) => ((b.normalized as number) > (a.normalized as number) ? b : a));
    assert.equal(rungs[3].parentId, bestAt0.parentId);
    // Each valid proposal carries the score of its highest rung and the compute of all its rungs.
    for (const p of proposals.filter((q) => q.status !== 'invalid')) {
      const mine = rungs.filter((r) => r.parentId === p.id);
      assert.equal(p.normalized, mine.at(-1)!.normalized);
      assert.equal(p.share, mine.at(-1)!.share);
      assert.equal(
        p.examples,
        mine.reduce((a, r) => a + (r.examples ?? 0), 0),
      );
    }
    // Paid for all four (the invalid one the penalty); a stopped one never above the finalist.
    const items = agent.updates[0][0].items;
    assert.equal(items.length, 4);
    const finalist = proposals.find((p) => p.id === bestAt0.parentId)!;
    for (const p of proposals) {
      if (p.status === 'invalid') assert.equal(p.reward, -1);
      else if (p.id !== finalist.id)
        assert.ok((p.reward as number) <= (finalist.reward as number) + 1e-12, `stopped ${p.reward} vs finalist ${finalist.reward}`);
    }
    // The compute report counts the rung jobs once (not the settled proposals too).
    assert.equal(summary.compute.proposals.jobs, 4);
    assert.equal(
      summary.compute.proposals.examples,
      rungs.reduce((a, r) => a + (r.examples ?? 0), 0),
    );
    assert.equal(summary.compute.tasks[task].best, finalist.normalized);
  } finally {
    await executor.close();
  }
});
