import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { type HeldoutFile, TABLE_MARKERS, llmTable, llmTableMarkdown, parsePair, parseTerm, replaceTable, termByTask } from './llm-table.js';
import { pairedDifference } from '../util/paired-difference.js';

/** An evaluation of `tasks` whose arm `arm` has, per seed, the cells `values[seed][i]` for task i. */
function evaluation(tasks: string[], arms: Record<string, (number | null)[][]>, metric = 'greedy_confirmed'): HeldoutFile {
  return {
    tasks,
    arms: Object.fromEntries(
      Object.entries(arms).map(([arm, seeds]) => [
        arm,
        { per_seed: Object.fromEntries(seeds.map((vs, s) => [String(s + 1), Object.fromEntries(tasks.map((t, i) => [t, { [metric]: vs[i] }]))])) },
      ]),
    ),
  };
}

test('terms: arms joined by +, the metric after a colon (greedy_confirmed by default); a malformed one is an error naming the form', () => {
  assert.deepEqual(parseTerm('s1/grpo+s2/grpo:best_4'), {
    text: 's1/grpo+s2/grpo:best_4',
    arms: [
      { label: 's1', arm: 'grpo' },
      { label: 's2', arm: 'grpo' },
    ],
    metric: 'best_4',
  });
  assert.equal(parseTerm('a/sft').metric, 'greedy_confirmed');
  assert.deepEqual(parseTerm('m/transfer: optuna TPE seeded:best_16').arms, [{ label: 'm', arm: 'transfer: optuna TPE seeded' }]);
  assert.equal(parseTerm('m/transfer: optuna TPE seeded:best_16').metric, 'best_16');
  assert.deepEqual(parseTerm('m/transfer: controller'), {
    text: 'm/transfer: controller',
    arms: [{ label: 'm', arm: 'transfer: controller' }],
    metric: 'greedy_confirmed',
  });
  assert.throws(() => parseTerm('a/sft:'), /expected LABEL\/ARM/);
  assert.throws(() => parseTerm('sft'), /expected LABEL\/ARM/);
  assert.throws(() => parsePair('a/x-a/y'), /spaces around the minus/);
});

test("a term's value per task is the mean over its arms' seeds of the cells that have one", () => {
  const files = {
    s1: evaluation(['t1', 't2'], {
      grpo: [
        [0.2, null],
        [0.4, 0.5],
      ],
    }),
    s2: evaluation(['t1', 't2'], { grpo: [[0.6, 0.7]] }),
  };
  const v = termByTask(parseTerm('s1/grpo+s2/grpo'), files, ['t1', 't2']);
  assert.ok(Math.abs(v[0]! - 0.4) < 1e-12 && Math.abs(v[1]! - 0.6) < 1e-12, String(v));
  assert.throws(() => termByTask(parseTerm('s3/grpo'), files, ['t1']), /no evaluation labelled "s3"/);
  assert.throws(() => termByTask(parseTerm('s1/sft'), files, ['t1']), /has no arm "sft"; arms: grpo/);
});

test('a comparison is the paired difference by task over the tasks every evaluation holds, with its interval and verdict', () => {
  const tasks = ['t1', 't2', 't3', 't4'];
  const files = {
    a: evaluation([...tasks, 'only-here'], { grpo: [[0.5, 0.6, 0.7, 0.8, 0.9]], sft: [[0.4, 0.5, 0.55, 0.7, 0.1]] }),
    b: evaluation(tasks, { base: [[0.1, 0.2, 0.3, 0.2]] }),
  };
  const t = llmTable(files, ['a/grpo - a/sft', 'a/sft - b/base'], ['b/base']);
  assert.deepEqual(t.tasks, tasks);
  assert.deepEqual(t.pairs[0].difference, pairedDifference([0.5, 0.6, 0.7, 0.8], [0.4, 0.5, 0.55, 0.7]));
  assert.equal(t.pairs[0].verdict, 'above');
  assert.deepEqual(
    t.terms.map((r) => r.term),
    ['b/base', 'a/grpo', 'a/sft'],
  );
  const md = llmTableMarkdown(t);
  assert.match(md, /\| `a\/grpo − a\/sft` \| \+0\.11\d \[\+0\.\d{3}, \+0\.\d{3}\] \| 4 \| above \|/);
  assert.match(md, /Over 4 tasks/);
});

test('property: a term compared with itself differs by 0 and is judged level', () => {
  fc.assert(
    fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 2, maxLength: 12 }), (xs) => {
      const tasks = xs.map((_, i) => `t${i}`);
      const t = llmTable({ e: evaluation(tasks, { m: [xs] }) }, ['e/m - e/m']);
      assert.equal(t.pairs[0].difference?.mean, 0);
      assert.equal(t.pairs[0].verdict, 'level');
    }),
  );
});

test('the table replaces the text between its markers, and a document without them is an error', () => {
  const doc = `# Title\n\n${TABLE_MARKERS.begin}\nold table\n${TABLE_MARKERS.end}\n\nafter\n`;
  assert.equal(replaceTable(doc, 'new\n'), `# Title\n\n${TABLE_MARKERS.begin}\nnew\n${TABLE_MARKERS.end}\n\nafter\n`);
  assert.throws(() => replaceTable('# no markers', 'x'), /has no <!-- llm-table:begin -->/);
});
