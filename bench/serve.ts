/**
 * `rrl serve` throughput: rewards per second on tiny jobs (ARS, 500 env steps on cartpole-short)
 * with the local executor, clients posting groups of 8 completions concurrently over HTTP. The
 * task's baseline trains first (not counted); every completion is a distinct spec (no cache hit).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RewardService } from '../src/serve/service.js';
import { startServer } from '../src/serve/server.js';
import { LocalExecutor } from '../src/run/local.js';
import { arsSpec } from '../src/testing/specs.js';
import { num, table } from '../src/cli/format.js';

/** Posts `requests` groups of `group` tiny specs, `clients` at a time; reports rewards/s. */
export async function serve(): Promise<Record<string, unknown>> {
  const task = 'cartpole-short';
  const group = 8;
  const clients = 4;
  const requests = 16;
  const executor = new LocalExecutor();
  const service = RewardService.open(
    mkdtempSync(join(tmpdir(), 'rrl-bench-serve-')),
    { mode: 'serve', seed: 0, reward: { rule: 'improvement', lambda: 0.5 } },
    executor,
    { maxQueue: 1024 },
  );
  const server = await startServer(service, { port: 0 });
  const post = async (seeds: number[]): Promise<number> => {
    const res = await fetch(`${server.url}/v1/rewards`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task, completions: seeds.map((s) => JSON.stringify(arsSpec(task, 500, s))) }),
    });
    if (res.status !== 200) throw new Error(`rewards: HTTP ${res.status} ${await res.text()}`);
    return ((await res.json()) as { rewards: number[] }).rewards.length;
  };
  try {
    process.stderr.write('serve: the baseline job and a warm-up group\n');
    await post([1_000_000]);
    process.stderr.write(`serve: ${requests} requests of ${group} completions, ${clients} clients at a time\n`);
    let next = 0;
    let rewards = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (next < requests) {
          const r = next++;
          const n = await post(Array.from({ length: group }, (_, i) => r * group + i + 1));
          rewards += n;
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const result = { rewards, seconds, rewardsPerSecond: rewards / seconds, group, clients, workers: executor.slots, envStepsPerJob: 500 };
    console.log(
      table(
        ['figure', 'value'],
        [
          [`rrl serve rewards/s (ARS, 500 env steps, groups of ${group}, ${clients} clients, ${executor.slots} workers)`, num(result.rewardsPerSecond, 1)],
          ['rewards / seconds', `${rewards} / ${num(seconds, 1)}`],
        ],
      ),
    );
    return result;
  } finally {
    await server.close();
    await service.close();
    await executor.close();
  }
}
