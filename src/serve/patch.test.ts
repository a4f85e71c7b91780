import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RewardService, type ServeConfig } from './service.js';
import { type RunningServer, startServer } from './server.js';
import { JobResponse, PromptResponse, RewardsResponse } from './schemas.js';
import { LocalExecutor } from '../run/local.js';
import { getPublicTask } from '../tasks/briefs.js';
import { patchGrammarSchema } from '../spec/grammar-schema.js';

// The patch form of an answer over a real socket, on a task whose jobs train in a second.
const task = 'iris-species';
const config: ServeConfig = { mode: 'serve', seed: 0, reward: { rule: 'improvement', lambda: 0.5 } };
const executor = new LocalExecutor({ workers: 2 });
let service: RewardService;
let server: RunningServer;

before(async () => {
  service = RewardService.open(mkdtempSync(join(tmpdir(), 'rrl-serve-patch-')), config, executor, { maxQueue: 64 });
  server = await startServer(service, { port: 0 });
});
after(async () => {
  await server.close();
  await service.close();
  await executor.close();
});

test('the patch prompt and the schema forms', async () => {
  const prompt = PromptResponse.parse(await (await fetch(`${server.url}/v1/tasks/${task}/prompt?form=patch`)).json());
  assert.match(prompt.messages[1].content, /JSON merge patch/);
  assert.ok(prompt.example && !('task' in prompt.example), 'the example is a patch');
  const patch = await (await fetch(`${server.url}/v1/tasks/${task}/schema?form=patch`)).json();
  assert.deepEqual(patch, patchGrammarSchema(getPublicTask(task).brief, getPublicTask(task).baseline));
  const spec = (await (await fetch(`${server.url}/v1/tasks/${task}/schema`)).json()) as { properties: Record<string, unknown> };
  assert.ok(spec.properties.task);
  assert.equal((await fetch(`${server.url}/v1/tasks/${task}/schema?form=yaml`)).status, 400);
  assert.equal((await fetch(`${server.url}/v1/tasks/nope/schema`)).status, 404);
});

test('a patch completion is trained and scored; its result carries the patch and unchanged', async () => {
  const edit = { model: { hidden: [16] } };
  const res = await fetch(`${server.url}/v1/rewards`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      task,
      completions: [`Here: ${JSON.stringify(edit)}`, '{"seed": 3}', JSON.stringify(getPublicTask(task).baseline), '{"model": {"hidden": [9999]}}'],
    }),
  });
  assert.equal(res.status, 200);
  const body = RewardsResponse.parse(await res.json());
  const [patched, seedOnly, full, bad] = body.results;
  assert.equal(patched.status, 'succeeded', patched.reason ?? '');
  assert.ok(patched.score && Number.isFinite(patched.score.normalized));
  assert.deepEqual([patched.patch, patched.unchanged], [edit, false]);
  assert.deepEqual([seedOnly.patch, seedOnly.unchanged], [{ seed: 3 }, true]);
  assert.deepEqual([full.patch, full.unchanged], [null, true]);
  assert.equal(bad.status, 'invalid');
  assert.match(bad.reason ?? '', /^the patch over the baseline spec gives an invalid spec: .*model\.hidden/);
  assert.equal(bad.unchanged, false);
  const job = JobResponse.parse(await (await fetch(`${server.url}/v1/jobs/${patched.job}`)).json());
  assert.deepEqual([job.patch, job.unchanged], [edit, false]);
});
