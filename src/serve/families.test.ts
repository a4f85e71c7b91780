import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RewardService, type ServeConfig } from './service.js';
import { LocalExecutor } from '../run/local.js';
import { clearExtraTasks } from '../tasks/extra.js';
import { generateFamilyTasks } from '../tasks/families/index.js';

// `rrl serve --family`: drawn family tasks are served beside the built-in ones, with their family's
// split, and a resumed run serves the same draws again (they are stored with the run).
test('a serve run registers its family draws, and again on resume', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-serve-families-'));
  const config: ServeConfig = { mode: 'serve', seed: 0, reward: { rule: 'improvement', lambda: 0.5 }, families: [{ family: 'rings', count: 2, seed: 1 }] };
  const ids = generateFamilyTasks('rings', 2, 1).map((t) => t.def.id);
  assert.deepEqual(ids, ['rings-fam-1-0', 'rings-fam-1-1']);
  for (const stored of [config, null]) {
    clearExtraTasks(); // a fresh process knows only the built-in tasks
    const executor = new LocalExecutor({ workers: 1 });
    const service = RewardService.open(dir, stored, executor);
    try {
      const rows = service.tasks().filter((t) => ids.includes(t.id));
      assert.deepEqual(
        rows.map((r) => [r.id, r.family, r.split]),
        ids.map((id) => [id, 'rings-fam', 'held-out']),
      );
      assert.ok(service.prompt(ids[0], 'patch').messages.length > 0);
      assert.equal((service.schema(ids[1], 'patch') as { type: string }).type, 'object');
    } finally {
      await service.close();
      await executor.close();
    }
  }
  clearExtraTasks();
});
