import test from 'node:test';
import assert from 'node:assert/strict';
import { mixSeed } from '../../util/rng.js';
import { CARTPOLE_INFO } from './cartpole.js';
import type { Env } from './types.js';
import { VecEnv, trainingResetSeed } from './vector.js';

test('training reset seeds never have bit 31 set (held-out seeds always do)', () => {
  let cleared = 0;
  for (let seed = 0; seed < 2000; seed++) {
    for (let i = 0; i < 64; i++) {
      const s = trainingResetSeed(seed, i);
      assert.ok(Number.isInteger(s) && s >= 0 && s < 2 ** 31, `seed ${seed}, env ${i}: ${s}`);
      if (mixSeed(seed, i) !== s) cleared += 1;
    }
  }
  assert.ok(cleared > 0, 'some derived seeds had bit 31 and lost it');
  assert.equal(trainingResetSeed(0x7fffffff, 3), trainingResetSeed(0x7fffffff, 3), 'deterministic');
});

test('VecEnv resets each env once with its training seed, then lets it continue its own stream', () => {
  const seen: (number | undefined)[][] = [];
  const make = (): Env => {
    const k = seen.push([]) - 1;
    let t = 0;
    return {
      info: CARTPOLE_INFO,
      reset: (o) => {
        seen[k].push(o?.seed);
        t = 0;
        return { obs: new Float64Array(4), info: {} };
      },
      step: () => {
        t += 1;
        return { obs: new Float64Array(4), reward: 1, terminated: t >= 3, truncated: false, info: {} };
      },
    };
  };
  for (const seed of [1, 2, 77, 2 ** 31 - 1]) {
    seen.length = 0;
    const vec = new VecEnv(make, 5, seed);
    for (let s = 0; s < 7; s++) vec.step([0, 0, 0, 0, 0]);
    seen.forEach((resets, i) => {
      assert.equal(resets[0], trainingResetSeed(seed, i));
      assert.ok(resets[0]! < 2 ** 31);
      assert.deepEqual(resets.slice(1), [undefined, undefined], 'autoresets do not reseed');
    });
  }
});
