import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { arsSpec } from '../testing/specs.js';
import { getPublicTask } from '../tasks/briefs.js';
import { NoiseStore } from '../store/noise.js';
import { engineIdentity } from '../store/cache.js';
import { evalIdentity } from '../tasks/secret.js';

const bin = resolve(fileURLToPath(import.meta.url), '../../../../bin/rrl.js');
const tmp = mkdtempSync(join(tmpdir(), 'rrl-cli-'));

function rrl(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: tmp });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('rrl tasks --json lists every task with its labels', () => {
  const r = rrl('tasks', '--json');
  assert.equal(r.code, 0);
  const tasks = JSON.parse(r.stdout);
  assert.ok(tasks.some((t: { id: string }) => t.id === 'cartpole-balance'));
  for (const t of tasks) {
    assert.deepEqual(Object.keys(t).sort(), ['data', 'family', 'id', 'kind', 'noise', 'split']);
    assert.ok(t.noise === null || (typeof t.noise.seeds === 'number' && typeof t.noise.evalSe === 'number'), JSON.stringify(t.noise));
    assert.ok(['control', 'supervised'].includes(t.kind));
    assert.ok(['train', 'held-out', 'example'].includes(t.split));
  }
});

test('rrl spec --json-schema prints the JSON Schema', () => {
  const r = rrl('spec', '--json-schema');
  assert.equal(r.code, 0);
  const schema = JSON.parse(r.stdout);
  assert.equal(schema.type, 'object');
  assert.deepEqual(Object.keys(schema.properties).sort(), ['algorithm', 'budget', 'dataset', 'environment', 'model', 'reward', 'seed', 'task']);
});

test('rrl job baseline prints a spec that rrl job run accepts; unknown tasks are named', () => {
  const r = rrl('job', 'baseline', 'cartpole-balance');
  assert.equal(r.code, 0);
  assert.equal(JSON.parse(r.stdout).task, 'cartpole-balance');
  const bad = rrl('job', 'baseline', 'no-such-task');
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /unknown task "no-such-task"; known tasks: cartpole-balance/);
});

test('a task drawn from a family is named by its id alone: rrl job baseline prints it and rrl job run scores it', () => {
  for (const id of ['rings-fam-3-2', 'counts-fam-1-0']) {
    const r = rrl('job', 'baseline', id);
    assert.equal(r.code, 0, r.stderr);
    const spec = JSON.parse(r.stdout);
    assert.equal(spec.task, id);
    const specPath = join(tmp, `${id}.json`);
    writeFileSync(specPath, JSON.stringify({ ...spec, budget: { ...spec.budget, examples: 2_000 } }));
    const run = rrl('job', 'run', specPath, '--out', join(tmp, id), '--json');
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout.trim().split('\n').at(-1)!);
    assert.equal(out.status, 'succeeded');
    assert.ok(Number.isFinite(out.score.normalized) && out.cost.examples <= 2_000, JSON.stringify(out));
  }
  // An id of the same shape whose family does not exist stays an unknown task.
  const bad = rrl('job', 'baseline', 'no-such-fam-1-0');
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /unknown task "no-such-fam-1-0"/);
  // An id past the bound draws nothing (drawing task n draws every task before it).
  const far = rrl('job', 'baseline', 'rings-fam-1-5000');
  assert.equal(far.code, 1);
  assert.match(far.stderr, /unknown task "rings-fam-1-5000"/);
});

test('rrl job run --json trains, scores and prints one JSON object last', () => {
  const specPath = join(tmp, 'ars.json');
  writeFileSync(specPath, JSON.stringify(arsSpec('cartpole-balance', 20_000)));
  const r = rrl('job', 'run', specPath, '--out', join(tmp, 'job'), '--json');
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
  assert.equal(out.status, 'succeeded');
  assert.ok(out.score.raw >= 475);
  assert.ok(out.score.normalized > 0.9 && out.score.normalized <= 1);
  assert.ok(out.cost.envSteps > 0 && out.cost.envSteps <= 20_000);
  assert.ok(out.cost.wallSeconds > 0);
  assert.equal(out.artifact, join(tmp, 'job'));
});

test('rrl job run on an invalid spec exits 1 naming the field, the value and the rule', () => {
  const specPath = join(tmp, 'bad.json');
  writeFileSync(specPath, JSON.stringify({ ...arsSpec('cartpole-balance'), seed: -3, budget: { envSteps: 5e6 } }));
  const r = rrl('job', 'run', specPath, '--json');
  assert.equal(r.code, 1);
  assert.match(r.stderr, /seed: got -3: .*>=0/);
  const notJson = join(tmp, 'broken.json');
  writeFileSync(notJson, '{ "task": ');
  const r2 = rrl('job', 'run', notJson);
  assert.equal(r2.code, 1);
  assert.match(r2.stderr, /cannot read the spec .*broken\.json/);
});

