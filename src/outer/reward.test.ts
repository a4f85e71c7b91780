import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REWARD_RULE, type ScoredEntry, bestEntry, bonusThreshold, groupAdvantages, outerReward, type RewardInput } from './reward.js';
import { runJob } from '../inner/train.js';
import { getPublicTask } from '../tasks/briefs.js';
import { supervisedSpec } from '../tasks/supervised/define.js';
import { dataForJob, scoreArtifact } from './scoring/hidden-score.js';

const ok = (normalized: number | null, baseline = 0.5, bestSoFar = 0.5): RewardInput => ({ status: 'succeeded', normalized, baseline, bestSoFar });

function near(actual: number, expected: number, what: string): void {
  assert.ok(Math.abs(actual - expected) < 1e-12, `${what}: got ${actual}, expected ${expected}`);
}

test('the rule constants', () => {
  assert.deepEqual({ ...REWARD_RULE }, { failure: -1, bonus: 0.5, margin: 0.01 });
});

test('group advantages: mean 0 and sd 1 within the group; all 0 without a spread or a member', () => {
  const a = groupAdvantages([1, 0, -1, 0]);
  near(
    a.reduce((x, y) => x + y, 0),
    0,
    'mean',
  );
  near(a.reduce((x, y) => x + y * y, 0) / a.length, 1, 'variance');
  near(a[0], Math.SQRT2, 'the best');
  assert.deepEqual(groupAdvantages([0.3, 0.3, 0.3]), [0, 0, 0]);
  assert.deepEqual(groupAdvantages([]), []);
});

test('failed and invalid jobs get -1, whatever their score', () => {
  for (const status of ['failed', 'invalid'] as const) {
    for (const normalized of [null, 0, 0.9, 5]) {
      assert.deepEqual(outerReward({ status, normalized, baseline: 0.2, bestSoFar: 0.2 }), { reward: -1, improvement: null, bonus: 0, cost: 0 });
    }
  }
});

test('a succeeded job without a finite score counts as a failure', () => {
  for (const normalized of [null, NaN, Infinity, -Infinity]) {
    assert.deepEqual(outerReward(ok(normalized)), { reward: -1, improvement: null, bonus: 0, cost: 0 }, String(normalized));
  }
});

test('the improvement is normalized minus baseline', () => {
  const r = outerReward(ok(0.7, 0.5, 0.9));
  near(r.improvement!, 0.2, 'improvement');
  assert.equal(r.bonus, 0);
  near(r.reward, 0.2, 'reward');
  const worse = outerReward(ok(0.1, 0.5, 0.9));
  near(worse.improvement!, -0.4, 'negative improvement');
  near(worse.reward, -0.4, 'negative reward');
  assert.equal(outerReward(ok(0.5, 0.5, 0.9)).reward, 0);
});

test('the improvement is clipped to [-1, 1]', () => {
  const high = outerReward(ok(3, 0.2, 5));
  assert.equal(high.improvement, 1);
  assert.equal(high.reward, 1);
  const low = outerReward(ok(-4, 0.5, 0.5));
  assert.equal(low.improvement, -1);
  assert.equal(low.reward, -1);
  // clipped improvement plus the bonus can exceed 1
  const both = outerReward(ok(3, 0.2, 1));
  assert.equal(both.improvement, 1);
  assert.equal(both.bonus, 0.5);
  assert.equal(both.reward, 1.5);
});

