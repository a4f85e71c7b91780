import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { getPublicTask } from '../tasks/briefs.js';
import { validateSpec } from './spec-check.js';

const dir = fileURLToPath(new URL('../../../examples/attacks/', import.meta.url));

/** What validation says of each hostile spec in examples/attacks (issue 10), by file. */
const EXPECTED: Record<string, RegExp | 'valid'> = {
  '1-ppo-wasm-memory.json': /^model\.hidden: got \[512,1,512,1\]: the job needs about [\d.]+ GB of memory, over the task's cap of 1,024 MB/,
  '2-deep-nesting.json': /nest/i,
  // Its scoring is priced at validation, so it is refused before it trains.
  '3-acrobot-slow-scoring.json':
    /^model\.hidden: got \[512,512,512,512\]: scoring the model on the hidden evaluation needs about 23\.8 GFLOP, over the cap of 15 GFLOP \(30 held-out/,
  '4-dqn-hours.json': /^algorithm\.gradientSteps: got 16: the job's work cannot finish within the task's wall-clock cap of 300 s/,
  '7-params-many.json': /^environment\.params: .*16/,
  '7-params-proto.json': /__proto__/,
  '7-reward-infinite-constant.json': /^reward\.expression: .*(Infinity|finite)/,
  '7-unknown-source.json': /^dataset\.sources\[0\]\.id: got "no-such-source": not in the task's catalog/,
};

test('every hostile spec in examples/attacks gets the recorded outcome, with a one-line reason', () => {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  assert.deepEqual(files, Object.keys(EXPECTED).sort());
  for (const f of files) {
    const spec: unknown = JSON.parse(readFileSync(dir + f, 'utf8'));
    const { brief } = getPublicTask((spec as { task: string }).task);
    const r = validateSpec(spec, brief);
    const want = EXPECTED[f];
    if (want === 'valid') {
      assert.ok(r.ok, `${f}: ${r.ok ? '' : r.error.message}`);
      continue;
    }
    assert.ok(!r.ok, `${f} should be invalid`);
    assert.match(r.error.message, want, f);
    assert.ok(!r.error.message.includes('\n') && r.error.message.length <= 2000, `${f}: one bounded line`);
  }
});
