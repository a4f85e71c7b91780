/**
 * The npm package (docs/install.md), end to end: `npm pack --ignore-scripts` of a copy of the
 * repository (its files as git lists them, plus the dist/ this suite compiled; the suite's own dist/ is
 * only read), the tarball's file list checked against what `rrl` reads at run time, the tarball
 * installed into an empty directory with the documented line, and the installed `rrl` run from a
 * directory of its own, away from the repository, as a user runs it on their own CSV with categorical
 * columns and empty cells: `rrl train` (one iteration of two proposals), `rrl export model` and
 * `rrl predict` on new rows.
 *
 * The install resolves the package's dependencies from the registry (npm's cache first: the install
 * adds --prefer-offline to the documented line) and builds better-sqlite3's native module, about two
 * minutes on two cores; so `npm test` skips this file loudly unless RRL_PACKAGE_TEST=1, and `.ci/run`
 * runs it as a step of its own after the suite. Where the registry cannot be reached it says so loudly
 * and skips; with RRL_REQUIRE_REGISTRY=1 (CI) it fails instead.
 */
import test, { type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importGraph } from './testing/import-graph.js';
import { readStore } from './testing/store-view.js';
import { churnTask, customerRows, toCsv, writeTask } from './testing/task-files.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
/** The command that runs this file (`.ci/run` runs it after the suite). */
const ENABLE = 'RRL_PACKAGE_TEST=1 RRL_EVAL_SECRET=1779033703 node --test dist/src/package.test.js';
const skip =
  process.env.RRL_PACKAGE_TEST === '1' ? false : `the npm package test (about 2 min: it installs the tarball and builds better-sqlite3); run: ${ENABLE}`;
if (skip) process.stderr.write(`!! SKIPPED ${skip}\n`);
const tmp = mkdtempSync(join(tmpdir(), 'rrl-package-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

/** Files `rrl` reads from its own folder at run time besides the compiled code, each with its reader. */
const RUNTIME_DATA = [
  'bin/rrl.js',
  'package.json', // cli/commands/serve.ts: the version
  'src/dashboard/static/index.html', // dashboard/server.ts: the page
  'src/dashboard/static/app.js',
  'src/dashboard/static/app.css',
  'priors/controller.json', // outer/agents/prior.ts: the shipped priors
  'priors/controller-families.json',
  'python/rrl_client/corpus/reserved.txt', // tasks/corpus/where.ts: the corpus's exclusion list
  'python/rrl_gym/bridge.py', // inner/envs/gym-bridge.ts: python -m rrl_gym.bridge, PYTHONPATH=<package>/python
  'python/rrl_gym/ppo_continuous.py', // tasks/gymnasium/tasks.ts: the MuJoCo task's command trainer
  'python/rrl_client/optuna_driver.py', // outer/agents/optuna.ts: python -m rrl_client.optuna_driver
];

/** What the tarball must not hold: tests, test helpers and fixtures, source maps, sources, benchmarks, docs, local data. */
const NOT_SHIPPED = [
  /\.test\.js$/,
  /\.map$/,
  /^dist\/src\/(testing|run\/fixtures)\//,
  /^dist\/bench\//,
  /^src\/.*\.ts$/,
  /^(bench|docs|results|examples|corpus|models|runs|node_modules|python\/tests)\//,
  /(^|\/)(\.venv|__pycache__)\//,
];

/** The documented install line (docs/install.md), for the tarball `file`. */
const installLine = (file: string): string => `ONNXRUNTIME_NODE_INSTALL=skip npm install ./${file}`;

/** What a failed install says when the registry (or the cache, offline) could not give it a package. */
const NO_REGISTRY = /\b(ENOTCACHED|EAI_AGAIN|ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH)\b/;

/**
 * The environment of the commands run on the package: this one without npm's variables of the running
 * suite, the Python and corpus it may name, or PATH entries inside the repository; XDG homes of its own.
 */
function outsideEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && !['RRL_PYTHON', 'RRL_CORPUS', 'NODE_PATH', 'INIT_CWD'].includes(k)) env[k] = v;
  env.PATH = (env.PATH ?? '')
    .split(delimiter)
    .filter((p) => p && !`${resolve(p)}/`.startsWith(`${root}/`))
    .join(delimiter);
  return { ...env, XDG_CACHE_HOME: join(tmp, 'xdg-cache'), XDG_CONFIG_HOME: join(tmp, 'xdg-config'), ...extra };
}