test('the bonus is paid only when beating bestSoFar by more than the margin', () => {
  // best 0.8: 0.8 + 0.01 is the line; equal to it is not enough
  assert.equal(outerReward(ok(0.85, 0.5, 0.8)).bonus, 0.5);
  near(outerReward(ok(0.85, 0.5, 0.8)).reward, 0.35 + 0.5, 'reward with bonus');
  assert.equal(outerReward(ok(0.8 + 0.011, 0.5, 0.8)).bonus, 0.5);
  assert.equal(outerReward(ok(0.805, 0.5, 0.8)).bonus, 0);
  assert.equal(outerReward(ok(0.8, 0.5, 0.8)).bonus, 0);
  assert.equal(outerReward(ok(0.7, 0.5, 0.8)).bonus, 0);
  // beating the baseline without beating the best: improvement only
  const r = outerReward(ok(0.7, 0.5, 0.8));
  near(r.reward, 0.2, 'no bonus');
  // the bonus also applies below the baseline when the best so far is lower (e.g. a new task)
  assert.equal(outerReward(ok(0.3, 0.5, 0.1)).bonus, 0.5);
  near(outerReward(ok(0.3, 0.5, 0.1)).reward, -0.2 + 0.5, 'bonus below baseline');
});

test('reward is improvement + bonus in every succeeded case', () => {
  for (const n of [-2, -0.3, 0, 0.2, 0.51, 0.6, 1, 2.5]) {
    for (const best of [-1, 0, 0.5, 1]) {
      const r = outerReward(ok(n, 0.5, best));
      assert.ok(r.improvement !== null);
      near(r.reward, r.improvement! + r.bonus, `n ${n} best ${best}`);
      assert.ok(r.improvement! >= -1 && r.improvement! <= 1);
      assert.ok(r.bonus === 0 || r.bonus === 0.5);
    }
  }
});

test('the best rule pays the improvement over the best so far; the cost rule charges compute', () => {
  const ok = { status: 'succeeded' as const, normalized: 0.8, baseline: 0.5, bestSoFar: 0.9, computeShare: 0.4 };
  assert.ok(Math.abs(outerReward(ok, 'best').reward - -0.1) < 1e-12);
  assert.ok(Math.abs(outerReward(ok, 'cost', 0.5).reward - (0.8 - 0.2)) < 1e-12);
  assert.equal(outerReward({ ...ok, computeShare: 2 }, 'cost', 1).cost, 1, 'the share is capped at 1');
  assert.equal(outerReward({ ...ok, status: 'failed' }, 'cost').reward, -1);
  // Clipped like the other rules: a diverging regression's score must not swamp its group.
  assert.equal(outerReward({ ...ok, normalized: -9.2e9 }, 'cost').reward, -1);
  assert.equal(outerReward({ ...ok, normalized: 7 }, 'cost', 0).reward, 1);
  assert.equal(outerReward({ ...ok, status: 'invalid' }, 'best').reward, -1);
});

test('the bonus threshold is max(margin, 2·sqrt(u² + u_best²)); unknown uncertainties count as 0', () => {
  near(bonusThreshold(0.03, 0.04), 0.1, 'both errors');
  near(bonusThreshold(0.001, 0.001), REWARD_RULE.margin, 'tiny errors leave the margin');
  assert.equal(bonusThreshold(null, null), REWARD_RULE.margin);
  assert.equal(bonusThreshold(undefined, NaN), REWARD_RULE.margin);
  near(bonusThreshold(0.05, null), 0.1, 'one error known');
  const noisy = (normalized: number): RewardInput => ({
    status: 'succeeded',
    normalized,
    baseline: 0.5,
    bestSoFar: 0.8,
    uncertainty: 0.03,
    bestUncertainty: 0.04,
  });
  // 0.8 + 0.1 is the line now, not 0.81
  assert.equal(outerReward(noisy(0.85)).bonus, 0);
  assert.equal(outerReward(noisy(0.9)).bonus, 0, 'exactly at the line is not beyond it');
  assert.equal(outerReward(noisy(0.91)).bonus, 0.5);
});

test('the best entry is the highest score, the first on ties', () => {
  const e = (jobId: number, normalized: number, uncertainty: number | null = 0.1): ScoredEntry => ({ jobId, normalized, uncertainty });
  assert.equal(bestEntry([]), null);
  assert.deepEqual(bestEntry([e(1, 0.5), e(2, 0.7, 0.2), e(3, 0.7)]), e(2, 0.7, 0.2));
  assert.deepEqual(bestEntry([e(1, NaN), e(2, -0.5)]), e(2, -0.5));
});

