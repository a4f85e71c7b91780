import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RewardService, type ServeConfig } from './service.js';
import { type RunningServer, startServer } from './server.js';
import { ConfirmationResponse, JobResponse, RewardsResponse } from './schemas.js';
import { REPORT_AGENT } from './confirm.js';
import { LocalExecutor } from '../run/local.js';
import { Store } from '../store/store.js';
import { arsSpec } from '../testing/specs.js';
import { getPublicTask } from '../tasks/briefs.js';
import { evalSecret } from '../tasks/secret.js';
import { BASELINE_SEEDS, harnessSeeds, withSeed } from '../outer/noise.js';
import { RunCatalog } from '../dashboard/catalog.js';
import { startDashboard } from '../dashboard/server.js';

// The harness's seeds stay the harness's: no `cached` oracle on them, none shown by the dashboard,
// and a report confirms a spec on them through a route that never names them.
const task = 'cartpole-short';
const config: ServeConfig = { mode: 'serve', seed: 0, reward: { rule: 'improvement', lambda: 0.5 } };
const dir = mkdtempSync(join(tmpdir(), 'rrl-serve-confirm-'));
const executor = new LocalExecutor({ workers: 2 });
let service: RewardService;
let server: RunningServer;
const seeds = (): number[] => harnessSeeds(task, BASELINE_SEEDS, evalSecret());

before(async () => {
  service = RewardService.open(dir, config, executor, { maxQueue: 64 });
  server = await startServer(service, { port: 0 });
});
after(async () => {
  await server.close();
  await service.close();
  await executor.close();
});

const post = async (path: string, body: unknown): Promise<Response> =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const rewards = async (completion: string): Promise<import('zod').infer<typeof RewardsResponse>> => {
  const res = await post('/v1/rewards', { task, completions: [completion] });
  assert.equal(res.status, 200);
  return RewardsResponse.parse(await res.json());
};
const job = async (id: number): Promise<import('zod').infer<typeof JobResponse>> =>
  JobResponse.parse(await (await fetch(`${server.url}/v1/jobs/${id}`)).json());

/** The harness seeds found in `text` (as whole numbers). */
function seedsIn(text: string): number[] {
  return seeds().filter((s) => new RegExp(`(?<![0-9])${s}(?![0-9])`).test(text));
}

/** The run's jobs as stored. */
function storedJobs(): ReturnType<Store['jobs']> {
  const store = new Store(dir);
  try {
    return store.jobs(store.getRun()!.id);
  } finally {
    store.close();
  }
}

test('cached is true only for a hit on an earlier proposal: the baseline spec on a harness seed says false, its second proposal true', async () => {
  const onHarnessSeed = JSON.stringify(withSeed(getPublicTask(task).baseline, seeds()[0]));
  const first = await rewards(onHarnessSeed);
  const a = await job(first.results[0].job);
  assert.equal(a.status, 'succeeded');
  assert.equal(a.cached, false, 'the result came from the harness seed’s baseline job: not shown as reused');
  // The same spec again (written otherwise, so it is a new request): reused from the first proposal.
  const second = await rewards(`again:\n${onHarnessSeed}`);
  const b = await job(second.results[0].job);
  assert.equal(b.cached, true);
  assert.equal(b.score?.normalized, a.score?.normalized);
  for (const j of storedJobs().filter((r) => r.kind === 'baseline')) assert.equal((await job(j.id)).cached, false, 'a harness job is never shown as reused');
});

