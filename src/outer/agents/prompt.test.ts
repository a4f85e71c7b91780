import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listTasks, getPublicTask } from '../../tasks/briefs.js';
import { heldOutSeeds } from '../../tasks/secret.js';
import { jobSpecJsonSchema } from '../../spec/schema.js';
import { buildPrompt, compactExample, describeSpecFields } from './prompt.js';
import { validateSpec } from '../../inner/spec-check.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Every `description` in a JSON Schema. */
function descriptions(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => descriptions(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'description' && typeof v === 'string') out.push(v);
      else descriptions(v, out);
    }
  }
  return out;
}

test('the prompt holds the role, the brief, the whole catalog and every field of the schema, for every task', () => {
  const fields = describeSpecFields();
  for (const { brief } of listTasks()) {
    const [system, user] = buildPrompt(brief);
    assert.equal(system.role, 'system');
    assert.match(system.content, /trainer agent/);
    assert.match(system.content, /Reply with exactly one JSON object/);
    assert.equal(user.role, 'user');
    const text = user.content;
    assert.ok(text.includes(brief.description));
    assert.ok(text.includes(brief.metric));
    assert.ok(text.includes(`Write the job spec for task "${brief.id}"`));
    for (const a of brief.algorithms) assert.match(text, new RegExp(`algorithm\\.name: one of .*\\b${a}\\b`));
    for (const p of brief.environment.params) assert.ok(text.includes(`${p.name}: ${p.description}; default ${p.default}; range [${p.min}, ${p.max}]`));
    for (const v of brief.rewardVariables) assert.ok(text.includes(`${v.name}: ${v.description}`));
    for (const d of brief.demonstrations) assert.ok(text.includes(`${d.id}: ${d.description}`));
    for (const s of brief.supervised?.sources ?? []) assert.ok(text.includes(`${s.id} (${s.examples} examples): ${s.description}`));
    const cap = brief.kind === 'control' ? brief.budget.maxEnvSteps : brief.budget.maxExamples;
    assert.ok(text.includes(`at most ${cap}`));
    assert.ok(text.includes(fields));
    assert.doesNotMatch(text, /# History/);
  }
  for (const d of descriptions(jobSpecJsonSchema())) assert.ok(fields.includes(d), `the field list has "${d}"`);
  assert.match(fields, /^- algorithm\.learningRate \(number 0\.000001\.\.0\.1\): Adam learning rate$/m);
  assert.match(fields, /^- dataset\.sources\[\]\.id \(string at most 64 characters\): id of a source/m);
});

test('the prompt never holds a held-out seed, and the agent modules cannot import the hidden evaluation', () => {
  for (const { brief } of listTasks()) {
    const text = JSON.stringify(buildPrompt(brief));
    for (const s of heldOutSeeds(brief.id, 50)) assert.ok(!text.includes(String(s)));
  }
  const forbidden = [
    /[/\\]tasks[/\\]hidden\.js$/,
    /[/\\]src[/\\]tasks[/\\](.+[/\\])?evaluate(-[\w-]+)?\.js$/,
    /[/\\]tasks[/\\]secret\.js$/,
    /[/\\]outer[/\\]scoring[/\\]/,
    /[/\\]reference-specs\.js$/,
  ];
  for (const entry of ['prompt.js', 'llm/agent.js']) {
    const seen = new Set<string>();
    const stack = [resolve(here, entry)];
    while (stack.length) {
      const file = stack.pop()!;
      if (seen.has(file) || !existsSync(file)) continue;
      seen.add(file);
      for (const m of readFileSync(file, 'utf8').matchAll(/(?:import|export)\s*(?:[^'"]*?from\s*)?\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g))
        stack.push(resolve(dirname(file), m[1]));
    }
    assert.ok(seen.size > 3, `the import scan found ${entry}'s modules`);
    for (const f of seen) for (const bad of forbidden) assert.doesNotMatch(f, bad, `${entry} reaches ${f}`);
  }
});

test('history: the best earlier jobs by reward, best last, with why a job failed; limited and selectable', () => {
  const brief = getPublicTask('cartpole-balance').brief;
  const history = [
    { spec: { seed: 1 }, reward: 0.1, status: 'succeeded', error: null },
    { spec: 'I need the test set', reward: -1, status: 'invalid', error: 'the reply is not JSON (Unexpected token)' },
    { spec: { seed: 3 }, reward: 0.9, status: 'succeeded', error: null },
    { spec: { seed: 4 }, reward: null },
  ];
  const text = buildPrompt(brief, { history, historyLimit: 2 })[1].content;
  assert.match(
    text,
    /# History\nYour earlier jobs on this task \(2 of 3, sorted by reward, best last\):\n1\. reward 0\.100\n {3}\{"seed":1\}\n2\. reward 0\.900\n {3}\{"seed":3\}\nWrite a job that earns a higher reward/,
  );
  const all = buildPrompt(brief, { history, historyLimit: 10 })[1].content;
  assert.match(all, /1\. reward -1\.000; invalid: the reply is not JSON \(Unexpected token\)\n {3}\(not a spec\) "I need the test set"/);
  assert.doesNotMatch(buildPrompt(brief, { history, historyLimit: 0 })[1].content, /# History/);
});

test('the compact example is the baseline without the empty fields its defaults fill in, the same job, and is what the compact prompt shows', () => {
  for (const { brief } of listTasks()) {
    const baseline = getPublicTask(brief.id).baseline;
    const lean = compactExample(baseline, brief);
    const full = validateSpec(baseline, brief);
    const parsed = validateSpec(lean, brief);
    assert.ok(full.ok && parsed.ok, brief.id);
    assert.deepEqual(parsed.spec, full.spec, `${brief.id}: the compact example is the same job`);
    // Every empty value left is one the job needs: without it the spec is another job or invalid.
    for (const [section, fields] of Object.entries(lean as Record<string, unknown>)) {
      if (fields === null || typeof fields !== 'object') continue;
      for (const [k, v] of Object.entries(fields)) {
        if (!(v === null || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && Object.keys(v).length === 0))) continue;
        const without = structuredClone(lean) as Record<string, Record<string, unknown>>;
        delete without[section][k];
        const r = validateSpec(without, brief);
        assert.ok(!r.ok || JSON.stringify(r.spec) !== JSON.stringify(full.spec), `${brief.id}: ${section}.${k} is empty and not needed`);
      }
    }
    const messages = buildPrompt(brief, { compact: true, example: baseline });
    assert.ok(messages[1].content.includes(JSON.stringify(lean)), brief.id);
  }
});
