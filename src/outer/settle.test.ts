import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { JobRow } from '../store/store.js';
import { jobRow } from '../testing/job-row.js';
import { getPublicTask } from '../tasks/briefs.js';
import { BASELINE_ATTEMPTS, BASELINE_SEEDS, CONFIRM_SEEDS, harnessSeeds, taskReference } from './noise.js';
import { baselineJobs, baselineRetries, bonusCandidates, confirmJobs, rewardGroup, taskStanding } from './settle.js';

const brief = getPublicTask('cars-mpg').brief;
/** A finished job row of the brief's task. */
const row = (kind: JobRow['kind'], o: Partial<JobRow> = {}): JobRow => jobRow(kind, { task: brief.id, ...o });

const baselines = (scores: number[], stderr = 0.02): JobRow[] => scores.map((normalized, slot) => row('baseline', { slot, normalized, stderr }));

test('the harness seeds are spec seeds, differ by task and secret, and the baseline trains on them', () => {
  const a = harnessSeeds('cars-mpg', BASELINE_SEEDS, 'one');
  assert.equal(new Set(a).size, BASELINE_SEEDS);
  for (const s of a) assert.ok(Number.isInteger(s) && s >= 1 && s <= 0x7fffffff);
  assert.notDeepEqual(harnessSeeds('two-spirals', BASELINE_SEEDS, 'one'), a);
  assert.notDeepEqual(harnessSeeds('cars-mpg', BASELINE_SEEDS, 'two'), a);
  assert.deepEqual(harnessSeeds('cars-mpg', CONFIRM_SEEDS, 'one'), a.slice(0, CONFIRM_SEEDS), 'confirmation seeds are the baseline seeds');
  const jobs = baselineJobs('cars-mpg', getPublicTask('cars-mpg').baseline, 'one');
  assert.deepEqual(
    jobs.map((j) => (j.spec as { seed: number }).seed),
    a,
  );
  assert.deepEqual(
    jobs.map((j) => j.slot),
    [0, 1, 2, 3, 4],
  );
});

test('the reference is the mean over the seeds that scored; its noise is their sample sd', () => {
  const ref = taskReference(baselines([0.4, 0.5, 0.6, 0.5, 0.5], 0.03));
  assert.ok(Math.abs(ref.mean! - 0.5) < 1e-12);
  assert.ok(Math.abs(ref.trainSd! - Math.sqrt(0.02 / 4)) < 1e-12);
  assert.ok(Math.abs(ref.spread! - 0.2) < 1e-12);
  assert.ok(Math.abs(ref.evalSe - 0.03) < 1e-12);
  assert.ok(Math.abs(ref.uncertainty - Math.sqrt(0.03 ** 2 + 0.005 / 5)) < 1e-12);
  // A seed retried after a failure counts by its latest attempt.
  const retried = [
    ...baselines([0.5, 0.5]),
    row('baseline', { slot: 2, status: 'failed', failureKind: 'timeout', normalized: null }),
    row('baseline', { slot: 2 + BASELINE_SEEDS, normalized: 0.8 }),
  ];
  assert.equal(taskReference(retried).scored, 3);
  const none = taskReference([row('baseline', { status: 'failed', failureKind: 'timeout', error: 'past 5 s', normalized: null })]);
  assert.equal(none.mean, null);
  assert.match(none.missing!, /failed on every seed \(timeout: past 5 s\)/);
});

test('a baseline seed that failed for a reason of the machine is retried up to the attempt limit; a NaN is not', () => {
  const timedOut = (slot: number): JobRow => row('baseline', { slot, status: 'failed', failureKind: 'timeout', normalized: null });
  const retry = baselineRetries([...baselines([0.5]), timedOut(1), row('baseline', { slot: 2, status: 'failed', failureKind: 'nan', normalized: null })]);
  assert.deepEqual(
    retry.map((j) => j.slot),
    [1 + BASELINE_SEEDS],
    'the second attempt of seed 1',
  );
  const history = Array.from({ length: BASELINE_ATTEMPTS }, (_, k) => timedOut(k * BASELINE_SEEDS));
  assert.equal(baselineRetries(history.slice(0, BASELINE_ATTEMPTS - 1)).length, 1);
  assert.equal(baselineRetries(history).length, 0, 'attempts are bounded');
});

