import test from 'node:test';
import assert from 'node:assert/strict';
import { listTasks } from '../../tasks/briefs.js';
import { validateSpec } from '../../inner/spec-check.js';
import { applyMergePatch } from '../../spec/patch.js';
import { isUnchanged } from '../answer.js';
import { buildPrompt } from './prompt.js';
import { examplePatch } from './patch-prompt.js';

test('the patch prompt of every task is at most 1400 characters (about 350 tokens) and shows the current job', () => {
  for (const { brief, baseline } of listTasks()) {
    const messages = buildPrompt(brief, { patch: true, example: baseline });
    const chars = messages.reduce((n, m) => n + m.content.length, 0);
    assert.ok(chars <= 1400, `${brief.id}: ${chars} characters`);
    const user = messages[1].content;
    assert.match(user, /The current training job:\n\{"task":/, brief.id);
    assert.match(user, /JSON merge patch/, brief.id);
    assert.ok(user.includes(brief.title), brief.id);
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
