/**
 * The Python side (python/: the rrl_client package, its reward functions and the GRPO trainer) run
 * from `npm test`: its pytest suite and a strict mypy check, in the virtual environment that
 * `python/setup-venv.sh` creates at .venv/. Without .venv the tests say so loudly and skip; with
 * RRL_REQUIRE_PYTHON=1 (CI, after .ci/run has created it) they fail instead.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { skipWithoutPython } from './testing/python.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const python = join(root, '.venv', 'bin', 'python');
const skip = skipWithoutPython('the Python tests (pytest and mypy in .venv)', ['pytest', 'mypy', 'gymnasium', 'torch'], python);

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