test('without a reference nothing but failures is paid, and no candidate is confirmed', () => {
  const standing = taskStanding([row('baseline', { status: 'failed', failureKind: 'out-of-memory', normalized: null })], [], []);
  const rows = [row('proposal', { normalized: 0.9 }), row('proposal', { status: 'invalid', normalized: null })];
  assert.deepEqual(bonusCandidates(rows, standing, []), []);
  const g = rewardGroup(rows, brief, standing, [], { groupId: 'g' });
  assert.deepEqual(
    g.map((r) => r.reward),
    [0, -1],
  );
  assert.equal(g[0].improvement, null);
  assert.match(String(g[0].detail.unscored), /failed on every seed/);
  assert.match(g[0].unscorable ?? '', /^unscorable: the baseline spec failed on every seed/, 'a job that ran is neither paid nor charged');
  assert.equal(g[1].unscorable, null, 'an invalid answer is its own failure');
});

test('a candidate is paid from its confirmation: the bonus only when the confirmed mean is beyond the noise', () => {
  const standing = taskStanding(baselines([0.5, 0.52, 0.48, 0.5, 0.5]), [], []);
  const lucky = row('proposal', { normalized: 0.8, spec: { lr: 1, seed: 1 } });
  const good = row('proposal', { normalized: 0.8, spec: { lr: 2, seed: 1 } });
  const plain = row('proposal', { normalized: 0.51 });
  assert.deepEqual(
    bonusCandidates([lucky, good, plain], standing, []).map((r) => r.id),
    [lucky.id, good.id],
  );
  const jobs = confirmJobs([lucky, good], [], 'secret');
  assert.equal(jobs.length, 2 * CONFIRM_SEEDS);
  assert.deepEqual(
    confirmJobs(
      [lucky, good],
      jobs.map((j, i) => row('confirm', { parentId: j.parentId!, slot: i })),
      'secret',
    ),
    [],
    'confirmation jobs are added once',
  );
  const confirm = [
    ...[0.5, 0.49, 0.51, 0.5, 0.5].map((normalized, slot) => row('confirm', { parentId: lucky.id, slot, normalized, spec: { lr: 1, seed: 100 + slot } })),
    ...[0.79, 0.8, 0.81, 0.8, 0.8].map((normalized, slot) => row('confirm', { parentId: good.id, slot, normalized, spec: { lr: 2, seed: 100 + slot } })),
  ];
  const g = rewardGroup([lucky, good, plain], brief, standing, confirm, { groupId: 'g' });
  assert.equal(g[0].bonus, 0, 'seed luck earns nothing');
  assert.ok(Math.abs(g[0].improvement!) < 1e-9, 'and is paid the confirmed mean, not the lucky seed');
  assert.equal(g[1].bonus, 0.5);
  assert.ok(Math.abs(g[1].improvement! - 0.3) < 1e-9);
  assert.equal(g[2].bonus, 0, 'an unconfirmed score never earns the bonus');
  // A confirmation with a failed seed is incomplete: no bonus.
  const broken = confirm.map((r) =>
    r.parentId === good.id && r.slot === 2 ? { ...r, status: 'failed' as const, failureKind: 'timeout', normalized: null } : r,
  );
  assert.equal(rewardGroup([good], brief, standing, broken, { groupId: 'g' })[0].bonus, 0);
  // Later groups are compared with the confirmed best, not with the reference.
  const later = taskStanding(baselines([0.5, 0.52, 0.48, 0.5, 0.5]), [lucky, good, plain], confirm);
  assert.equal(later.best.jobId, good.id);
  assert.ok(Math.abs(later.best.normalized - 0.8) < 1e-9);
  // The lucky spec again with another lucky seed: its quality is known, so it is paid that, and not confirmed again.
  const again = row('proposal', { normalized: 0.85, spec: { ...(lucky.spec as object), seed: 99 } });
  assert.deepEqual(bonusCandidates([again], later, confirm), []);
  assert.ok(Math.abs(rewardGroup([again], brief, later, confirm, { groupId: 'g' })[0].improvement!) < 1e-9);
});

