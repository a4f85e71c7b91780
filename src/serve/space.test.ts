import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RewardService } from './service.js';
import { startServer } from './server.js';
import { LocalExecutor } from '../run/local.js';
import { getPublicTask } from '../tasks/briefs.js';
import { describeSpace } from '../outer/agents/space.js';

test("GET /v1/tasks/{id}/space publishes the task's design space as the agents derive it; an unknown task is 404", async () => {
  const executor = new LocalExecutor({ workers: 1 });
  const service = RewardService.open(
    mkdtempSync(join(tmpdir(), 'rrl-space-')),
    { mode: 'serve', seed: 0, reward: { rule: 'improvement', lambda: 0.5 } },
    executor,
  );
  const server = await startServer(service, { port: 0 });
  try {
    const res = await fetch(`${server.url}/v1/tasks/cartpole-short/space`);
    assert.equal(res.status, 200);
    const { brief, baseline } = getPublicTask('cartpole-short');
    assert.deepEqual(await res.json(), JSON.parse(JSON.stringify(describeSpace(brief, baseline))));
    assert.equal((await fetch(`${server.url}/v1/tasks/nope/space`)).status, 404);
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    assert.ok(doc.paths['/v1/tasks/{id}/space']);
  } finally {
    await server.close();
    await service.close();
    await executor.close();
  }
});