test('rrl job run validates before building the data: an unknown source id is invalid, not failed', () => {
  const { baseline } = getPublicTask('iris-species');
  const specPath = join(tmp, 'unknown-source.json');
  writeFileSync(specPath, JSON.stringify({ ...baseline, dataset: { sources: [{ id: 'no-such-source', weight: 1 }] } }));
  const r = rrl('job', 'run', specPath, '--out', join(tmp, 'unknown-source'), '--json');
  assert.equal(r.code, 1);
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
  assert.equal(out.status, 'invalid');
  assert.match(out.error, /dataset\.sources\[0\]\.id: got "no-such-source": not in the task's catalog/);
  assert.match(r.stderr, /invalid job spec/);
});

test('rrl train rejects bad flags with the limit', () => {
  const r = rrl('train', '--iterations', '0');
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /--iterations must be an integer in \[1, 10000\], got "0"/);
  const r2 = rrl('train', '--tasks', 'nope', '--run', join(tmp, 'x'));
  assert.equal(r2.code, 1);
  assert.match(r2.stderr, /unknown task "nope"/);
});

test('rrl job baseline and rrl job run work for a supervised task (data comes from the harness)', () => {
  const b = rrl('job', 'baseline', 'iris-species');
  assert.equal(b.code, 0);
  const specPath = join(tmp, 'iris.json');
  writeFileSync(specPath, b.stdout);
  const r = rrl('job', 'run', specPath, '--out', join(tmp, 'iris'), '--json');
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
  assert.equal(out.status, 'succeeded');
  assert.ok(out.score.raw > 0.34 && out.score.raw <= 1, `accuracy ${out.score.raw}`);
  assert.ok(out.cost.examples > 0 && out.cost.envSteps === 0);
});

test('rrl train --executor: unknown kinds and a machine without Slurm tools get clear errors', () => {
  const bad = rrl('train', '--executor', 'kubernetes', '--run', join(tmp, 'x1'));
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /--executor must be local or slurm, got "kubernetes"/);
  const env = { ...process.env, PATH: '/nonexistent' };
  const r = spawnSync(process.execPath, [bin, 'train', '--executor', 'slurm', '--run', join(tmp, 'x2')], { encoding: 'utf8', cwd: tmp, env });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /--executor slurm: sbatch, squeue, scancel not found on PATH/);
});

test('rrl tasks --families lists the families; --family draws tasks; rrl train on drawn tasks resumes with the same draw', () => {
  const fams = JSON.parse(rrl('tasks', '--families', '--json').stdout) as { name: string; split: string }[];
  assert.ok(fams.some((f) => f.name === 'synthetic' && f.split === 'train'));
  const drawn = JSON.parse(rrl('tasks', '--family', 'synthetic:3', '--family-seed', '5', '--json').stdout) as { id: string }[];
  assert.deepEqual(
    drawn.filter((t) => t.id.includes('-fam-')).map((t) => t.id),
    ['synthetic-fam-5-0', 'synthetic-fam-5-1', 'synthetic-fam-5-2'],
  );
  const bad = rrl('tasks', '--family', 'nope:3');
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /unknown task family "nope"; known families: .*synthetic/);
  assert.match(rrl('train', '--family', 'synthetic:x').stderr, /--family takes NAME or NAME:COUNT/);

  // Three drawn tasks, two per iteration: the run's tasks are the draw only, and a resume finds them again.
  const run = join(tmp, 'fam-run');
  const r = rrl(
    'train',
    '--family',
    'synthetic:3',
    '--family-seed',
    '5',
    '--tasks-per-iteration',
    '2',
    '--iterations',
    '2',
    '--group',
    '2',
    '--run',
    run,
    '--json',
  );
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { jobs: number; baselines: Record<string, number> };
  assert.equal(summary.jobs, 8, '2 iterations × 2 tasks × 2 proposals');
  for (const id of Object.keys(summary.baselines)) assert.match(id, /^synthetic-fam-5-\d$/);
  const again = rrl('train', '--resume', run, '--json');
  assert.equal(again.code, 0, again.stderr);
  assert.equal((JSON.parse(again.stdout.trim().split('\n').at(-1)!) as { jobs: number }).jobs, 8, 'nothing rerun');
});

test("rrl tasks shows each task's training noise from the noise table", () => {
  const file = join(tmp, 'noise.db');
  const table = new NoiseStore(file);
  table.put(engineIdentity(), evalIdentity(), { task: 'cars-mpg', seeds: 5, mean: 0.5, sd: 0.012, spread: 0.03, evalSe: 0.036 });
  table.close();
  const r = spawnSync(process.execPath, [bin, 'tasks', '--json'], { encoding: 'utf8', cwd: tmp, env: { ...process.env, RRL_NOISE_FILE: file } });
  assert.equal(r.status, 0, r.stderr);
  const rows = JSON.parse(r.stdout) as { id: string; noise: { sd: number } | null }[];
  assert.equal(rows.find((t) => t.id === 'cars-mpg')!.noise!.sd, 0.012);
  assert.equal(rows.find((t) => t.id === 'two-spirals')!.noise, null);
  const text = spawnSync(process.execPath, [bin, 'tasks'], { encoding: 'utf8', cwd: tmp, env: { ...process.env, RRL_NOISE_FILE: file } });
  assert.match(text.stdout, /sd 0\.012 · spread 0\.030 · eval se 0\.036 \(5 seeds\)/);
  assert.match(text.stderr, /rrl tasks --measure-noise/);
});
