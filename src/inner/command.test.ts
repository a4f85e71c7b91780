import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getPublicTask } from '../tasks/briefs.js';
import { dataForJob, scoreArtifact } from '../outer/score.js';
import { LocalExecutor } from '../run/local.js';
import { runJob } from './train.js';

const tmp = mkdtempSync(join(tmpdir(), 'rrl-command-'));

test('the example command trainer trains iris-command in a worker; the evaluation command scores it', async () => {
  const { brief, baseline } = getPublicTask('iris-command');
  assert.equal(brief.trainer?.kind, 'command');
  // The baseline on the checked sample, with a validation split and the pre-issue-21 optimiser settings.
  const spec = {
    ...baseline,
    algorithm: { ...(baseline.algorithm as object), learningRate: 0.2, batchSize: 32, epochs: 60, weightDecay: 0 },
    dataset: { ...(baseline.dataset as object), sources: [{ id: 'clean-small', weight: 1 }], validationFraction: 0.1 },
    budget: { ...(baseline.budget as object), examples: 10_000 },
  };
  const ex = new LocalExecutor({ workers: 1 });
  try {
    const outDir = join(tmp, 'ok');
    const r = await ex.execute({ spec, brief, outDir, data: dataForJob('iris-command', spec) });
    assert.equal(r.status, 'succeeded', JSON.stringify(r));
    if (r.status !== 'succeeded') return;
    assert.equal(r.artifact.backend, 'command');
    assert.ok(r.artifact.cost.examples > 0 && r.artifact.cost.examples <= 10_000);
    assert.ok(r.curve.some((p) => p.name === 'charts/val_accuracy'));
    assert.ok(existsSync(join(outDir, 'weights.json')));
    const score = scoreArtifact('iris-command', outDir);
    assert.ok(score.raw > 0.6 && score.raw <= 1, `accuracy ${score.raw}`);
  } finally {
    await ex.close();
  }
});

/** A task brief whose trainer is a small script written by the test. */
function briefWith(script: string) {
  const file = join(tmp, `trainer-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, script);
  const { brief, baseline } = getPublicTask('iris-command');
  return { brief: { ...brief, trainer: { kind: 'command' as const, argv: ['node', file], description: 'test' } }, spec: { ...baseline, budget: { ...(baseline.budget as object), examples: 10_000 } } };
}

test('a command trainer that fails, overspends or writes no curve is a recorded failure naming the reason', async () => {
  const cases: [string, RegExp][] = [
    ["console.error('boom: no GPU'); process.exit(3);", /exited with code 3: boom: no GPU/],
    [
      "import { writeFileSync } from 'node:fs'; const d = process.argv[3]; writeFileSync(d + '/status.json', '{\"status\":\"succeeded\"}'); writeFileSync(d + '/curve.jsonl', ''); writeFileSync(d + '/cost.json', '{\"envSteps\":0,\"examples\":999999}');",
      /999999 examples, over the cap 10000/,
    ],
    ["import { writeFileSync } from 'node:fs'; const d = process.argv[3]; writeFileSync(d + '/status.json', '{\"status\":\"succeeded\"}'); writeFileSync(d + '/cost.json', '{\"envSteps\":0,\"examples\":1}');", /wrote no curve\.jsonl/],
  ];
  for (const [i, [script, expected]] of cases.entries()) {
    const { brief, spec } = briefWith(script);
    const outDir = join(tmp, `bad-${i}`);
    await assert.rejects(runJob(spec, brief, { outDir, data: dataForJob('iris-command', spec) }), expected);
    const status = JSON.parse(readFileSync(join(outDir, 'status.json'), 'utf8'));
    assert.equal(status.status, 'failed');
    assert.match(status.error, expected);
  }
});

test('a command trainer never receives the evaluation secret or tokens from the environment', async () => {
  process.env.RRL_EVAL_SECRET = '4242';
  process.env.HF_TOKEN = 'hf_abc';
  try {
    const { brief, spec } = briefWith("console.error('secret=' + (process.env.RRL_EVAL_SECRET ?? 'none') + ' token=' + (process.env.HF_TOKEN ?? 'none') + ' path=' + Boolean(process.env.PATH)); process.exit(3);");
    await assert.rejects(runJob(spec, brief, { outDir: join(tmp, 'env'), data: dataForJob('iris-command', spec) }), /secret=none token=none path=true/);
  } finally {
    delete process.env.RRL_EVAL_SECRET;
    delete process.env.HF_TOKEN;
  }
});

test("a command trainer's cost.json reporting negative or non-finite work fails the job naming the field", async () => {
  const writer = (cost: string) =>
    `import { writeFileSync } from 'node:fs'; const d = process.argv[3]; writeFileSync(d + '/status.json', '{"status":"succeeded"}'); writeFileSync(d + '/curve.jsonl', ''); writeFileSync(d + '/cost.json', ${JSON.stringify(cost)});`;
  const cases: [string, RegExp][] = [
    ['{"envSteps":0,"examples":-5}', /trainer: cost\.json examples must be a finite number >= 0, got -5$/],
    ['{"envSteps":-1,"examples":10}', /trainer: cost\.json envSteps must be a finite number >= 0, got -1$/],
    ['{"envSteps":0,"examples":1e999}', /trainer: cost\.json examples must be a finite number >= 0, got Infinity$/],
    ['{"envSteps":0,"examples":10,"cpuSeconds":-3.5}', /trainer: cost\.json cpuSeconds must be a finite number >= 0, got -3\.5$/],
    ['{"envSteps":0,"examples":"NaN"}', /trainer: cost\.json examples must be a finite number >= 0, got "NaN"$/],
    ['[1, 2]', /trainer: cost\.json must be one JSON object$/],
  ];
  for (const [i, [cost, expected]] of cases.entries()) {
    const { brief, spec } = briefWith(writer(cost));
    const outDir = join(tmp, `cost-${i}`);
    await assert.rejects(runJob(spec, brief, { outDir, data: dataForJob('iris-command', spec) }), expected);
    const status = JSON.parse(readFileSync(join(outDir, 'status.json'), 'utf8'));
    assert.equal(status.status, 'failed');
    assert.match(status.error, expected);
  }
});

test('a command trainer never receives API keys, tokens, secrets or passwords', async () => {
  const names = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'DB_PASSWORD', 'RRL_EVAL_SECRET'];
  for (const n of names) process.env[n] = 'do-not-leak';
  process.env.RRL_HARMLESS_SETTING = 'visible';
  try {
    const { brief, spec } = briefWith("console.error('leaked=' + Object.values(process.env).filter((v) => v === 'do-not-leak').length + ' kept=' + process.env.RRL_HARMLESS_SETTING); process.exit(3);");
    await assert.rejects(runJob(spec, brief, { outDir: join(tmp, 'env-keys'), data: dataForJob('iris-command', spec) }), /leaked=0 kept=visible/);
  } finally {
    for (const n of names) delete process.env[n];
    delete process.env.RRL_HARMLESS_SETTING;
  }
});