test("property: scores drawn from the baseline's own noise earn no bonus and a mean improvement near 0", () => {
  fc.assert(
    fc.property(
      fc.double({ min: -0.5, max: 0.9, noNaN: true }),
      fc.double({ min: 0.005, max: 0.05, noNaN: true }),
      fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      (centre, sd, seed) => {
        // A deterministic normal sampler: every score is the baseline spec's score on some seed.
        let s = seed >>> 0;
        const uniform = (): number => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) + 0.5) / 2 ** 32;
        const draw = (): number => centre + sd * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
        const standing = taskStanding(baselines(Array.from({ length: BASELINE_SEEDS }, draw), 0.01), [], []);
        // Only the seed changes (every spec the same otherwise): a confirmed spec pays its known score to the others.
        const rows = Array.from({ length: 40 }, (_, i) => row('proposal', { normalized: draw(), stderr: 0.01, spec: { lr: 1, seed: i + 1 } }));
        const confirm = bonusCandidates(rows, standing, []).flatMap((c) =>
          Array.from({ length: CONFIRM_SEEDS }, (_, slot) =>
            row('confirm', { parentId: c.id, slot, normalized: draw(), stderr: 0.01, spec: { lr: 1, seed: 100 + slot } }),
          ),
        );
        const g = rewardGroup(rows, brief, standing, confirm, { groupId: 'g' });
        const bonuses = g.filter((r) => r.bonus > 0).length;
        assert.ok(bonuses <= 2, `${bonuses} of 40 noise draws earned the bonus`);
        const mean = g.reduce((a, r) => a + (r.improvement ?? 0), 0) / g.length;
        assert.ok(Math.abs(mean) < 3 * sd, `mean improvement ${mean} from noise of sd ${sd}`);
      },
    ),
    { seed: 21, numRuns: 200 },
  );
});

test('the baseline spec with another seed is paid exactly the reference: its quality is known', () => {
  const ref = baselines([0.4, 0.6, 0.5, 0.45, 0.55]).map((r, i) => ({ ...r, spec: { lr: 3, seed: 1000 + i } }));
  const standing = taskStanding(ref, [], []);
  const reseeded = [0.9, 0.1].map((normalized, i) => row('proposal', { normalized, spec: { lr: 3, seed: 7 + i } }));
  assert.deepEqual(bonusCandidates(reseeded, standing, []), [], 'nothing to confirm');
  for (const r of rewardGroup(reseeded, brief, standing, [], { groupId: 'g' })) assert.ok(Math.abs(r.reward) < 1e-12, `paid ${r.reward}`);
});

test('a confirmation counts every seed: one good seed in five is paid for five, and five failed seeds are paid as the failure, again and again', () => {
  const standing = taskStanding(baselines([0.18, 0.2, 0.16, 0.18, 0.18]), [], []);
  const unstable = row('proposal', { normalized: 0.544, spec: { lr: 9, seed: 1 } });
  assert.deepEqual(
    bonusCandidates([unstable], standing, []).map((r) => r.id),
    [unstable.id],
  );
  const nan = { status: 'failed' as const, failureKind: 'nan', error: 'the loss became NaN', normalized: null };
  const seeds = (parent: JobRow, scores: (number | null)[]): JobRow[] =>
    scores.map((normalized, slot) =>
      row('confirm', { parentId: parent.id, slot, spec: { lr: 9, seed: 100 + slot }, ...(normalized === null ? nan : { normalized }) }),
    );
  const fourFailed = seeds(unstable, [0.55, null, null, null, null]);
  const [paid] = rewardGroup([unstable], brief, standing, fourFailed, { groupId: 'g' });
  const ref = 0.18;
  const expected = (0.55 + 4 * (ref - 1)) / 5 - ref;
  assert.ok(Math.abs(paid.improvement! - expected) < 1e-9, `paid ${paid.improvement}, expected ${expected}`);
  assert.ok(paid.reward < 0, 'an unstable spec with one good seed is paid as the failures it has');
  assert.equal(paid.bonus, 0);
  assert.deepEqual(
    [paid.detail.confirmation as Record<string, unknown>].map((c) => [c.scored, c.failed, c.complete]),
    [[1, 4, false]],
  );

  const allFailed = seeds(unstable, [null, null, null, null, null]);
  const [none] = rewardGroup([unstable], brief, standing, allFailed, { groupId: 'g' });
  assert.equal(none.reward, -1, 'five failed seeds are five failures, not the lucky single score');
  assert.equal(none.unscorable, null);
  // The same spec again, on another lucky seed: its quality is known (five failures), and it is not confirmed again.
  const later = taskStanding(baselines([0.18, 0.2, 0.16, 0.18, 0.18]), [unstable], allFailed);
  const again = row('proposal', { normalized: 0.6, spec: { lr: 9, seed: 77 } });
  assert.deepEqual(bonusCandidates([again], later, allFailed), []);
  assert.equal(rewardGroup([again], brief, later, allFailed, { groupId: 'g' })[0].reward, -1);
  // ... and whatever its own job did (a NaN of its own is paid the known value too).
  assert.equal(rewardGroup([{ ...again, ...nan }], brief, later, allFailed, { groupId: 'g' })[0].reward, -1);
});