/** Runs `cmd args` in `cwd` (outside the repository); its status, stdout and stderr. */
function run(cmd: string, args: string[], cwd: string, env = outsideEnv(), timeoutMs = 600_000): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 << 20 });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  return r;
}

/** The compiled files `rrl` loads: bin/rrl.js's entries and the worker files they start, through the import graph. */
function runtimeCode(): string[] {
  const graph = importGraph(root);
  const bin = readFileSync(join(root, 'bin', 'rrl.js'), 'utf8');
  const todo = [...bin.matchAll(/'\.\.\/dist\/(src\/[\w/.-]+)\.js'/g)].map((m) => `${m[1]}.ts`);
  assert.ok(todo.length >= 2, 'bin/rrl.js names its entries in dist/src');
  const seen = new Set<string>();
  while (todo.length) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    todo.push(...(graph.get(file) ?? []));
    const text = readFileSync(join(root, file), 'utf8');
    for (const m of text.matchAll(/new URL\('(\.\/[\w.-]+)\.js', import\.meta\.url\)/g)) todo.push(posix.join(posix.dirname(file), `${m[1]}.ts`));
  }
  return [...seen].map((f) => `dist/${f.replace(/\.ts$/, '.js')}`).sort();
}

/** A copy of the repository in `dir`: the files git tracks (and untracked ones it does not ignore), and dist/. */
function copyRepository(dir: string): void {
  const listed = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], root).stdout.split('\0');
  for (const f of listed.filter((f) => f && existsSync(join(root, f)))) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    copyFileSync(join(root, f), join(dir, f));
  }
  cpSync(join(root, 'dist'), join(dir, 'dist'), { recursive: true });
}

/** What the steps hand on: the tarball, the installed package's directory, the directory `rrl train` ran in. */
const state: { tarball?: string; app?: string; work?: string } = {};

test('npm pack --ignore-scripts of a copy holds what rrl needs at run time, and nothing of the tests, the sources or local data', { skip }, () => {
  const copy = join(tmp, 'copy');
  copyRepository(copy);
  const r = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], copy);
  assert.equal(r.status, 0, `npm pack failed:\n${r.stderr}`);
  const [packed] = JSON.parse(r.stdout) as { filename: string; size: number; unpackedSize: number; entryCount: number; files: { path: string }[] }[];
  const files = new Set(packed.files.map((f) => f.path));
  const code = runtimeCode();
  assert.ok(code.length > 100, `${code.length} compiled files reachable from bin/rrl.js`);
  const missing = [...RUNTIME_DATA, ...code].filter((f) => !files.has(f));
  assert.deepEqual(missing, [], 'files rrl reads at run time are missing from the tarball (package.json "files")');
  const extra = [...files].filter((f) => NOT_SHIPPED.some((re) => re.test(f)));
  assert.deepEqual(extra, [], 'the tarball holds files it should not (package.json "files")');
  console.log(`${packed.filename}: ${packed.entryCount} files, ${packed.size} bytes packed, ${packed.unpackedSize} unpacked`);
  state.tarball = join(tmp, packed.filename);
});

