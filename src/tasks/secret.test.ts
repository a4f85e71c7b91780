import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { checkSecretFileMode, derivedEvalSecret, evalIdentity, evalSecret, evalSecretFile, heldOutSeeds, withEvalSecret } from './secret.js';
import { mixSeed } from '../util/rng.js';

/** Runs `fn` with the given variables set (undefined: unset), restoring them after. */
function withEnv<T>(vars: Record<string, string | undefined>, fn: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (v: Record<string, string | undefined>): void => {
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) delete process.env[k];
      else process.env[k] = x;
    }
  };
  apply(vars);
  try {
    return fn();
  } finally {
    apply(saved);
  }
}

test('without RRL_EVAL_SECRET the secret is random per installation, kept 0600 in the config directory', () => {
  const config = mkdtempSync(join(tmpdir(), 'rrl-xdg-'));
  withEnv({ RRL_EVAL_SECRET: undefined, RRL_EVAL_SECRET_FILE: undefined, XDG_CONFIG_HOME: config }, () => {
    const file = evalSecretFile();
    assert.equal(file, join(config, 'recursive-rl', 'eval-secret'));
    const secret = evalSecret();
    assert.match(secret, /^[0-9a-f]{64}$/);
    assert.equal(readFileSync(file, 'utf8').trim(), secret);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(evalSecret(), secret, 'the same secret on every call');
    assert.notEqual(secret, String(0x6a09e667));
    assert.equal(evalIdentity(), createHash('sha256').update(`rrl-eval/${secret}`).digest('hex').slice(0, 16));
  });
  // Another installation draws another secret.
  const other = mkdtempSync(join(tmpdir(), 'rrl-xdg-'));
  const a = withEnv({ RRL_EVAL_SECRET: undefined, RRL_EVAL_SECRET_FILE: join(other, 's') }, () => evalSecret());
  const b = withEnv({ RRL_EVAL_SECRET: undefined, RRL_EVAL_SECRET_FILE: undefined, XDG_CONFIG_HOME: config }, () => evalSecret());
  assert.notEqual(a, b);
});

test('processes that start together agree on one secret file', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'rrl-race-')), 'nested', 'eval-secret');
  const url = new URL('./secret.js', import.meta.url).href;
  const env: NodeJS.ProcessEnv = { ...process.env, RRL_EVAL_SECRET_FILE: file };
  delete env.RRL_EVAL_SECRET;
  const run = promisify(execFile);
  const outs = await Promise.all(
    Array.from({ length: 6 }, () =>
      run(process.execPath, ['--input-type=module', '-e', `import { evalIdentity } from '${url}'; console.log(evalIdentity());`], { env }),
    ),
  );
  const ids = new Set(outs.map((o) => o.stdout.trim()));
  assert.equal(ids.size, 1, `identities: ${[...ids].join(', ')}`);
  assert.match([...ids][0], /^[0-9a-f]{16}$/);
  assert.equal(
    withEnv({ RRL_EVAL_SECRET: undefined, RRL_EVAL_SECRET_FILE: file }, () => evalIdentity()),
    [...ids][0],
  );
});

test('RRL_EVAL_SECRET overrides the file; an integer keeps the historical held-out seeds', () => {
  withEnv({ RRL_EVAL_SECRET: '1779033703' }, () => {
    assert.equal(evalSecret(), '1779033703');
    let h = 0;
    for (const ch of 'cartpole-balance') h = mixSeed(h, ch.codePointAt(0) ?? 0);
    assert.deepEqual(
      heldOutSeeds('cartpole-balance', 3),
      [0, 1, 2].map((i) => (mixSeed(0x6a09e667, h, i) | 0x80000000) >>> 0),
    );
  });
  const words = withEnv({ RRL_EVAL_SECRET: 'correct horse battery staple' }, () => heldOutSeeds('cartpole-balance', 20));
  const other = withEnv({ RRL_EVAL_SECRET: 'correct horse battery stapler' }, () => heldOutSeeds('cartpole-balance', 20));
  assert.notDeepEqual(words, other);
  for (const s of [...words, ...other]) assert.ok(s >= 2 ** 31 && s < 2 ** 32, 'held-out seeds lie above every spec seed');
  assert.notEqual(evalIdentity('a'), evalIdentity('b'));
});