test('attack 5: the same iris spec with seeds 1-6 earns no bonus from seed noise under the noise-aware rule', async () => {
  // The held-out split depends on the secret: pin it so the figures below are this test's own.
  const before = process.env.RRL_EVAL_SECRET;
  process.env.RRL_EVAL_SECRET = '1779033703';
  try {
    const task = 'iris-species';
    const { brief } = getPublicTask(task);
    // A 64-64 network on the noisy bulk set: iris-species' baseline until issue 21 (its baseline now is a linear fit that no seed moves).
    const baseline = supervisedSpec(task, { sources: [{ id: 'noisy-large', weight: 1 }], objective: 'cross-entropy', epochs: 60, examples: 10_000 });
    const tmp = mkdtempSync(join(tmpdir(), 'rrl-iris-seeds-'));
    const scores = [];
    for (let seed = 1; seed <= 6; seed++) {
      const spec = { ...baseline, seed };
      const dir = join(tmp, `seed-${seed}`);
      await runJob(spec, brief, { outDir: dir, data: dataForJob(task, spec) });
      scores.push(scoreArtifact(task, dir));
    }
    for (const s of scores) assert.ok(s.stderr !== null && s.stderr > 0.05 && s.stderr < 0.15, `stderr ${s.stderr} of a 45-row test set`);
    // Seed 1 is the first result on the task; every other seed is proposed after it in turn.
    let oldBonuses = 0;
    let newBonuses = 0;
    const seen: ScoredEntry[] = [{ jobId: 1, normalized: scores[0].normalized, uncertainty: scores[0].stderr }];
    for (let k = 1; k < scores.length; k++) {
      const best = bestEntry(seen)!;
      const input: RewardInput = { status: 'succeeded', normalized: scores[k].normalized, baseline: scores[0].normalized, bestSoFar: best.normalized };
      oldBonuses += outerReward(input).bonus > 0 ? 1 : 0; // no standard errors: the old fixed margin
      newBonuses += outerReward({ ...input, uncertainty: scores[k].stderr, bestUncertainty: best.uncertainty }).bonus > 0 ? 1 : 0;
      seen.push({ jobId: k + 1, normalized: scores[k].normalized, uncertainty: scores[k].stderr });
    }
    const rows = scores.map((s) => Math.round(s.raw * 45));
    assert.ok(Math.max(...rows) - Math.min(...rows) >= 2, `the seeds alone move the score: ${rows.join(', ')} of 45`);
    assert.ok(oldBonuses >= 1, `the fixed margin paid seed noise (${oldBonuses} bonus(es); rows ${rows.join(', ')})`);
    assert.equal(newBonuses, 0, `no bonus for seed noise (rows ${rows.join(', ')})`);
  } finally {
    if (before === undefined) delete process.env.RRL_EVAL_SECRET;
    else process.env.RRL_EVAL_SECRET = before;
  }
});

test('without a reference no improvement is paid; an unconfirmed score never earns the bonus', () => {
  for (const rule of ['improvement', 'best'] as const) {
    assert.deepEqual(outerReward({ status: 'succeeded', normalized: 0.9, baseline: null, bestSoFar: 0 }, rule), {
      reward: 0,
      improvement: null,
      bonus: 0,
      cost: 0,
    });
  }
  assert.equal(outerReward({ status: 'failed', normalized: null, baseline: null, bestSoFar: 0 }).reward, -1, 'a failure still costs');
  const far = { status: 'succeeded' as const, normalized: 0.9, baseline: 0.2, bestSoFar: 0.2 };
  assert.equal(outerReward({ ...far, confirmed: false }).bonus, 0);
  assert.equal(outerReward({ ...far, confirmed: true }).bonus, 0.5);
});