test('the tarball installs into an empty directory with the documented line (docs/install.md)', { skip }, (t: TestContext) => {
  if (!state.tarball) {
    t.skip('no tarball (the step before failed)');
    return;
  }
  const file = posix.basename(state.tarball);
  assert.ok(readFileSync(join(root, 'docs', 'install.md'), 'utf8').includes(installLine(file)), `docs/install.md shows \`${installLine(file)}\``);
  const app = join(tmp, 'app');
  mkdirSync(app);
  copyFileSync(state.tarball, join(app, file));
  // The documented line, plus npm's cache first and no audit or funding requests.
  const r = run('npm', ['install', `./${file}`, '--prefer-offline', '--no-audit', '--no-fund'], app, outsideEnv({ ONNXRUNTIME_NODE_INSTALL: 'skip' }));
  if (r.status !== 0 && NO_REGISTRY.test(r.stderr) && process.env.RRL_REQUIRE_REGISTRY !== '1') {
    const why = r.stderr.match(NO_REGISTRY)?.[0];
    process.stderr.write(`!! SKIPPED the installed package: npm could not reach the registry (${why}); the install needs it or a filled cache\n`);
    t.skip(`no registry (${why})`);
    return;
  }
  assert.equal(r.status, 0, `npm install of the tarball failed:\n${r.stderr}`);
  const bin = join(app, 'node_modules', '.bin', 'rrl');
  assert.ok(realpathSync(bin).startsWith(realpathSync(join(app, 'node_modules', 'recursive-rl'))), `${bin} is the installed package's`);
  state.app = app;
});

test('the installed rrl trains on a user CSV from a directory of its own: rrl train, 1 iteration × 2 proposals, a run with scores', {
  skip,
}, (t: TestContext) => {
  if (!state.app) {
    t.skip('no installed package (a step before failed or skipped)');
    return;
  }
  const work = join(tmp, 'work');
  mkdirSync(join(work, 'tasks'), { recursive: true });
  writeFileSync(join(work, 'tasks', 'customers.csv'), toCsv(customerRows(300)));
  writeTask(join(work, 'tasks'), 'churn.json', churnTask('customers.csv'));
  // ./tasks is the default task directory.
  const args = ['train', '--tasks', 'own-churn', '--iterations', '1', '--group', '2', '--workers', '1', '--run', 'run', '--json'];
  const r = run(join(state.app, 'node_modules', '.bin', 'rrl'), args, work);
  assert.equal(r.status, 0, `rrl train failed:\n${r.stderr}`);
  const summary = JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as { jobs: number; dir: string; iterations: { meanNormalized: number }[] };
  assert.equal(summary.jobs, 2);
  assert.equal(summary.dir, join(realpathSync(work), 'run'), 'the run is in the work directory');
  assert.equal(summary.iterations.length, 1);
  assert.ok(Number.isFinite(summary.iterations[0].meanNormalized), 'the iteration has a mean normalised score');
  const proposals = readStore(summary.dir).jobs.filter((j) => j.kind === 'proposal');
  assert.equal(proposals.length, 2);
  for (const j of proposals) assert.ok(j.status === 'succeeded' && Number.isFinite(j.normalized), `job ${j.id}: ${j.status}, score ${j.normalized}`);
  state.work = work;
});

test('the installed rrl exports the run’s model and predicts on new rows with unseen levels and empty cells', { skip }, (t: TestContext) => {
  if (!state.app || !state.work) {
    t.skip('no run (a step before failed or skipped)');
    return;
  }
  const rrl = join(state.app, 'node_modules', '.bin', 'rrl');
  const exp = run(rrl, ['export', 'model', 'run', '--out', 'model'], state.work);
  assert.equal(exp.status, 0, `rrl export model failed:\n${exp.stderr}`);
  assert.match(exp.stderr, /own-churn: job \d+ exported to /);
  const card = JSON.parse(readFileSync(join(state.work, 'model', 'card.json'), 'utf8')) as { versions: Record<string, string> };
  assert.ok(card.versions['onnxruntime-node'], 'the card names the runtime the package installed');
  const fresh = [...customerRows(20, 500), { 'Plan Type': 'enterprise', region: '', tenure: '', spend: 55 }];
  writeFileSync(join(state.work, 'new.csv'), toCsv(fresh));
  const pred = run(rrl, ['predict', 'model', '--data', 'new.csv'], state.work);
  assert.equal(pred.status, 0, `rrl predict failed:\n${pred.stderr}`);
  const lines = pred.stdout.trim().split('\n');
  assert.equal(lines[0], 'label,p(no),p(yes)');
  assert.equal(lines.length - 1, fresh.length, 'a prediction per row');
});
