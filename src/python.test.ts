/**
 * The Python side (python/: the rrl_client package, its reward functions and the GRPO trainer) run
 * from `npm test`: its pytest suite and a strict mypy check, in the virtual environment that
 * `python/setup-venv.sh` creates at .venv/. Without .venv the tests say so loudly and skip; with
 * RRL_REQUIRE_PYTHON=1 (CI, after .ci/run has created it) they fail instead.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const python = join(root, '.venv', 'bin', 'python');
const why = existsSync(python) ? null : `no Python virtual environment at ${python} (run python/setup-venv.sh)`;
if (why) {
  process.stderr.write(`\n${'!'.repeat(78)}\n!! PYTHON TESTS SKIPPED: ${why}\n${'!'.repeat(78)}\n`);
  if (process.env.RRL_REQUIRE_PYTHON === '1') throw new Error(`RRL_REQUIRE_PYTHON=1 but ${why}`);
}
const skip = why ?? false;

/** Run a module of the venv's Python in python/, echoing its output; returns the exit status. */
function runPython(args: string[]): number | null {
  const r = spawnSync(python, args, { cwd: join(root, 'python'), encoding: 'utf8', timeout: 600_000, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  if (r.error) throw r.error;
  return r.status;
}

test('python: pytest (client, TRL and verl rewards, GRPO smoke test with LoRA)', { skip }, () => {
  assert.equal(runPython(['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests']), 0, 'pytest failed (output above)');
});

test('python: rrl_client type-checks under mypy --strict', { skip }, () => {
  assert.equal(runPython(['-m', 'mypy', '--cache-dir', join(root, '.venv', '.mypy_cache')]), 0, 'mypy found errors (output above)');
});
