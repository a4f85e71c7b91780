/**
 * What starting `rrl` and a job worker loads. mathjs was most of the CPU of every `rrl` process and
 * every worker thread (the suite starts hundreds of each), and vega of every `rrl` process; both are
 * loaded where they are used: mathjs's parser on the first expression, vega when a plot is drawn.
 * The check is of the modules loaded, not of time: a child process records every module that the
 * ES loader and the CommonJS loader took in, and the positive case shows the record sees mathjs.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(fileURLToPath(import.meta.url), '../../../..');
const HEAVY = /\/node_modules\/(mathjs|vega|vega-lite)\//;

// Loaded with --import before anything else: an ES load hook (it runs on the loader's own thread and
// reports through stderr) and, at exit, the CommonJS cache, where a lazy require lands.
const dir = mkdtempSync(join(tmpdir(), 'rrl-startup-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(
  join(dir, 'hook.mjs'),
  `export async function load(url, context, next) { if (${HEAVY}.test(url)) process._rawDebug('LOADED ' + url); return next(url, context); }\n`,
);
const recorder = join(dir, 'recorder.mjs');
writeFileSync(
  recorder,
  [
    "import { register, createRequire } from 'node:module';",
    "register('./hook.mjs', import.meta.url);",
    `process.on('exit', () => { for (const k of Object.keys(createRequire(import.meta.url).cache)) if (${HEAVY}.test(k)) process._rawDebug('LOADED ' + k); });`,
  ].join('\n'),
);

/** The heavy packages a child running `args` loaded, by name. */
function heavyLoaded(args: string[]): string[] {
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(recorder).href, ...args], { encoding: 'utf8', cwd: root });
  assert.equal(r.status, 0, r.stderr);
  return [...new Set([...r.stderr.matchAll(/^LOADED .*?\/node_modules\/([^/]+)\//gm)].map((m) => m[1]))].sort();
}

const built = (path: string): string => pathToFileURL(resolve(root, 'dist/src', path)).href;

test('rrl --help, rrl tasks and a job worker start without mathjs or vega', () => {
  assert.deepEqual(heavyLoaded([resolve(root, 'bin/rrl.js'), '--help']), []);
  assert.deepEqual(heavyLoaded([resolve(root, 'bin/rrl.js'), 'tasks', '--json']), []);
  assert.deepEqual(heavyLoaded(['--input-type=module', '-e', `await import('${built('run/job-worker.js')}');`]), []);
});

test("the first expression loads mathjs's number-only entry, and nothing of vega", () => {
  const script = `const { compileExpression } = await import('${built('inner/expr/expression.js')}'); compileExpression('r + 1', ['r']);`;
  assert.deepEqual(heavyLoaded(['--input-type=module', '-e', script]), ['mathjs']);
});
