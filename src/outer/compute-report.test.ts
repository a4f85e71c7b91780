import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { JobRow } from '../store/store.js';
import { jobRow } from '../testing/job-row.js';
import { computeReport } from './compute-report.js';
import { CONFIRM_SEEDS } from './noise.js';

/** A finished job row of task `t`. */
const row = (kind: JobRow['kind'], o: Partial<JobRow> = {}): JobRow => jobRow(kind, { task: 't', stderr: 0.01, ...o });

/** A run's rows: five baselines at `ref`, one proposal per single score, confirmations of some. */
function run(ref: number, singles: number[], confirmed: Map<number, number[]>): JobRow[] {
  const rows = [0, 1, 2, 3, 4].map((slot) => row('baseline', { slot, normalized: ref, spec: { seed: 100 + slot } }));
  singles.forEach((normalized, i) => {
    const p = row('proposal', { slot: i, normalized, spec: { seed: 1, lr: i } });
    rows.push(p);
    for (const [k, v] of (confirmed.get(i) ?? []).entries())
      rows.push(row('confirm', { slot: k, parentId: p.id, normalized: v, spec: { seed: 200 + k, lr: i } }));
  });
  return rows;
}

const score = fc.double({ min: -1, max: 1, noNaN: true });

test('the confirmed gain is the best confirmed mean over the reference; lucky single scores never raise it', () => {
  fc.assert(
    fc.property(
      score,
      fc.array(score, { minLength: 1, maxLength: 8 }),
      fc.array(fc.array(score, { minLength: CONFIRM_SEEDS, maxLength: CONFIRM_SEEDS }), { maxLength: 3 }),
      fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 5 }),
      (ref, singles, seeds, luck) => {
        const confirmed = new Map(seeds.map((s, i) => [i % singles.length, s] as const));
        const report = computeReport(run(ref, singles, confirmed));
        const means = [...confirmed.values()].map((s) => s.reduce((a, b) => a + b, 0) / s.length);
        const expected = Math.max(ref, ...means) - ref;
        assert.ok(Math.abs((report.confirmedGain as number) - expected) < 1e-9);
        assert.ok((report.confirmedGain as number) >= 0);
        // More proposals, each with a lucky single score and no confirmation: the best single
        // score (and the gain) may rise, the confirmed gain does not move.
        const lucky = computeReport(run(ref, [...singles, ...luck.map((l) => Math.max(...singles) + l)], confirmed));
        assert.ok((lucky.gain as number) >= (report.gain as number) - 1e-12);
        assert.equal(lucky.confirmedGain, report.confirmedGain);
      },
    ),
  );
});

test('a run that confirmed nothing has a confirmed gain of 0, and no compute per unit of it', () => {
  const report = computeReport(run(0.2, [0.5, 0.7], new Map()));
  assert.ok(Math.abs((report.gain as number) - 0.5) < 1e-12);
  assert.equal(report.confirmedGain, 0);
  assert.deepEqual(report.perConfirmedGain, { envSteps: null, examples: null, cpuSeconds: null });
  assert.equal(report.perGain.examples, 2000 / (report.gain as number));
});
