import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getPublicTask } from '../tasks/briefs.js';
import { evalSecret, evalSecretFile } from '../tasks/secret.js';
import { dataForJob, scoreArtifact } from '../outer/scoring/hidden-score.js';
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
  return {
    brief: { ...brief, trainer: { kind: 'command' as const, argv: ['node', file], description: 'test' } },
    spec: { ...baseline, budget: { ...(baseline.budget as object), examples: 10_000 } },
  };
}

test('a command trainer that fails, overspends or writes no curve is a recorded failure naming the reason', async () => {
  const succeeded = "import { writeFileSync } from 'node:fs'; const d = process.argv[3]; writeFileSync(d + '/status.json', '{\"status\":\"succeeded\"}'); ";
  const cases: [string, RegExp][] = [
    ["console.error('boom: no GPU'); process.exit(3);", /exited with code 3: boom: no GPU/],
    [
      `${succeeded}writeFileSync(d + '/curve.jsonl', ''); writeFileSync(d + '/cost.json', '{"envSteps":0,"examples":999999}');`,
      /999999 examples, over the cap 10000/,
    ],
    [`${succeeded}writeFileSync(d + '/cost.json', '{"envSteps":0,"examples":1}');`, /wrote no curve\.jsonl/],
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
    const { brief, spec } = briefWith(
      "console.error('secret=' + (process.env.RRL_EVAL_SECRET ?? 'none') + ' token=' + (process.env.HF_TOKEN ?? 'none')" +
        " + ' path=' + Boolean(process.env.PATH)); process.exit(3);",
    );
    await assert.rejects(runJob(spec, brief, { outDir: join(tmp, 'env'), data: dataForJob('iris-command', spec) }), /secret=none token=none path=true/);
  } finally {
    delete process.env.RRL_EVAL_SECRET;
    delete process.env.HF_TOKEN;
  }
});

test("a command trainer's cost.json reporting negative or non-finite work fails the job naming the field", async () => {
  const writer = (cost: string) =>
    "import { writeFileSync } from 'node:fs'; const d = process.argv[3]; writeFileSync(d + '/status.json', '{\"status\":\"succeeded\"}'); " +
    `writeFileSync(d + '/curve.jsonl', ''); writeFileSync(d + '/cost.json', ${JSON.stringify(cost)});`;
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
    const { brief, spec } = briefWith(
      "console.error('leaked=' + Object.values(process.env).filter((v) => v === 'do-not-leak').length + ' kept=' + process.env.RRL_HARMLESS_SETTING);" +
        ' process.exit(3);',
    );
    await assert.rejects(runJob(spec, brief, { outDir: join(tmp, 'env-keys'), data: dataForJob('iris-command', spec) }), /leaked=0 kept=visible/);
  } finally {
    for (const n of names) delete process.env[n];
    delete process.env.RRL_HARMLESS_SETTING;
  }
});

/**
 * A trainer that looks for the evaluation secret where a same-user process would look first: at
 * `$HOME/.config/recursive-rl/eval-secret`, under `$XDG_CONFIG_HOME`, at `os.homedir()`, at
 * `$RRL_EVAL_SECRET_FILE`, and through the harness's own `evalSecret()` (which, finding nothing,
 * draws a secret of its own). It writes what it saw into seen.json in the job directory and fails.
 */
const LOOKING_TRAINER = (secretModule: string): string => `
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
const read = (p) => (p && existsSync(p) ? readFileSync(p, 'utf8').trim() : null);
const env = process.env;
const paths = {
  home: join(env.HOME ?? '/nonexistent', '.config', 'recursive-rl', 'eval-secret'),
  xdg: join(env.XDG_CONFIG_HOME ?? '/nonexistent', 'recursive-rl', 'eval-secret'),
  homedir: join(homedir(), '.config', 'recursive-rl', 'eval-secret'),
  file: env.RRL_EVAL_SECRET_FILE,
};
const { evalSecret, evalSecretFile } = await import(${JSON.stringify(secretModule)});
const seen = {
  env: {
    HOME: env.HOME,
    XDG_CONFIG_HOME: env.XDG_CONFIG_HOME,
    XDG_CACHE_HOME: env.XDG_CACHE_HOME,
    RRL_EVAL_SECRET: env.RRL_EVAL_SECRET ?? null,
    RRL_EVAL_SECRET_FILE: env.RRL_EVAL_SECRET_FILE ?? null,
  },
  read: Object.fromEntries(Object.entries(paths).map(([k, p]) => [k, read(p)])),
  harnessFile: evalSecretFile(),
  harnessSecret: evalSecret(),
};
writeFileSync(join(process.argv[3], 'seen.json'), JSON.stringify(seen));
process.exit(3);
`;

