import test from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { registerTaskDir } from './register.js';
import { getPublicTask } from '../briefs.js';
import { trainAgent } from '../../outer/loop.js';
import { LocalExecutor } from '../../run/local.js';
import { Store } from '../../store/store.js';
import { ScriptedAgent } from '../../testing/scripted-agent.js';
import { ModelRunner, type ModelFile } from '../../inner/model.js';
import { getSupervisedEvaluation } from '../hidden.js';
import { classificationTask, syntheticRows, taskDir, toCsv, writeTask } from '../../testing/task-files.js';

// The main data as JSON Lines, an extra source as Parquet; the metric is log-loss.
const dir = taskDir();
writeFileSync(
  join(dir, 'points.jsonl'),
  syntheticRows(240)
    .map((r) => JSON.stringify(r))
    .join('\n'),
);
const more = syntheticRows(120, 5000);
writeFileSync(
  join(dir, 'more.parquet'),
  new Uint8Array(
    parquetWriteBuffer({
      columnData: [
        { name: 'a', data: more.map((r) => r.a), type: 'DOUBLE' },
        { name: 'b', data: more.map((r) => r.b), type: 'DOUBLE' },
        { name: 'c', data: more.map((r) => r.c), type: 'DOUBLE' },
        { name: 'kind', data: more.map((r) => r.kind), type: 'STRING' },
      ],
    }),
  ),
);
writeTask(
  dir,
  'points.json',
  classificationTask('points-own', {
    data: {
      file: 'points.jsonl',
      target: 'kind',
      type: 'classification',
      features: ['a', 'b', 'c'],
      sources: [{ id: 'more', file: 'more.parquet', description: '120 further points from a second survey' }],
    },
    metric: 'log-loss',
    caps: { maxExamples: 20_000, maxWallSeconds: 60 },
    baseline: { epochs: 40, examples: 8000, hidden: [16], learningRate: 0.01 },
  }),
);
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** The baseline's spec on the given sources, seed 3. */
function onSources(sources: { id: string; weight: number }[]): unknown {
  const spec = structuredClone(getPublicTask('points-own').baseline) as { dataset: { sources: { id: string; weight: number }[] }; seed: number };
  spec.dataset.sources = sources;
  spec.seed = 3;
  return spec;
}

test('a user task trains for real through the executor and is scored in the scorer thread on its hidden split', async () => {
  await registerTaskDir(dir);
  const run = join(dir, 'run');
  const executor = new LocalExecutor({ workers: 1 });
  try {
    const summary = await trainAgent(run, { tasks: ['points-own'], agent: 'random', iterations: 1, group: 2, seed: 1, taskDir: dir }, executor, {
      // the baseline on both of the task's sources, then a source the task does not have
      agent: new ScriptedAgent([
        () =>
          onSources([
            { id: 'main', weight: 1 },
            { id: 'more', weight: 1 },
          ]),
        () => onSources([{ id: 'hidden-test', weight: 1 }]),
      ]),
    });
    const store = new Store(run);
    const jobs = store.jobs(summary.run);
    store.close();
    const base = jobs.find((j) => j.kind === 'baseline')!;
    assert.equal(base.status, 'succeeded', base.error ?? '');
    assert.ok(base.normalized !== null && base.normalized > 0.2 && base.normalized <= 1, `baseline normalised log-loss score ${base.normalized}`);
    const [mixed, bad] = jobs.filter((j) => j.kind === 'proposal').sort((x, y) => x.slot - y.slot);
    assert.equal(mixed.status, 'succeeded', mixed.error ?? '');
    assert.ok(mixed.examples !== null && mixed.examples > 0);
    assert.ok(mixed.raw !== null && mixed.raw < 0, 'raw log-loss is negated');
    const model = JSON.parse(readFileSync(join(mixed.artifactDir!, 'model.json'), 'utf8')) as { features: string[]; classes: string[] };
    assert.deepEqual(
      [model.features, model.classes],
      [
        ['a', 'b', 'c'],
        ['down', 'up'],
      ],
    );
    assert.equal(bad.status, 'invalid');
    assert.match(bad.error ?? '', /dataset\.sources.*hidden-test/);
  } finally {
    await executor.close();
  }
});

