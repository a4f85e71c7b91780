import test from 'node:test';
import assert from 'node:assert/strict';
import { REWARD_RULE, outerReward, type RewardInput } from './reward.js';

const ok = (normalized: number | null, baseline = 0.5, bestSoFar = 0.5): RewardInput => ({ status: 'succeeded', normalized, baseline, bestSoFar });

function near(actual: number, expected: number, what: string): void {
  assert.ok(Math.abs(actual - expected) < 1e-12, `${what}: got ${actual}, expected ${expected}`);
}

test('the rule constants', () => {
  assert.deepEqual({ ...REWARD_RULE }, { failure: -1, bonus: 0.5, margin: 0.01 });
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
  assert.equal(outerReward({ ...ok, status: 'invalid' }, 'best').reward, -1);
});