test('a secret file that group or others can read is refused in one line naming the file, its mode and the chmod', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rrl-mode-'));
  const file = join(dir, 'eval-secret');
  writeFileSync(file, `${'f00d'.repeat(16)}\n`);
  chmodSync(file, 0o644);
  const refused = (): Error => {
    try {
      withEnv({ RRL_EVAL_SECRET: undefined, RRL_EVAL_SECRET_FILE: file }, () => evalSecret());
    } catch (err) {
      return err as Error;
    }
    throw new Error('the secret was read');
  };
  const err = refused();
  assert.equal(err.message, `evaluation secret file ${file} has mode 0644: group or others may read it; run \`chmod 600 ${file}\``);
  assert.ok(!err.message.includes('\n'));
  for (const mode of [0o640, 0o604, 0o660]) {
    chmodSync(file, mode);
    assert.match(refused().message, new RegExp(`has mode 0${mode.toString(8)}: .*chmod 600`));
  }
  chmodSync(file, 0o600);
  assert.equal(
    withEnv({ RRL_EVAL_SECRET: undefined, RRL_EVAL_SECRET_FILE: file }, () => evalSecret()),
    'f00d'.repeat(16),
  );
});

test('a secret file in a directory others may write to is refused (a sticky directory such as /tmp is not)', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'rrl-mode-')), 'open');
  mkdirSync(dir);
  const file = join(dir, 'eval-secret');
  writeFileSync(file, 'beef\n', { mode: 0o600 });
  chmodSync(dir, 0o777);
  assert.throws(
    () => withEnv({ RRL_EVAL_SECRET: undefined, RRL_EVAL_SECRET_FILE: file }, () => evalSecret()),
    (e: Error) =>
      e.message === `evaluation secret file ${file}: its directory ${dir} has mode 0777: group or others may replace the secret; run \`chmod 700 ${dir}\``,
  );
  assert.doesNotThrow(() => checkSecretFileMode('/tmp/s', 0o100600, 0o41777), 'sticky /tmp');
  assert.doesNotThrow(() => checkSecretFileMode('/home/u/.config/recursive-rl/eval-secret', 0o100600, 0o40755), 'a directory others may list but not write');
});

test('an experiment under several secrets: derived ones are the base, then distinct, repeatable HMACs of it, used only inside withEvalSecret', async () => {
  const saved = process.env.RRL_EVAL_SECRET;
  process.env.RRL_EVAL_SECRET = 'installation-secret';
  try {
    const secrets = [0, 1, 2, 3].map((k) => derivedEvalSecret(k));
    assert.equal(secrets[0], 'installation-secret');
    assert.equal(new Set(secrets).size, 4);
    for (const s of secrets.slice(1)) assert.ok(!s.includes('installation-secret') && /^[0-9a-f]{64}$/.test(s));
    assert.deepEqual(
      [0, 1, 2, 3].map((k) => derivedEvalSecret(k)),
      secrets,
      'the same installation always derives the same set',
    );
    assert.notEqual(derivedEvalSecret(1, 'another-installation'), secrets[1]);
    assert.throws(() => derivedEvalSecret(-1), /non-negative integer/);
    // Inside: every reader of the secret (held-out seeds, identity) sees the derived one; afterwards, and after a throw, the installation's again.
    const inside = await withEvalSecret(secrets[2], async () => [evalSecret(), evalIdentity(), heldOutSeeds('iris-species', 2)]);
    assert.deepEqual(inside, [secrets[2], evalIdentity(secrets[2]), heldOutSeeds('iris-species', 2, secrets[2])]);
    assert.notDeepEqual(inside[2], heldOutSeeds('iris-species', 2));
    assert.equal(evalSecret(), 'installation-secret');
    await assert.rejects(
      withEvalSecret(secrets[1], async () => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.equal(evalSecret(), 'installation-secret');
  } finally {
    if (saved === undefined) delete process.env.RRL_EVAL_SECRET;
    else process.env.RRL_EVAL_SECRET = saved;
  }
});
