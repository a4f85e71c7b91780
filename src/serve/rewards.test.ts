import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RewardService, type ServeConfig } from './service.js';
import { startServer } from './server.js';
import { RewardsResponse } from './schemas.js';
import { LocalExecutor } from '../run/local.js';
import type { Executor } from '../run/executor.js';
import { Store } from '../store/store.js';
import { REFERENCE_SPECS } from '../tasks/reference-specs.js';
import { BASELINE_ATTEMPTS, BASELINE_SEEDS, CONFIRM_SEEDS } from '../outer/noise.js';

// Rewards a client cannot game by retrying, by racing, or by a baseline that failed.
const task = 'two-spirals';
const config: ServeConfig = { mode: 'serve', seed: 0, reward: { rule: 'improvement', lambda: 0.5 } };
const executor = new LocalExecutor({ workers: 2 });
after(() => executor.close());

/** A spec far better than the task's baseline (a wider network, label smoothing, a cosine schedule). */
const good = (seed: number): string => JSON.stringify({ ...REFERENCE_SPECS[task].spec(), seed });
/** A control task whose baseline is PPO and whose better spec is ARS. */
const control = 'cartpole-short';
const ars = (seed: number): string => JSON.stringify({ ...REFERENCE_SPECS[control].spec(), seed });

function open(): { service: RewardService; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-serve-rewards-'));
  return { service: RewardService.open(dir, config, executor, { maxQueue: 64 }), dir };
}

function jobKinds(dir: string): Record<string, number> {
  const store = new Store(dir);
  try {
    const counts: Record<string, number> = {};
    for (const j of store.jobs(store.getRun()!.id)) counts[j.kind] = (counts[j.kind] ?? 0) + 1;
    return counts;
  } finally {
    store.close();
  }
}

/** The bonus the store recorded for a job's reward. */
function bonusOf(dir: string, jobId: number): number {
  const store = new Store(dir);
  try {
    const row = store.db.prepare('SELECT detail FROM rewards WHERE job_id = ?').get(jobId) as { detail: string };
    return (JSON.parse(row.detail) as { bonus: number }).bonus;
  } finally {
    store.close();
  }
}

test('two concurrent requests with one good spec cannot both take the bonus; the candidate is confirmed on the harness seeds first', async () => {
  const { service, dir } = open();
  try {
    const [a, b] = await Promise.all([service.rewards(task, [good(11)]), service.rewards(task, [good(12)])]);
    const bonuses = [a, b].map((r) => bonusOf(dir, r.results[0].job));
    assert.deepEqual(bonuses.sort(), [0, 0.5], `one bonus between them (rewards ${a.rewards[0]}, ${b.rewards[0]})`);
    const kinds = jobKinds(dir);
    assert.equal(kinds.baseline, BASELINE_SEEDS);
    assert.equal(kinds.confirm, 2 * CONFIRM_SEEDS, 'each candidate was trained again on the harness seeds');
    // A third request with the same spec is compared with the confirmed best: no bonus.
    const c = await service.rewards(task, [good(13)]);
    assert.equal(bonusOf(dir, c.results[0].job), 0);
  } finally {
    await service.close();
  }
});

test('a retried request gets the answer it missed: by idempotency key, or identical within the replay window; a key reused for another body is refused', async () => {
  const { service, dir } = open();
  const server = await startServer(service, { port: 0 });
  try {
    const post = (body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
      fetch(`${server.url}/v1/rewards`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const body = { task, completions: [good(21), '{"not": "a spec"}'] };
    const first = RewardsResponse.parse(await (await post(body, { 'idempotency-key': 'step-7' })).json());
    assert.equal(first.replayed, false);
    assert.equal(bonusOf(dir, first.results[0].job), 0.5, 'the first answer has the bonus');
    const jobs = jobKinds(dir);
    // The retry (same key) and an identical request without a key get the first answer, bonus included; nothing trains.
    for (const again of [await post(body, { 'idempotency-key': 'step-7' }), await post(body)]) {
      const r = RewardsResponse.parse(await again.json());
      assert.equal(r.replayed, true);
      assert.equal(r.request, first.request);
      assert.deepEqual(r.rewards, first.rewards);
    }
    assert.deepEqual(jobKinds(dir), jobs);
    const reused = await post({ task, completions: [good(22)] }, { 'idempotency-key': 'step-7' });
    assert.equal(reused.status, 422);
    assert.match(((await reused.json()) as { error: string }).error, /^idempotency key "step-7" was used for request \d+, whose task or completions differ/);
    // A new key is a new request: the same spec again earns no second bonus.
    const fresh = RewardsResponse.parse(await (await post(body, { 'idempotency-key': 'step-8' })).json());
    assert.equal(fresh.replayed, false);
    assert.equal(bonusOf(dir, fresh.results[0].job), 0, 'the bonus is not paid twice');
    assert.ok(Math.abs(fresh.rewards[0]! - (first.rewards[0]! - 0.5)) < 1e-9, 'the same spec is paid its confirmed improvement');
  } finally {
    await server.close();
    await service.close();
  }
});

/**
 * The local executor, except that PPO jobs (the task's baseline; the good spec is ARS) run under a
 * 1 ms limit — a real timeout of a real job, the machine's kind of failure — on their first
 * `failFirst` attempts of a spec.
 */
function timingOutPpo(failFirst: number): Executor {
  const attempts = new Map<string, number>();
  return {
    name: 'local-timing-out-ppo',
    slots: executor.slots,
    execute(req, options) {
      const key = JSON.stringify(req.spec);
      const n = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, n);
      const ppo = (req.spec as { algorithm?: { name?: string } }).algorithm?.name === 'ppo';
      return executor.execute(req, ppo && n <= failFirst ? { ...options, timeoutMs: 1 } : options);
    },
    cancelAll: (reason) => executor.cancelAll(reason),
    close: async () => {},
  };
}

test('a baseline that fails for a reason of the machine is retried, and without a baseline score no improvement is paid', async () => {
  const retried = mkdtempSync(join(tmpdir(), 'rrl-serve-retry-'));
  const once = RewardService.open(retried, config, timingOutPpo(1), { maxQueue: 64 });
  try {
    const r = await once.rewards(control, [ars(31)]);
    assert.equal(jobKinds(retried).baseline, 2 * BASELINE_SEEDS, 'each seed failed once and was tried again');
    assert.equal(r.results[0].reason, null, 'the proposal is rewarded against the retried baseline');
  } finally {
    await once.close();
  }
  const never = mkdtempSync(join(tmpdir(), 'rrl-serve-no-baseline-'));
  const service = RewardService.open(never, config, timingOutPpo(Number.POSITIVE_INFINITY), { maxQueue: 64 });
  try {
    const r = await service.rewards(control, [ars(32), '{}']);
    assert.equal(jobKinds(never).baseline, BASELINE_SEEDS * BASELINE_ATTEMPTS, 'each seed was tried the attempt limit');
    assert.equal(r.results[0].status, 'succeeded');
    assert.equal(r.rewards[0], null, 'a job that ran is neither paid nor charged without a reference');
    assert.match(r.results[0].reason!, /^unscorable: the baseline spec failed on every seed \(timeout/);
    assert.equal(r.rewards[1], -1, 'an invalid spec still costs');
  } finally {
    await service.close();
  }
});
