import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { heldOutSeeds } from '../tasks/secret.js';
import { listTasks } from '../tasks/briefs.js';
import { parseSpec } from '../spec/validate.js';
import { arsSpec } from '../testing/specs.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Every project module reachable by static or dynamic import from `entry` (compiled JS). */
function importClosure(entry: string): Set<string> {
  const seen = new Set<string>();
  const stack = [resolve(entry)];
  while (stack.length) {
    const file = stack.pop()!;
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/(?:import|export)\s*(?:[^'"]*?from\s*)?\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      stack.push(resolve(dirname(file), m[1]));
    }
  }
  return seen;
}

const FORBIDDEN = [
  /[/\\]src[/\\]tasks[/\\](.+[/\\])?evaluate(-[\w-]+)?\.js$/,
  /[/\\]tasks[/\\]hidden\.js$/,
  /[/\\]hidden\.js$/,
  /[/\\]tasks[/\\]secret\.js$/,
  /[/\\]outer[/\\]scoring[/\\]/,
];

test('job code cannot import the hidden evaluation, its seeds or the scorer', () => {
  // The worker, the node side of a cluster job (`rrl job exec`) and the executors that ship jobs.
  for (const [entry, min] of [
    ['job-worker.js', 5],
    ['local.js', 5],
    ['node-job.js', 5],
    ['slurm.js', 5],
    ['slurm-rest.js', 1],
  ] as const) {
    const closure = importClosure(resolve(here, entry));
    assert.ok(closure.size > min, `the import scan found the modules of ${entry}`);
    for (const f of closure) {
      for (const bad of FORBIDDEN) assert.doesNotMatch(f, bad, `${entry} reaches ${f}`);
    }
  }
  const inner = importClosure(resolve(here, '../inner/train.js'));
  for (const f of inner) for (const bad of FORBIDDEN) assert.doesNotMatch(f, bad);
});

test('the scan does see the hidden modules where they are imported', () => {
  const closure = [...importClosure(resolve(here, '../outer/scoring/hidden-score.js'))];
  assert.ok(closure.some((f) => /tasks[/\\]hidden\.js$/.test(f)));
  assert.ok(closure.some((f) => /supervised[/\\]evaluate\.js$/.test(f)));
  assert.ok(closure.some((f) => /tasks[/\\]secret\.js$/.test(f)));
});

test('what a job receives holds no held-out seed, and no spec can name one', () => {
  for (const { brief, baseline } of listTasks()) {
    const seeds = heldOutSeeds(brief.id, 50);
    for (const s of seeds) assert.ok(s >= 2 ** 31, 'held-out seeds live above the spec seed range');
    const payload = JSON.stringify({ spec: baseline, brief });
    for (const s of seeds) assert.ok(!payload.includes(String(s)));
    const r = parseSpec({ ...arsSpec(brief.id), seed: seeds[0] });
    assert.equal(r.ok, false);
  }
});

test('`rrl job exec` on a node loads only the node-side module, not the CLI', () => {
  const launcher = readFileSync(resolve(here, '../../../bin/rrl.js'), 'utf8');
  assert.match(launcher, /process\.argv\[2\] === 'job' && process\.argv\[3\] === 'exec'/);
  assert.match(launcher, /dist\/src\/run\/node-job\.js/);
});
