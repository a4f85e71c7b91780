import test from 'node:test';
import assert from 'node:assert/strict';
import { gymnasiumIdProblem, gymnasiumImportModule } from './gym-id.js';

test('plain registered Gymnasium ids are accepted; a module:Env id only with the opt-in', () => {
  for (const id of ['CartPole-v1', 'InvertedPendulum-v5', 'ALE/Pong-v5', 'gymnasium_robotics/FetchReach-v4', 'MiniGrid-Empty-5x5-v0']) {
    assert.equal(gymnasiumIdProblem(id, false), null, id);
  }
  assert.equal(gymnasiumImportModule('CartPole-v1'), null);
  assert.equal(gymnasiumImportModule('mypkg.envs:MyEnv-v0'), 'mypkg.envs');
  assert.equal(
    gymnasiumIdProblem('mypkg.envs:MyEnv-v0', false, 'environment.allowImport'),
    '"mypkg.envs:MyEnv-v0" names a module to import (mypkg.envs); set environment.allowImport to true to allow it',
  );
  assert.equal(gymnasiumIdProblem('mypkg.envs:MyEnv-v0', true), null);
  assert.equal(
    gymnasiumIdProblem('ns:x/MyEnv-v0', false),
    '"ns:x/MyEnv-v0" names a module to import (ns); set allowImport to true to allow it',
    'a colon anywhere is an import to Gymnasium',
  );
});

test('malformed ids are one line, whatever the opt-in', () => {
  for (const id of ['CartPole', 'Cart Pole-v1', 'os;rm:X-v0', 'a.b/C-v1', '1pkg:X-v0', 'pkg:', ':X-v0', 'a:b:C-v0', `${'A'.repeat(130)}-v0`]) {
    for (const allow of [false, true]) {
      const p = gymnasiumIdProblem(id, allow);
      assert.ok(p && !p.includes('\n') && !p.includes('names a module'), `${id}: ${p}`);
    }
  }
});