test('a confirmation seed lost to the harness is left out; every seed lost leaves the candidate unscorable, with no advantage', () => {
  const standing = taskStanding(baselines([0.5, 0.52, 0.48, 0.5, 0.5]), [], []);
  const good = row('proposal', { normalized: 0.8, spec: { lr: 2, seed: 1 } });
  const plain = row('proposal', { normalized: 0.4, spec: { lr: 3, seed: 1 } });
  const lost = { status: 'failed' as const, failureKind: 'worker-exit', error: 'the worker thread exited', normalized: null };
  const confirm = [0.8, null, 0.8, 0.8, 0.8].map((n, slot) =>
    row('confirm', { parentId: good.id, slot, spec: { lr: 2, seed: 100 + slot }, ...(n === null ? lost : { normalized: n }) }),
  );
  const [paid] = rewardGroup([good], brief, standing, confirm, { groupId: 'g' });
  assert.ok(Math.abs(paid.improvement! - 0.3) < 1e-9, 'the four seeds that ran');
  assert.equal(paid.bonus, 0, 'an incomplete confirmation earns no bonus');
  const allLost = confirm.map((r) => ({ ...r, ...lost }));
  const g = rewardGroup([good, plain], brief, standing, allLost, { groupId: 'g' });
  assert.match(g[0].unscorable ?? '', /^unscorable: every confirmation seed/);
  assert.equal(g[0].advantage, 0);
  assert.equal(g[1].advantage, 0, "a group of one paid job: the unscorable job moves no other's advantage");
});

test('what is known of a spec is looked up by the validated spec: the baseline written another way, reseeded, is paid exactly the reference', () => {
  const base = getPublicTask('cars-mpg').baseline as Record<string, unknown>;
  const seeds = harnessSeeds('cars-mpg', BASELINE_SEEDS, 'identity');
  const ref = [0.3, 0.35, 0.25, 0.3, 0.3].map((normalized, slot) => row('baseline', { slot, normalized, spec: { ...base, seed: seeds[slot] } }));
  const standing = taskStanding(ref, [], []);
  // The same job: keys in another order, the defaults written out (as validation fills them), a seed of its own.
  const restated = Object.fromEntries(Object.entries({ ...base, seed: 4242 }).reverse());
  const written = { ...restated, reward: { huberDelta: 1, ...(base.reward as object) }, algorithm: { warmupEpochs: 0, ...(base.algorithm as object) } };
  const lucky = row('proposal', { normalized: 0.9, spec: written });
  assert.deepEqual(bonusCandidates([lucky], standing, []), [], 'nothing to confirm');
  const [paid] = rewardGroup([lucky], brief, standing, [], { groupId: 'g' });
  assert.ok(Math.abs(paid.reward) < 1e-12, `paid ${paid.reward}, not its single seed`);
});
