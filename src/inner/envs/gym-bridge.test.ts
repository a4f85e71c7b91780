import test from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GymnasiumEnvironment } from '../../spec/brief.js';
import { skipWithoutPython } from '../../testing/python.js';
import { GymBridge, describeGymnasium } from './gym-bridge.js';
import { GymVecEnv } from './gym-vector.js';
import { trainingResetSeed } from './vector.js';

const cartpole: GymnasiumEnvironment = { id: 'CartPole-v1', kwargs: {}, obsDim: 4, actionSpace: { type: 'discrete', n: 2 }, maxEpisodeSteps: 500 };
const tmp = mkdtempSync(join(tmpdir(), 'rrl-gym-test-'));
/** The tests that make real environments need Gymnasium (and MuJoCo for InvertedPendulum-v5). */
const skip = skipWithoutPython('the Gymnasium bridge tests that make real environments', ['gymnasium', 'mujoco']);

/** Runs `fn` with RRL_PYTHON set to `python`, restoring it after. */
function withPython<T>(python: string, fn: () => T): T {
  const before = process.env.RRL_PYTHON;
  process.env.RRL_PYTHON = python;
  try {
    return fn();
  } finally {
    if (before === undefined) delete process.env.RRL_PYTHON;
    else process.env.RRL_PYTHON = before;
  }
}

test('describeGymnasium gives the spaces as data, infinite bounds included', { skip }, () => {
  const d = describeGymnasium('CartPole-v1');
  assert.deepEqual(d.actionSpace, { type: 'discrete', n: 2 });
  assert.equal(d.obsDim, 4);
  assert.equal(d.maxEpisodeSteps, 500);
  assert.equal(d.rewardThreshold, 475);
  assert.equal(d.gymnasium, '1.3.0');
  assert.ok(d.observationSpace.type === 'box' && d.observationSpace.low[1] === -Infinity && d.observationSpace.high[3] === Infinity);
  const p = describeGymnasium('InvertedPendulum-v5');
  assert.deepEqual(p.actionSpace, { type: 'box', shape: [1], low: [-3], high: [3] });
});

test('a vector through the bridge: same-step autoreset, episode returns and lengths counted here', { skip }, () => {
  const v = new GymVecEnv(cartpole, 3, 11);
  try {
    const first = Float64Array.from(v.obs);
    assert.ok(first.every(Number.isFinite) && new Set(first).size === 12, 'three differently seeded starts');
    assert.deepEqual(Array.from(v.nextObs), Array.from(first));
    let ended = 0;
    for (let s = 0; s < 120; s++) {
      v.step([1, 1, 1]); // always pushing right: every episode ends within a few dozen steps
      for (let i = 0; i < 3; i++) {
        if (v.terminated[i]) {
          ended += 1;
          // The observation that ended the episode (pole fallen or cart gone) differs from the fresh start.
          const final = Array.from(v.nextObs.subarray(i * 4, i * 4 + 4));
          const fresh = Array.from(v.obs.subarray(i * 4, i * 4 + 4));
          assert.ok(Math.abs(final[2]) > 0.2095 || Math.abs(final[0]) > 2.4, `final ${final}`);
          assert.ok(Math.abs(fresh[2]) <= 0.05 && Math.abs(fresh[0]) <= 0.05, `fresh ${fresh}`);
        } else assert.deepEqual(Array.from(v.obs.subarray(i * 4, i * 4 + 4)), Array.from(v.nextObs.subarray(i * 4, i * 4 + 4)));
      }
    }
    const eps = v.drainEpisodes();
    assert.equal(eps.length, ended);
    assert.ok(ended >= 6);
    for (const e of eps) assert.equal(e.ret, e.length, 'CartPole pays 1 per step');
    assert.deepEqual(v.drainEpisodes(), []);
  } finally {
    v.close();
  }
});

test('the same seed gives the same episodes; training seeds never have bit 31 (held-out seeds do)', { skip }, () => {
  const run = (): number[] => {
    const v = new GymVecEnv(cartpole, 2, 5);
    try {
      const out: number[] = [];
      for (let s = 0; s < 40; s++) {
        v.step([s % 2, (s >> 1) % 2]);
        out.push(...v.obs);
      }
      return out;
    } finally {
      v.close();
    }
  };
  assert.deepEqual(run(), run());
  for (let i = 0; i < 64; i++) assert.ok(trainingResetSeed(5, i) < 2 ** 31);
});

test('an unknown environment id is one line naming it', { skip }, () => {
  assert.throws(
    () => new GymBridge({ envId: 'NoSuchEnv-v0', num: 1, seeds: [0] }),
    (e: Error) => e.name === 'GymBridgeError' && /NoSuchEnv-v0/.test(e.message) && /doesn't exist/.test(e.message) && !e.message.includes('\n'),
  );
});