/** Runs `fn` with the given variables set (undefined: unset), restoring them after. */
async function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (v: Record<string, string | undefined>): void => {
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) delete process.env[k];
      else process.env[k] = x;
    }
  };
  apply(vars);
  try {
    return await fn();
  } finally {
    apply(saved);
  }
}

test("a command trainer looking for the secret file finds none: its HOME and XDG directories are its own, never the user's", async (t) => {
  const secretModule = new URL('../tasks/secret.js', import.meta.url).href;
  const userHome = join(tmp, 'user-home');
  const userConfig = join(tmp, 'user-config');
  mkdirSync(userHome, { recursive: true });
  const cases: { name: string; vars: Record<string, string | undefined> }[] = [
    { name: 'default path under HOME', vars: { HOME: userHome, XDG_CONFIG_HOME: undefined, RRL_EVAL_SECRET: undefined, RRL_EVAL_SECRET_FILE: undefined } },
    { name: 'XDG_CONFIG_HOME', vars: { HOME: userHome, XDG_CONFIG_HOME: userConfig, RRL_EVAL_SECRET: undefined, RRL_EVAL_SECRET_FILE: undefined } },
    {
      name: 'RRL_EVAL_SECRET_FILE',
      vars: { HOME: userHome, XDG_CONFIG_HOME: undefined, RRL_EVAL_SECRET: undefined, RRL_EVAL_SECRET_FILE: join(tmp, 'explicit', 'eval-secret') },
    },
  ];
  for (const [i, c] of cases.entries()) {
    await withEnv(c.vars, async () => {
      const file = evalSecretFile();
      const secret = evalSecret(); // the harness's: created 0600 at `file`
      assert.ok(existsSync(file), c.name);
      const { brief, spec } = briefWith(LOOKING_TRAINER(secretModule));
      const outDir = join(tmp, `secret-hunt-${i}`);
      await assert.rejects(runJob(spec, brief, { outDir, data: dataForJob('iris-command', spec) }), /exited with code 3/);
      const seen = JSON.parse(readFileSync(join(outDir, 'seen.json'), 'utf8')) as {
        env: Record<string, string | null>;
        read: Record<string, string | null>;
        harnessFile: string;
        harnessSecret: string;
      };
      t.diagnostic(`${c.name}: the harness's secret file ${file}; the trainer saw ${JSON.stringify(seen)}`);
      assert.notEqual(seen.env.HOME, userHome, `${c.name}: HOME is the job's own`);
      assert.ok(seen.env.XDG_CONFIG_HOME?.startsWith(`${seen.env.HOME}/`), `${c.name}: XDG_CONFIG_HOME lies under the job's HOME`);
      assert.notEqual(seen.env.XDG_CONFIG_HOME, userConfig);
      assert.equal(seen.env.RRL_EVAL_SECRET, null);
      assert.equal(seen.env.RRL_EVAL_SECRET_FILE, null);
      assert.deepEqual(seen.read, { home: null, xdg: null, homedir: null, file: null }, `${c.name}: nothing at the default paths`);
      assert.notEqual(seen.harnessFile, file, `${c.name}: the harness code in the job looks elsewhere`);
      assert.notEqual(seen.harnessSecret, secret, `${c.name}: the secret the job can compute is not the harness's`);
      assert.ok(!existsSync(seen.env.HOME!), `${c.name}: the job's home is removed when it ends`);
    });
  }
});