test('POST /v1/tasks/{id}/confirmations trains a spec on the confirmation seeds, answers their mean without naming them, and is never a proposal’s reward', async () => {
  const res = await post(`/v1/tasks/${task}/confirmations`, { completion: JSON.stringify(arsSpec(task, 500, 7)) });
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.deepEqual(seedsIn(text), [], 'no harness seed in the answer');
  const answer = ConfirmationResponse.parse(JSON.parse(text));
  const reports = storedJobs().filter((r) => r.kind === 'confirm' && r.agent === REPORT_AGENT);
  assert.equal(reports.length, BASELINE_SEEDS);
  assert.deepEqual(
    reports.map((r) => r.parentId),
    reports.map(() => null),
    'no proposal is their parent',
  );
  assert.deepEqual(reports.map((r) => (r.spec as { seed: number }).seed).sort(), [...seeds()].sort(), 'trained on the harness seeds');
  const scores = reports.map((r) => r.normalized);
  assert.equal(answer.status, scores.every((s) => s !== null) ? 'succeeded' : 'failed');
  assert.equal(answer.confirmed?.seeds, BASELINE_SEEDS);
  assert.equal(answer.confirmed!.scored + answer.confirmed!.failed + answer.confirmed!.unscorable, BASELINE_SEEDS);
  if (answer.status === 'succeeded') {
    const mean = (scores as number[]).reduce((s, v) => s + v, 0) / scores.length;
    assert.ok(Math.abs(answer.confirmed!.normalized! - mean) < 1e-12, `${answer.confirmed!.normalized} is the mean ${mean}`);
  }

  // Asked again for the same spec (another seed of the agent's, ignored): the same jobs, the same answer.
  const again = ConfirmationResponse.parse(await (await post(`/v1/tasks/${task}/confirmations`, { completion: JSON.stringify(arsSpec(task, 500, 8)) })).json());
  assert.deepEqual(again, answer);
  assert.equal(storedJobs().filter((r) => r.kind === 'confirm' && r.agent === REPORT_AGENT).length, BASELINE_SEEDS);

  // A proposal of the same spec is paid from its own job, never from the report's confirmation.
  const paid = await rewards(JSON.stringify(arsSpec(task, 500, 9)));
  const store = new Store(dir);
  try {
    const row = store.db.prepare('SELECT detail FROM rewards WHERE job_id = ?').get(paid.results[0].job) as { detail: string } | undefined;
    const confirmation = row ? (JSON.parse(row.detail) as { confirmation: { own: boolean; jobs: number[] } | null }).confirmation : null;
    if (confirmation) {
      assert.equal(confirmation.own, true, 'only its own confirmation');
      assert.ok(!confirmation.jobs.some((id) => reports.some((r) => r.id === id)));
    }
  } finally {
    store.close();
  }
  for (const r of reports) assert.equal((await job(r.id)).request, null, 'a report confirmation belongs to no request');

  // No spec: invalid with its reason, nothing trained; an unknown task is 404.
  const invalid = ConfirmationResponse.parse(await (await post(`/v1/tasks/${task}/confirmations`, { completion: 'no json here' })).json());
  assert.equal(invalid.status, 'invalid');
  assert.equal(invalid.confirmed, null);
  assert.match(invalid.reason ?? '', /^[^\n]+$/);
  assert.equal((await post('/v1/tasks/no-such-task/confirmations', { completion: '{}' })).status, 404);
  assert.equal((await post(`/v1/tasks/${task}/confirmations`, { completion: 1 })).status, 400);
});

test('no route of the dashboard or of the job API shows a harness seed', async () => {
  const jobs = storedJobs();
  assert.ok(jobs.some((j) => j.kind === 'baseline') && jobs.some((j) => j.kind === 'confirm'), 'the run has jobs on the harness seeds');
  assert.ok(
    jobs.some((j) => seedsIn(JSON.stringify(j.spec)).length),
    'their specs hold the seeds searched for',
  );
  const dashboard = await startDashboard(new RunCatalog([dir]), { port: 0 });
  try {
    const got = async (base: string, path: string): Promise<string> => {
      const res = await fetch(`${base}${path}`);
      assert.equal(res.status, 200, path);
      return res.text();
    };
    const runs = JSON.parse(await got(dashboard.url, '/api/runs')) as { key: string }[];
    const key = runs[0].key;
    for (const p of ['/api/runs', `/api/runs/${key}`, `/api/runs/${key}/jobs`]) assert.deepEqual(seedsIn(await got(dashboard.url, p)), [], `dashboard ${p}`);
    for (const j of jobs) {
      const detail = JSON.parse(await got(dashboard.url, `/api/runs/${key}/jobs/${j.id}`)) as Record<string, unknown> & {
        bestBefore: { spec?: unknown } | null;
      };
      // What an agent wrote itself is shown as written (the first test's proposals name a harness seed on purpose).
      if (j.kind === 'proposal') {
        for (const own of ['spec', 'patch', 'trace', 'llm']) delete detail[own];
        delete detail.bestBefore?.spec;
      }
      assert.deepEqual(seedsIn(JSON.stringify(detail)), [], `dashboard /api/runs/${key}/jobs/${j.id} (${j.kind})`);
    }
    const requests = [...new Set(jobs.filter((j) => j.kind === 'proposal').map((j) => j.round))];
    for (const j of jobs) {
      const view = JSON.parse(await got(server.url, `/v1/jobs/${j.id}`)) as Record<string, unknown>;
      // A proposal's spec and patch are what its agent wrote (with its own seed), as on the dashboard.
      if (j.kind === 'proposal') for (const own of ['spec', 'patch']) delete view[own];
      else assert.equal(view.spec, null, `serve /v1/jobs/${j.id} (${j.kind}) shows no spec`);
      assert.deepEqual(seedsIn(JSON.stringify(view)), [], `serve /v1/jobs/${j.id} (${j.kind})`);
    }
    for (const p of requests.map((r) => `/v1/requests/${r}`)) assert.deepEqual(seedsIn(await got(server.url, p)), [], `serve ${p}`);
  } finally {
    await dashboard.close();
  }
});
