/**
 * The Python side's style from `npm test`: ruff's linter and its formatter check over python/ (both
 * configured in python/pyproject.toml), run from the virtual environment that `python/setup-venv.sh`
 * creates at .venv/. Without ruff there the tests say so loudly and skip; with RRL_REQUIRE_PYTHON=1
 * they fail instead.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { skipWithoutPython, startPython } from './testing/python.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const python = join(root, '.venv', 'bin', 'python');
const skip = skipWithoutPython('ruff over python/ (in .venv)', ['ruff'], python);

// No cache: it would be written into python/, and both runs take a moment without one.
const check = skip ? null : startPython(python, ['-m', 'ruff', 'check', '--no-cache', '.'], join(root, 'python'), 120_000);
const format = skip ? null : startPython(python, ['-m', 'ruff', 'format', '--no-cache', '--check', '.'], join(root, 'python'), 120_000);

test('python: ruff check passes over python/', { skip }, async () => {
  const r = await check!;
  process.stdout.write(r.output);
  assert.equal(r.status, 0, 'ruff check found problems (output above; `.venv/bin/ruff check --fix python` fixes many)');
});

test('python: python/ is formatted as ruff format writes it', { skip }, async () => {
  const r = await format!;
  process.stdout.write(r.output);
  assert.equal(r.status, 0, 'python/ differs from ruff format (output above; `.venv/bin/ruff format python` rewrites it)');
});