test('a missing Python, a Python without the bridge and a bridge that crashes are one-line errors, never a hang', () => {
  withPython(join(tmp, 'no-such-python'), () => {
    assert.throws(() => describeGymnasium('CartPole-v1'), /gymnasium bridge: cannot run .*no-such-python \(set RRL_PYTHON/);
  });
  const crashing = join(tmp, 'crashing-python');
  writeFileSync(crashing, '#!/bin/sh\necho "Fatal Python error: it broke" >&2\nexit 134\n');
  chmodSync(crashing, 0o755);
  withPython(crashing, () => {
    assert.throws(
      () => describeGymnasium('CartPole-v1'),
      (e: Error) => e.message === 'gymnasium bridge (CartPole-v1) ended: Fatal Python error: it broke',
    );
  });
  withPython('/bin/true', () => {
    assert.throws(() => describeGymnasium('CartPole-v1'), /gymnasium bridge \(CartPole-v1\) ended: no output \(is Python with gymnasium installed/);
  });
});

test("the bridge process gets a HOME and XDG directories of its own, never the user's, and no secret", () => {
  const telling = join(tmp, 'telling-python');
  writeFileSync(
    telling,
    '#!/bin/sh\n' +
      'echo "home=$HOME config=$XDG_CONFIG_HOME cache=$XDG_CACHE_HOME file=${RRL_EVAL_SECRET_FILE:-none} secret=${RRL_EVAL_SECRET:-none}" >&2\nexit 1\n',
  );
  chmodSync(telling, 0o755);
  const before = process.env.RRL_EVAL_SECRET_FILE;
  process.env.RRL_EVAL_SECRET_FILE = join(tmp, 'eval-secret');
  try {
    withPython(telling, () => {
      assert.throws(
        () => describeGymnasium('CartPole-v1'),
        (e: Error) => {
          const m = /ended: home=(\S+) config=(\S+) cache=(\S+) file=(\S+) secret=(\S+)$/.exec(e.message);
          assert.ok(m, e.message);
          const [, home, config, cache, file, secret] = m;
          assert.notEqual(home, process.env.HOME);
          assert.match(home, /\/rrl-gym-[^/]+\/home$/);
          assert.equal(config, `${home}/.config`);
          assert.equal(cache, `${home}/.cache`);
          assert.deepEqual([file, secret], ['none', 'none']);
          assert.ok(!existsSync(home), 'removed with the bridge');
          return true;
        },
      );
    });
  } finally {
    if (before === undefined) delete process.env.RRL_EVAL_SECRET_FILE;
    else process.env.RRL_EVAL_SECRET_FILE = before;
  }
});

test('a module:Env id is refused before any Python starts unless the caller allows the import', () => {
  const marker = join(tmp, 'python-ran');
  const recording = join(tmp, 'recording-python');
  writeFileSync(recording, `#!/bin/sh\ntouch '${marker}'\necho "rrl_gym.bridge: recorded" >&2\nexit 1\n`);
  chmodSync(recording, 0o755);
  withPython(recording, () => {
    assert.throws(
      () => new GymBridge({ envId: 'gym_import_marker:RrlMarked-v0', num: 1, seeds: [0] }),
      (e: Error) =>
        e.message ===
        'gymnasium bridge: "gym_import_marker:RrlMarked-v0" names a module to import (gym_import_marker); set environment.allowImport to true to allow it',
    );
    assert.throws(() => new GymVecEnv({ ...cartpole, id: 'os:CartPole-v1' }, 1, 1), /names a module to import \(os\)/);
    assert.ok(!existsSync(marker), 'no Python was started');
    assert.throws(() => new GymBridge({ envId: 'gym_import_marker:RrlMarked-v0', allowImport: true, num: 1, seeds: [0] }), /ended: recorded/);
    assert.ok(existsSync(marker), 'allowed: the bridge was started');
  });
});

test('a bad action and a declared space that differs from the real one are one-line errors', { skip }, () => {
  const v = new GymVecEnv(cartpole, 2, 1);
  try {
    assert.throws(() => v.step([0, 3]), /gymnasium bridge \(CartPole-v1\): action 3 is not an index of Discrete\(2\)/);
    assert.throws(() => v.step([0, 1]), /stepped after close|ended/);
  } finally {
    v.close();
  }
  assert.throws(() => new GymVecEnv({ ...cartpole, obsDim: 5 }, 1, 1), /gymnasium environment CartPole-v1: observes 4 values, the task declares 5/);
  assert.throws(
    () => new GymVecEnv(cartpole, 1, 1, { settings: { poleLength: 0.5 } }),
    /environment\.params: the Gymnasium environment CartPole-v1 has no tunable parameters/,
  );
});
