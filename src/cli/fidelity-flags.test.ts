import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = resolve(fileURLToPath(import.meta.url), '../../../../bin/rrl.js');
const tmp = mkdtempSync(join(tmpdir(), 'rrl-cli-fidelity-'));

function train(...args: string[]): { code: number | null; stderr: string } {
  const argv = [bin, 'train', '--tasks', 'cars-mpg', '--iterations', '1', '--group', '2', '--run', join(tmp, 'run'), ...args];
  const r = spawnSync(process.execPath, argv, { encoding: 'utf8', cwd: tmp });
  return { code: r.status, stderr: r.stderr };
}

test('bad successive-halving flags are one-line errors naming the flag, before anything runs', () => {
  const cases: [string[], RegExp][] = [
    [['--fidelity', 'hyperband'], /--fidelity must be none or asha, got "hyperband"/],
    [['--fidelity', 'asha', '--eta', '1'], /--eta must be an integer in \[2, 16\], got "1"/],
    [['--fidelity', 'asha', '--min-share', '3/2'], /--min-share must be a fraction in \(0, 1\] such as 1\/9 or 0\.25, got "3\/2"/],
    [['--fidelity', 'asha', '--min-share', '1'], /--min-share 1 leaves a single rung/],
  ];
  for (const [args, message] of cases) {
    const r = train(...args);
    assert.notEqual(r.code, 0, args.join(' '));
    assert.match(r.stderr, message);
    assert.doesNotMatch(r.stderr, /\n\s+at .*:\d+:\d+/, 'no stack trace');
  }
});
