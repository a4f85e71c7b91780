/**
 * Property-based test of the store (fast-check, fixed seed): 2,000 generated agent proposals —
 * hostile specs and traces (random JSON, deep, wide, cyclic-free prototype keys, huge numbers,
 * NaN-like strings), rejections with hostile error text — go through the loop's guard into
 * `addJobs`, then `finishJob` records hostile outcomes (error text with control characters and
 * Unicode, non-finite and negative costs). Nothing throws, and every row reads back as written
 * (as JSON writes it).
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Store, type JobOutcome } from './store.js';
import { guardProposal } from '../outer/guard.js';
import { MAX_ERROR_CHARS } from '../spec/bounds.js';
import { hostileValueArb, notOneLine } from '../testing/arbitraries.js';

const RUNS = 2000;

/** A value as JSON stores it (undefined and non-finite numbers become null or disappear). */
const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v ?? null));

/** A string as SQLite's UTF-8 keeps it: a lone surrogate becomes U+FFFD. */
const asUtf8 = (s: string): string => Buffer.from(s, 'utf8').toString('utf8');

const errorText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ maxLength: 20 }).map((s) => `${s}\n${s}\r\n\u0000\u2028`),
  fc.integer({ min: 1, max: 300_000 }).map((n) => 'e'.repeat(n)),
);
const cost = fc.option(fc.oneof(fc.double(), fc.integer({ min: -1e9, max: 1e9 }), fc.constantFrom(NaN, Infinity, -Infinity, -0, Number.MAX_VALUE)), {
  nil: undefined,
});

const proposalArb = fc.record(
  {
    spec: fc.oneof(hostileValueArb, fc.constant(null)),
    trace: fc.oneof(hostileValueArb, fc.constant(null)),
    rejected: fc.option(fc.record({ kind: fc.oneof(fc.string({ maxLength: 100 }), fc.constant(undefined)), error: fc.oneof(errorText, hostileValueArb) }), {
      nil: undefined,
    }),
  },
  { requiredKeys: ['spec', 'trace'] },
);

const outcomeArb: fc.Arbitrary<JobOutcome> = fc.record({
  status: fc.constantFrom('succeeded', 'failed', 'invalid'),
  failureKind: fc.option(fc.string({ maxLength: 30 })),
  error: fc.option(errorText),
  envSteps: cost,
  examples: cost,
  wallSeconds: cost,
  cpuSeconds: cost,
  artifactDir: fc.option(fc.string({ maxLength: 200 })),
}) as fc.Arbitrary<JobOutcome>;

test(`store property: ${RUNS} generated hostile proposals and outcomes are stored through the loop's guard and read back as written`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-store-prop-'));
  const store = new Store(dir);
  try {
    store.createRun('run-prop', { hostile: true });
    let slot = 0;
    fc.assert(
      fc.property(proposalArb, outcomeArb, fc.boolean(), (raw, outcome, finish) => {
        const p = guardProposal(raw);
        if (p.rejected) assert.equal(notOneLine(p.rejected.error, MAX_ERROR_CHARS), null, p.rejected.error.slice(0, 100));
        const [id] = store.addJobs('run-prop', [{ round: 0, slot: slot++, task: 'iris-species', kind: 'proposal', agent: 'prop', ...p }]);
        let row = store.job('run-prop', id)!;
        assert.deepEqual(row.spec, asJson(p.spec));
        assert.deepEqual(row.trace, p.trace === null ? null : asJson(p.trace));
        assert.equal(row.status, p.rejected ? 'invalid' : 'pending');
        assert.equal(row.error, p.rejected ? asUtf8(p.rejected.error) : null);
        if (!finish) return;
        store.finishJob(id, outcome);
        row = store.job('run-prop', id)!;
        assert.equal(row.status, outcome.status);
        assert.equal(row.error, outcome.error == null ? null : asUtf8(outcome.error));
        for (const k of ['envSteps', 'examples', 'wallSeconds', 'cpuSeconds'] as const) {
          const v = outcome[k];
          const got = row[k];
          if (v === undefined || v === null || Number.isNaN(v)) assert.equal(got, null, k);
          else assert.ok(Object.is(got, v) || (v === 0 && got === 0), `${k}: wrote ${v}, read ${got}`);
        }
      }),
      { numRuns: RUNS, seed: 501 },
    );
    // Reopened, every row still reads back.
    store.close();
    const again = new Store(dir);
    assert.equal(again.jobs('run-prop').length, RUNS);
    again.close();
  } finally {
    try {
      store.close();
    } catch {
      // already closed
    }
  }
});
