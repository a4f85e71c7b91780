/**
 * Property-based tests of validation (fast-check, fixed seeds): 6,000 generated inputs in all,
 * valid, almost valid (one field mutated) and hostile, thrown at `validateSpec` for a control
 * brief (cartpole-balance) and a supervised one (iris-species). Validation never throws; a
 * valid spec passes (unless its generated expression is itself refused, which is then the
 * reason given); every rejection is one line within `MAX_ERROR_CHARS`.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { validateSpec } from '../inner/spec-check.js';
import { checkExpression } from '../inner/expr/expression.js';
import { getPublicTask } from '../tasks/briefs.js';
import { MAX_ERROR_CHARS, PROTOTYPE_KEYS } from './bounds.js';
import { almostValidArb, controlSpecArb, hostileValueArb, notOneLine, supervisedSpecArb } from '../testing/arbitraries.js';
import type { TaskBrief } from './brief.js';

const control = getPublicTask('cartpole-balance').brief;
const supervised = getPublicTask('iris-species').brief;
const RUNS = 1000;

/** Validates `input`; fails the property on a throw or a rejection that is not one short line. */
function check(input: unknown, brief: TaskBrief): { ok: boolean; message: string } {
  const r = validateSpec(input, brief);
  if (r.ok) {
    assert.doesNotThrow(() => JSON.stringify(r.spec));
    assert.ok(validateSpec(JSON.parse(JSON.stringify(r.spec)), brief).ok, 'an accepted spec is accepted again as stored');
    return { ok: true, message: '' };
  }
  const why = notOneLine(r.error.message, MAX_ERROR_CHARS);
  assert.equal(why, null, `rejection message: ${why}: ${r.error.message.slice(0, 200)}`);
  return { ok: false, message: r.error.message };
}

/** The spec's own expression (reward or weight) and whether the compiler refuses it. */
function expressionRefusal(spec: Record<string, any>, brief: TaskBrief): string | null {
  const vars = brief.rewardVariables.map((v) => v.name);
  const e = brief.kind === 'control' ? spec.reward.expression : spec.reward.weight;
  return typeof e === 'string' ? checkExpression(e, vars, brief.kind === 'control' ? {} : { label: 'weight expression' }) : null;
}

for (const [kind, brief, arb] of [
  ['control', control, controlSpecArb(control)],
  ['supervised', supervised, supervisedSpecArb(supervised)],
] as const) {
  test(`validation property (${kind}): ${RUNS} generated valid specs pass, or fail only on their own refused expression`, () => {
    fc.assert(
      fc.property(arb, (spec) => {
        const refused = expressionRefusal(spec, brief);
        const r = check(spec, brief);
        if (refused === null) assert.ok(r.ok, r.message);
        else assert.match(r.message, /^reward\.(expression|weight): /);
      }),
      { numRuns: RUNS, seed: kind === 'control' ? 101 : 102 },
    );
  });

  test(`validation property (${kind}): ${RUNS} generated almost-valid specs (one field mutated) never throw; unknown keys, out-of-range numbers, huge strings and deep values are refused`, () => {
    const seen = new Map<string, number>();
    fc.assert(
      fc.property(almostValidArb(arb), ({ mutation, path, spec }) => {
        seen.set(mutation, (seen.get(mutation) ?? 0) + 1);
        const r = check(spec, brief);
        if (mutation === 'unknown-key' || mutation === 'out-of-range' || mutation === 'huge-string' || mutation === 'deep-nesting') {
          assert.equal(r.ok, false, `${mutation} at ${path.join('.')} was accepted`);
        }
        if (mutation === 'deep-nesting') assert.match(r.message, /nested more than 16 levels deep|unknown field/);
      }),
      { numRuns: RUNS, seed: kind === 'control' ? 201 : 202 },
    );
    assert.equal(seen.size, 6, `every kind of mutation was generated: ${JSON.stringify([...seen])}`);
  });

  test(`validation property (${kind}): ${RUNS} generated hostile values (random JSON, deep, wide, prototype keys, huge numbers, NaN-like strings) are refused in one line`, () => {
    fc.assert(
      fc.property(
        fc.oneof(
          hostileValueArb,
          arb.chain((spec) => hostileValueArb.map((v) => ({ ...spec, environment: { params: { poleLength: v } } }))),
        ),
        (value) => {
          const r = check(value, brief);
          const keys = value !== null && typeof value === 'object' ? Object.keys(value) : [];
          if (keys.some((k) => PROTOTYPE_KEYS.has(k))) assert.equal(r.ok, false, 'a prototype key is refused');
        },
      ),
      { numRuns: RUNS, seed: kind === 'control' ? 301 : 302 },
    );
  });
}