test('rrl task new writes a file that rrl tasks --task-dir lists; rrl task schema prints the JSON Schema', () => {
  const cli = new URL('../../cli/index.js', import.meta.url).pathname;
  const env = { ...process.env, RRL_EVAL_SECRET: process.env.RRL_EVAL_SECRET ?? '1' };
  const out = execFileSync(
    process.execPath,
    [cli, 'task', 'new', '--data', join(dir, 'points.jsonl'), '--target', 'kind', '--out', join(dir, 'fresh.json'), '--id', 'fresh-points'],
    { encoding: 'utf8', env },
  );
  assert.match(out, /wrote .*fresh\.json\n {2}classification of "kind" from 4 of 4 column\(s\) on 240 of 240 rows/);
  const written = JSON.parse(readFileSync(join(dir, 'fresh.json'), 'utf8')) as { data: { features: string[]; file: string }; metric: string };
  assert.deepEqual(written.data.features, ['a', 'b', 'c', 'y'], 'every numeric column but the target');
  assert.equal(written.data.file, 'points.jsonl');
  assert.equal(written.metric, 'accuracy');
  const rows = JSON.parse(execFileSync(process.execPath, [cli, 'tasks', '--task-dir', dir, '--json'], { encoding: 'utf8', env })) as { id: string }[];
  assert.ok(rows.some((r) => r.id === 'fresh-points') && rows.some((r) => r.id === 'points-own') && rows.some((r) => r.id === 'cars-mpg'));
  const schema = JSON.parse(execFileSync(process.execPath, [cli, 'task', 'schema'], { encoding: 'utf8', env })) as { oneOf?: unknown[]; anyOf?: unknown[] };
  assert.equal((schema.oneOf ?? schema.anyOf)!.length, 2, 'one schema, two kinds');
});

test('random labels and a rounded copy of the main file as a source: a job trained on the copy scores about chance on the hidden rows', async () => {
  // 300 points, labels at random (nothing to learn); the source holds the same rows, features rounded to 4 decimals.
  const noise = taskDir('rrl-tasks-noise-');
  const rows = Array.from({ length: 300 }, (_, i) => ({
    a: Math.sin(i * 1.3) * 3,
    b: Math.cos(i * 0.77 + 1) * 2,
    c: Math.sin(i * 0.31) * Math.cos(i * 2.9),
    kind: (Math.imul(i + 1, 2654435761) >>> 16) % 2 ? 'up' : 'down',
  }));
  writeFileSync(join(noise, 'noise.csv'), toCsv(rows));
  writeFileSync(join(noise, 'copy.csv'), toCsv(rows.map((r) => ({ ...r, a: r.a.toFixed(4), b: r.b.toFixed(4), c: r.c.toFixed(4) }))));
  writeTask(
    noise,
    'noise.json',
    classificationTask('noise-own', {
      data: {
        file: 'noise.csv',
        target: 'kind',
        type: 'classification',
        features: ['a', 'b', 'c'],
        sources: [{ id: 'copy', file: 'copy.csv', description: 'the same points, exported with 4 decimals' }],
      },
      variables: {},
      caps: { maxExamples: 200_000, maxWallSeconds: 120 },
      baseline: { epochs: 1, examples: 200, hidden: [4] },
    }),
  );
  await registerTaskDir(noise);
  const memorise = structuredClone(getPublicTask('noise-own').baseline) as unknown as Record<string, Record<string, unknown>>;
  memorise.dataset.sources = [{ id: 'copy', weight: 1 }];
  memorise.dataset.validationFraction = 0;
  memorise.model.hidden = [128, 128];
  Object.assign(memorise.algorithm, { epochs: 400, learningRate: 0.005, batchSize: 16 });
  memorise.budget.examples = 200_000;
  const executor = new LocalExecutor({ workers: 1 });
  try {
    const summary = await trainAgent(
      join(noise, 'run'),
      { tasks: ['noise-own'], agent: 'random', iterations: 1, group: 1, seed: 1, taskDir: noise },
      executor,
      {
        agent: new ScriptedAgent([() => memorise]),
      },
    );
    const store = new Store(join(noise, 'run'));
    const job = store.jobs(summary.run).find((j) => j.kind === 'proposal')!;
    store.close();
    assert.equal(job.status, 'succeeded', job.error ?? '');
    // The model learned the rows it was given by heart...
    const model = new ModelRunner(JSON.parse(readFileSync(join(job.artifactDir!, 'model.json'), 'utf8')) as ModelFile);
    const ev = getSupervisedEvaluation('noise-own');
    const copy = ev.source('copy');
    const learned = model.predict(copy.x).filter((p, i) => p === copy.y[i]).length / copy.x.length;
    assert.ok(learned > 0.9, `accuracy ${learned} on its own training rows`);
    assert.ok(copy.x.length <= 300 - ev.heldOut().test.x.length, copy.history![0]);
    // ...and none of them was a hidden row: chance on the hidden evaluation (90 rows, standard error about 0.05).
    assert.ok(job.raw !== null && job.raw > 0.35 && job.raw < 0.65, `hidden accuracy ${job.raw}`);
  } finally {
    await executor.close();
    rmSync(noise, { recursive: true, force: true });
  }
});
