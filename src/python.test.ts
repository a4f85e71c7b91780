/**
 * The Python side (python/: the rrl_client package, its reward functions and the GRPO trainer) run
 * from `npm test`: its pytest suite and a strict mypy check, in the virtual environment that
 * `python/setup-venv.sh` creates at .venv/. Without .venv the tests say so loudly and skip; with
 * RRL_REQUIRE_PYTHON=1 (CI, after .ci/run has created it) they fail instead.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { skipWithoutPython, startPython } from './testing/python.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const python = join(root, '.venv', 'bin', 'python');
const skip = skipWithoutPython('the Python tests (pytest and mypy in .venv)', ['pytest', 'mypy', 'gymnasium', 'torch'], python);

// pytest and mypy are single-threaded and independent: both start at once, each test waits for its own.
const pytest = skip ? null : startPython(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], join(root, 'python'));
const mypy = skip ? null : startPython(python, ['-m', 'mypy', '--cache-dir', join(root, '.venv', '.mypy_cache')], join(root, 'python'));

test('python: pytest (client, TRL and verl rewards, the TRL, OpenEnv and verifiers adapters on a real rrl serve, GRPO smoke test with LoRA)', {
  skip,
}, async () => {
  const r = await pytest!;
  process.stdout.write(r.output);
  assert.equal(r.status, 0, 'pytest failed (output above)');
});

test('python: rrl_client type-checks under mypy --strict', { skip }, async () => {
  const r = await mypy!;
  process.stdout.write(r.output);
  assert.equal(r.status, 0, 'mypy found errors (output above)');
});
