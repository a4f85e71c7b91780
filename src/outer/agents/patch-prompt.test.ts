import test from 'node:test';
import fc from 'fast-check';
import { DATA_CLOSE, DATA_OPEN } from '../../tasks/untrusted.js';
import assert from 'node:assert/strict';
import { listTasks } from '../../tasks/briefs.js';
import { validateSpec } from '../../inner/spec-check.js';
import { applyMergePatch } from '../../spec/patch.js';
import { isUnchanged } from '../answer.js';
import { buildPrompt } from './prompt.js';
import { DOC_CHARS, VARIABLE_CHARS, cutText, examplePatch, roundTurn } from './patch-prompt.js';

test('the patch prompt of every task is at most 1400 characters beside its documentation and variables, and shows the current job', () => {
  for (const { brief, baseline } of listTasks()) {
    const messages = buildPrompt(brief, { patch: true, example: baseline });
    const chars = messages.reduce((n, m) => n + m.content.length, 0);
    assert.ok(chars <= 1400 + DOC_CHARS + VARIABLE_CHARS, `${brief.id}: ${chars} characters`);
    const user = messages[1].content;
    assert.match(user, /The current training job:\n\{"task":/, brief.id);
    assert.match(user, /JSON merge patch/, brief.id);
    assert.ok(user.includes(brief.title), brief.id);
    assert.ok(user.includes(cutText(brief.description, DOC_CHARS)), `${brief.id}: the documentation within its budget`);
    if (brief.kind === 'supervised') for (const s of brief.supervised?.sources ?? []) assert.ok(user.includes(`  ${s.id} (`), `${brief.id}: ${s.id}`);
    else for (const p of brief.environment.params) assert.ok(user.includes(`  ${p.name}: `), `${brief.id}: ${p.name}`);
  }
});

test("every task's example patch is shown, valid over its baseline and changes the job", () => {
  for (const { brief, baseline } of listTasks()) {
    const patch = examplePatch(brief, baseline);
    assert.ok(patch && Object.keys(patch).length, brief.id);
    const spec = applyMergePatch(baseline, patch);
    assert.equal(validateSpec(spec, brief).ok, true, brief.id);
    assert.equal(isUnchanged(spec, brief, baseline), false, brief.id);
    assert.ok(buildPrompt(brief, { patch: true, example: baseline })[1].content.includes(`Example: ${JSON.stringify(patch)}`), brief.id);
  }
});

test('without documentation (docChars 0) the prompt keeps the id, the variables by name and kind, the metric and the caps, and drops the title and description', () => {
  for (const { brief, baseline } of listTasks()) {
    const user = buildPrompt(brief, { patch: true, example: baseline, docChars: 0 })[1].content;
    assert.ok(user.startsWith(`Task "${brief.id}".`), brief.id);
    assert.ok(!user.includes(brief.title), `${brief.id}: no title`);
    assert.ok(!user.includes(brief.description.slice(0, 40)), `${brief.id}: no description`);
    for (const f of brief.supervised?.features.slice(0, 3) ?? []) assert.ok(user.includes(f.name), `${brief.id}: ${f.name}`);
    assert.match(user, /Scored by: /, brief.id);
    assert.match(user, brief.kind === 'control' ? /budget\.envSteps: at most/ : /budget\.examples: at most/, brief.id);
  }
});

test('property: cutText keeps at most max characters and closes an open data quote', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 400 }), fc.integer({ min: 3, max: 300 }), (body, max) => {
      const text = `head ${DATA_OPEN}${body}${DATA_CLOSE}`;
      const cut = cutText(text, max);
      assert.ok([...cut].length <= max, `${[...cut].length} > ${max}`);
      const opens = (cut.match(/⟪/g) ?? []).length;
      const closes = (cut.match(/⟫/g) ?? []).length;
      if (!body.includes(DATA_OPEN) && !body.includes(DATA_CLOSE)) assert.ok(closes >= opens, cut);
    }),
  );
});

test('roundTurn shows what a practitioner sees of the job, the job the next patch applies to, and how many are left', () => {
  const seen = {
    submission: 2,
    status: 'failed' as const,
    reason: 'the job ran out of time\nafter 120 s',
    unchanged: false,
    cost: { envSteps: null, examples: 20_000, wallSeconds: 3.25 },
    validation: { name: 'val/accuracy', value: 0.812345 },
  };
  const turn = roundTurn(seen, { task: 't', seed: 1 }, 2);
  assert.equal(
    turn,
    'Job 2: failed; the job ran out of time after 120 s; val/accuracy 0.8123 on its own validation data; cost 20000 examples, 3.3 s.\n' +
      'The current training job (your last valid one):\n{"task":"t","seed":1}\n' +
      'Reply with a JSON merge patch of the current job: only the fields to change. 2 jobs left. JSON only.',
  );
  assert.equal(
    roundTurn({ ...seen, status: 'succeeded', reason: null, validation: null }, {}, 0),
    'Job 2: succeeded; cost 20000 examples, 3.3 s.\nNo jobs left in this episode.',
  );
});

test("a wide table's variables are listed by name and kind up to the line's budget, then counted", () => {
  const { brief, baseline } = listTasks().find((t) => t.brief.kind === 'supervised')!;
  const features = Array.from({ length: 60 }, (_, i) => ({ name: `variable_${i}`, description: `meaning ${i}` }));
  const columns = features.map((f, i) =>
    i % 3 ? { name: f.name, kind: 'numeric' as const, missing: 0.25 } : { name: f.name, kind: 'categorical' as const, levels: 4, missing: 0 },
  );
  const wide = { ...brief, supervised: { ...brief.supervised!, features, columns } };
  const line = buildPrompt(wide, { patch: true, example: baseline })[1]
    .content.split('\n')
    .find((l) => l.startsWith('Predict '))!;
  assert.ok(line.length <= VARIABLE_CHARS, `${line.length} characters`);
  assert.match(line, /from 60 variables: variable_0 \(categorical, 4 levels\), variable_1 \(numeric, 25% missing\), /);
  const shown = line.match(/variable_\d+/g)!.length;
  assert.ok(line.endsWith(` … and ${60 - shown} more`), line);
  assert.ok(!line.includes('meaning'), 'names and kinds only, never the meanings');
});
