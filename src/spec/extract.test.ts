import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_CANDIDATES, extractJsonObject } from './extract.js';

const spec = { task: 't', budget: { envSteps: 10 }, reward: { expression: 'r > 0 ? 1 : 0' }, note: 'a } and a { in a "string"' };
const text = JSON.stringify(spec);

test('the spec is found alone, in prose, in a code fence and after a <think> block', () => {
  for (const t of [
    text,
    `Here is my job:\n${text}\nGood luck.`,
    `\`\`\`json\n${JSON.stringify(spec, null, 2)}\n\`\`\``,
    `<think>I could use {"task": "other"} or else {broken</think>\n${text}`,
    `{not json} then {"also": broken} and finally ${text}`,
  ]) {
    const r = extractJsonObject(t);
    assert.ok(r.ok, t);
    assert.deepEqual(r.value, spec);
  }
});

test('the first complete object wins; arrays and scalars are not objects', () => {
  const r = extractJsonObject(`[1, 2] 3 {"a": 1} {"b": 2}`);
  assert.ok(r.ok);
  assert.deepEqual(r.value, { a: 1 });
});

test('no object, an unclosed one, or one nested too deep is a one-line reason', () => {
  for (const t of ['', 'plain prose', '{"task": "t", "budget": {', `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`, '{'.repeat(100_000), '<think>{"a": 1}']) {
    const r = extractJsonObject(t);
    if (t === '<think>{"a": 1}') {
      assert.ok(r.ok, 'an unclosed reasoning block leaves the whole text to search');
      continue;
    }
    assert.equal(r.ok, false, t.slice(0, 40));
    if (!r.ok) {
      assert.match(r.error, /JSON object/);
      assert.doesNotMatch(r.error, /\n/);
    }
  }
});

test('only a bounded number of opening braces is tried', () => {
  const r = extractJsonObject(`${'{x '.repeat(MAX_CANDIDATES)}${text}`);
  assert.equal(r.ok, false, 'the spec past the last candidate is not reached');
  const r2 = extractJsonObject(`${'{x '.repeat(MAX_CANDIDATES - 1)}${text}`);
  assert.ok(r2.ok);
});

/** The shared cases (src/spec/extract.cases.json): what the harness extracts from each completion, null for a refusal. */
interface ExtractionCase {
  why: string;
  completion: string;
  extracted: Record<string, unknown> | null;
}

const CASES_FILE = join(resolve(fileURLToPath(import.meta.url), '../../../..'), 'src', 'spec', 'extract.cases.json');

test('the shared extraction cases (read by python/tests/test_extract.py) are what extractJsonObject does', () => {
  const file = JSON.parse(readFileSync(CASES_FILE, 'utf8')) as { $comment: string; cases: ExtractionCase[] };
  const cases = file.cases.map((c) => {
    const r = extractJsonObject(c.completion);
    return { ...c, extracted: r.ok ? r.value : null };
  });
  const write = process.env.RRL_WRITE_CONTRACTS === '1';
  if (write) writeFileSync(CASES_FILE, `${JSON.stringify({ ...file, cases }, null, 2)}\n`);
  assert.ok(cases.length >= 10, `${cases.length} cases`);
  assert.deepEqual(write ? cases : file.cases, cases, `${CASES_FILE}: rerun with RRL_WRITE_CONTRACTS=1 after changing extract.ts, and commit the file`);
});
