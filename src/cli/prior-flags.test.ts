import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = resolve(fileURLToPath(import.meta.url), '../../../../bin/rrl.js');

test('rrl experiment transfer: a prior with meta-training flags, or a prior that is not there, is a one-line error before anything runs', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-cli-experiment-'));
  try {
    const dir = join(tmp, 'exp');
    const cases: [string[], RegExp][] = [
      // The quick preset starts from the shipped prior: its meta-training settings would do nothing.
      [
        ['--iterations', '2', '--group', '3'],
        /--iterations, --group set meta-training, which a run from a prior \(.*priors\/controller-families\.json\) does not do; add --prior none to meta-train/,
      ],
      [['--preset', 'full', '--prior', join(tmp, 'none.json'), '--fidelity', 'asha'], /--fidelity set meta-training/],
      // The family weights of --robust act only in meta-training's updates.
      [['--robust', '0', '--anchor', '2'], /--anchor, --robust set meta-training/],
      [['--prior', join(tmp, 'missing.json')], /prior .*missing\.json does not exist/],
    ];
    for (const [args, message] of cases) {
      const r = spawnSync(process.execPath, [bin, 'experiment', 'transfer', '--dir', dir, ...args], { encoding: 'utf8', cwd: tmp });
      assert.notEqual(r.status, 0, args.join(' '));
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at .*:\d+:\d+/, 'no stack trace');
      assert.ok(!existsSync(dir), `${args.join(' ')}: nothing was written`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('rrl train --prior: a prior that is not there, one for another agent, or on a resumed run is a one-line error before anything runs', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-cli-train-prior-'));
  try {
    const run = join(tmp, 'run');
    const shipped = resolve(fileURLToPath(import.meta.url), '../../../../priors/controller.json');
    const cases: [string[], RegExp][] = [
      [['--prior', join(tmp, 'missing.json')], /prior .*missing\.json does not exist/],
      [['--agent', 'random', '--prior', shipped], /a prior sets the controller's weights; agent "random" takes none/],
      [['--resume', '--prior', shipped], /--prior starts a new run; a resumed run continues from its own checkpoint/],
    ];
    for (const [args, message] of cases) {
      const argv = [bin, 'train', '--tasks', 'iris-species', '--iterations', '1', '--group', '2', '--run', run, ...args];
      const r = spawnSync(process.execPath, argv, { encoding: 'utf8', cwd: tmp });
      assert.notEqual(r.status, 0, args.join(' '));
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /\n\s+at .*:\d+:\d+/, 'no stack trace');
      assert.ok(!existsSync(run), `${args.join(' ')}: nothing was written`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
