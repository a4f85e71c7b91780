import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { z } from 'zod';
import { RewardService, type ServeConfig } from './service.js';
import { type RunningServer, startServer } from './server.js';
import { EpisodeClosed, EpisodeCreated, EpisodeStatus, Feedback, JobResponse, RequestStatus } from './schemas.js';
import { NO_SUBMISSION, episodeReward } from './episodes.js';
import { LocalExecutor } from '../run/local.js';
import type { Executor } from '../run/executor.js';
import { Store } from '../store/store.js';
import { arsSpec } from '../testing/specs.js';
import { getPublicTask } from '../tasks/briefs.js';

// The episode resource: an episode is paid the mean of its submissions' rewards, and shows the
// agent nothing of the hidden evaluation between submissions. One real `rrl serve` (service and
// HTTP server) serves every test here, so the task's baseline trains once; the last test stops it
// and resumes it.
const task = 'cartpole-short';
const config: ServeConfig = { mode: 'serve', seed: 0, reward: { rule: 'improvement', lambda: 0.5 } };
const local = new LocalExecutor({ workers: 2 });
/** The seed of a job the harness always loses (fault injection at the executor's boundary, as in jobs.test.ts). */
const LOST_SEED = 777;
/** The local executor, except that a job of seed LOST_SEED ends as a lost worker on every attempt: the harness's failure, reward null. */
const executor: Executor = {
  name: 'local-losing-one-seed',
  slots: local.slots,
  async execute(req, options) {
    if ((req.spec as { seed?: number }).seed === LOST_SEED)
      return { status: 'failed', kind: 'worker-exit', error: 'the worker thread exited (injected)', cost: {} };
    return local.execute(req, options);
  },
  cancelAll: (reason) => local.cancelAll(reason),
  close: () => local.close(),
};
const dir = mkdtempSync(join(tmpdir(), 'rrl-serve-episodes-'));
let service: RewardService;
let server: RunningServer;

before(async () => {
  service = RewardService.open(dir, config, executor, { maxQueue: 64 });
  server = await startServer(service, { port: 0 });
});
after(async () => {
  await server.close();
  await service.close();
  await executor.close();
});

/** A tiny job (ARS, 500 env steps): valid, trained for real, far worse than the task's reference. */
const bad = (seed: number): string => JSON.stringify(arsSpec(task, 500, seed));
/** The baseline copy: the task's baseline spec sent whole (an empty patch would keep the episode's last valid job). */
const baselineCopy = JSON.stringify(getPublicTask(task).baseline);
/** Invalid completions (no JSON object; a spec that fails validation). */
const invalid = ['no job here, only prose', '{"model": {"activation": "sparkles"}}'];

const post = (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

async function openEpisode(maxSubmissions: number, headers: Record<string, string> = {}): Promise<z.infer<typeof EpisodeCreated>> {
  const res = await post('/v1/episodes', { task, maxSubmissions }, headers);
  assert.equal(res.status, 201);
  return EpisodeCreated.parse(await res.json());
}

/** Posts one submission; the reply's text (for the leak checks) and its feedback. */
async function submit(
  episode: number,
  completion: string,
  headers: Record<string, string> = {},
): Promise<{ text: string; feedback: z.infer<typeof Feedback> }> {
  const res = await post(`/v1/episodes/${episode}/submissions`, { completion }, headers);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return { text, feedback: Feedback.parse(JSON.parse(text)) };
}

async function close(episode: number): Promise<z.infer<typeof EpisodeClosed>> {
  const res = await post(`/v1/episodes/${episode}/close`, {});
  assert.equal(res.status, 200);
  return EpisodeClosed.parse(await res.json());
}

async function getText(episode: number): Promise<string> {
  const res = await fetch(`${server.url}/v1/episodes/${episode}`);
  assert.equal(res.status, 200);
  return res.text();
}

/** The reward the harness paid a job (what the trainer, not the agent, can look up). */
async function jobReward(job: number): Promise<number | null> {
  return JobResponse.parse(await (await fetch(`${server.url}/v1/jobs/${job}`)).json()).reward;
}

test('episodeReward: the mean of the scored submissions, nulls left out; all null is null; none is −1 "no job submitted"', () => {
  assert.deepEqual(episodeReward([]), { reward: -1, reason: NO_SUBMISSION });
  assert.deepEqual(episodeReward([-0.473, 0]), { reward: -0.2365, reason: null });
  assert.deepEqual(episodeReward([-1, 0]), { reward: -0.5, reason: null });
  assert.equal(episodeReward([null, null]).reward, null);
  assert.match(episodeReward([null]).reason!, /^unscorable: /);
  const reward = fc.option(fc.double({ min: -1, max: 2, noNaN: true }), { nil: null });
  fc.assert(
    fc.property(fc.array(reward, { minLength: 1, maxLength: 8 }), fc.nat(), (rs, k) => {
      const { reward: r } = episodeReward(rs);
      const paid = rs.filter((x): x is number => x !== null);
      if (!paid.length) return assert.equal(r, null);
      // Between the worst and the best scored submission: a later good job cannot hide an earlier bad one.
      assert.ok(r! >= Math.min(...paid) - 1e-12 && r! <= Math.max(...paid) + 1e-12);
      // Order does not matter, and a null submission neither helps nor hurts.
      const turned = [...rs.slice(k % rs.length), ...rs.slice(0, k % rs.length)];
      assert.ok(Math.abs(episodeReward(turned).reward! - r!) < 1e-12);
      assert.ok(Math.abs(episodeReward([...rs, null]).reward! - r!) < 1e-12);
    }),
  );
});

test('a bad job then the baseline copy is paid their mean, not the last one; invalid then the copy is paid −0.5', async () => {
  const a = await openEpisode(2);
  assert.deepEqual({ ...a, episode: 0 }, { episode: 0, task, maxSubmissions: 2, submitted: 0, status: 'open' });
  const first = await submit(a.episode, bad(1));
  assert.equal(first.feedback.status, 'succeeded');
  assert.equal(first.feedback.submissionsLeft, 1);
  const second = await submit(a.episode, baselineCopy);
  assert.equal(second.feedback.unchanged, true);
  assert.equal(second.feedback.submissionsLeft, 0);
  const closed = await close(a.episode);
  const paid = [await jobReward(first.feedback.job), await jobReward(second.feedback.job)];
  assert.equal(paid[1], 0, 'the baseline copy alone is paid the reference');
  assert.ok(paid[0]! < 0, `the bad job is paid below the reference (${paid[0]})`);
  assert.equal(closed.submitted, 2);
  assert.equal(closed.reason, null);
  assert.ok(Math.abs(closed.reward! - (paid[0]! + paid[1]!) / 2) < 1e-12, `the mean of ${paid}, got ${closed.reward}`);
  assert.ok(closed.reward! < 0, 'the retreat to the baseline does not erase the bad job');

  const b = await openEpisode(2);
  const refused = await submit(b.episode, invalid[0]);
  assert.equal(refused.feedback.status, 'invalid');
  assert.match(refused.feedback.reason!, /./);
  assert.equal(refused.feedback.validation, null);
  await submit(b.episode, baselineCopy);
  assert.deepEqual(await close(b.episode), { episode: b.episode, reward: -0.5, submitted: 2, reason: null });
});

test('a submission the harness could not score is left out of the mean; an episode of only such submissions is paid null', async () => {
  const lost = bad(LOST_SEED);
  const e = await openEpisode(3);
  const statuses = [];
  for (const c of [lost, invalid[1], lost]) statuses.push((await submit(e.episode, c)).feedback);
  assert.deepEqual(
    statuses.map((f) => f.status),
    ['unscorable', 'invalid', 'unscorable'],
  );
  assert.match(statuses[0].reason!, /^unscorable: worker-exit/);
  assert.deepEqual(await close(e.episode), { episode: e.episode, reward: -1, submitted: 3, reason: null });
  const only = await openEpisode(1);
  await submit(only.episode, lost);
  const closed = await close(only.episode);
  assert.equal(closed.reward, null);
  assert.match(closed.reason!, /^unscorable: /);
});

test('an episode closed without a submission is paid −1 "no job submitted"', async () => {
  const e = await openEpisode(3);
  assert.deepEqual(await close(e.episode), { episode: e.episode, reward: -1, submitted: 0, reason: NO_SUBMISSION });
  const shown = EpisodeStatus.parse(JSON.parse(await getText(e.episode)));
  assert.deepEqual([shown.status, shown.reward, shown.reason, shown.submissions], ['closed', -1, NO_SUBMISSION, []]);
});

test('closing twice gives the same answer; a submission after close, or past maxSubmissions, is 409; retries are the same submission and episode', async () => {
  // The episode itself: its key makes a retry the same episode; another body with it is 422.
  const e = await openEpisode(1, { 'idempotency-key': 'rollout-1' });
  assert.equal((await openEpisode(1, { 'idempotency-key': 'rollout-1' })).episode, e.episode);
  assert.equal((await post('/v1/episodes', { task, maxSubmissions: 2 }, { 'idempotency-key': 'rollout-1' })).status, 422);
  // A submission retried with its key is the same job; with another completion it is 422.
  const once = await submit(e.episode, bad(2), { 'idempotency-key': 'call-1' });
  const again = await submit(e.episode, bad(2), { 'idempotency-key': 'call-1' });
  assert.equal(again.feedback.job, once.feedback.job);
  assert.equal(again.feedback.submission, 1);
  assert.equal((await post(`/v1/episodes/${e.episode}/submissions`, { completion: bad(3) }, { 'idempotency-key': 'call-1' })).status, 422);
  const full = await post(`/v1/episodes/${e.episode}/submissions`, { completion: bad(3) });
  assert.equal(full.status, 409);
  assert.match(((await full.json()) as { error: string }).error, /no submissions left/);
  const first = await close(e.episode);
  assert.deepEqual(await close(e.episode), first);
  assert.equal(first.reward, await jobReward(once.feedback.job));
  const late = await post(`/v1/episodes/${e.episode}/submissions`, { completion: baselineCopy });
  assert.equal(late.status, 409);
  assert.match(((await late.json()) as { error: string }).error, /is closed/);
  // A retry of a submission after the close still gets that submission, not a new one.
  assert.equal((await submit(e.episode, bad(2), { 'idempotency-key': 'call-1' })).feedback.job, once.feedback.job);
  const shown = EpisodeStatus.parse(JSON.parse(await getText(e.episode)));
  assert.deepEqual([shown.status, shown.submitted, shown.reward], ['closed', 1, first.reward]);
  // Two submissions at once for the last place: one is taken, the other is 409.
  const race = await openEpisode(1);
  const raced = await Promise.all([bad(3), bad(4)].map((completion) => post(`/v1/episodes/${race.episode}/submissions`, { completion })));
  assert.deepEqual(raced.map((r) => r.status).sort(), [200, 409]);
  assert.equal(EpisodeStatus.parse(JSON.parse(await getText(race.episode))).submitted, 1);
  // Bounds, unknown ids and methods.
  for (const maxSubmissions of [0, 9, 1.5]) assert.equal((await post('/v1/episodes', { task, maxSubmissions })).status, 400);
  assert.equal((await post('/v1/episodes', { task: 'no-such-task' })).status, 404);
  assert.equal((await post('/v1/episodes', { task, extra: 1 })).status, 400);
  assert.equal((await post('/v1/episodes/99999/submissions', { completion: '{}' })).status, 404);
  assert.equal((await post('/v1/episodes/99999/close', {})).status, 404);
  assert.equal((await fetch(`${server.url}/v1/episodes/99999`)).status, 404);
  assert.equal((await fetch(`${server.url}/v1/episodes/x`)).status, 400);
  assert.equal((await post(`/v1/episodes/${e.episode}/submissions`, { completion: 7 })).status, 400);
  assert.equal((await fetch(`${server.url}/v1/episodes/${e.episode}/close`)).status, 405);
  assert.equal((await fetch(`${server.url}/v1/episodes`)).status, 405);
  assert.equal((await post(`/v1/episodes/${e.episode}`, {})).status, 405);
});

test('a submission refused by the full queue (429) takes none of the episode’s submissions', async () => {
  const full = RewardService.open(mkdtempSync(join(tmpdir(), 'rrl-serve-episodes-full-')), config, executor, { maxQueue: 0 });
  const srv = await startServer(full, { port: 0 });
  try {
    const send = (path: string, body: unknown): Promise<Response> =>
      fetch(`${srv.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const e = EpisodeCreated.parse(await (await send('/v1/episodes', { task })).json());
    const refused = await send(`/v1/episodes/${e.episode}/submissions`, { completion: bad(9) });
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    const shown = EpisodeStatus.parse(await (await fetch(`${srv.url}/v1/episodes/${e.episode}`)).json());
    assert.deepEqual([shown.submitted, shown.status], [0, 'open']);
    assert.deepEqual(EpisodeClosed.parse(await (await send(`/v1/episodes/${e.episode}/close`, {})).json()).reward, -1);
  } finally {
    await srv.close();
    await full.close();
  }
});

/** Every number in a JSON text, as written. */
const numberTokens = (text: string): string[] => text.match(/-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g) ?? [];

/** Fields whose numbers are ids or counts, never a measurement of the job. */
const COUNTS = new Set(['episode', 'submission', 'job', 'submissionsLeft', 'submitted', 'maxSubmissions', 'envSteps', 'examples']);

/** Numbers of `value` outside the count fields. */
function measurements(value: unknown, key = ''): number[] {
  if (typeof value === 'number') return COUNTS.has(key) ? [] : [value];
  if (Array.isArray(value)) return value.flatMap((v) => measurements(v));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => measurements(v, k));
  return [];
}

/** Asserts that no reply text shows `hidden`: as any number token (or a rounding of it to 3+ decimals), or for an integer, as a measurement. */
function assertHidden(texts: string[], hidden: number[]): void {
  for (const text of texts) {
    const tokens = numberTokens(text);
    for (const h of hidden) {
      if (Number.isInteger(h)) {
        // 0 and −1 are also counts; an integer may show only as an id or a count.
        assert.ok(!measurements(JSON.parse(text)).includes(h), `${h} shown as a measurement in ${text}`);
        continue;
      }
      for (const t of tokens) {
        const decimals = t.split('.')[1]?.replace(/[eE].*/, '').length ?? 0;
        assert.ok(Number(t) !== h, `hidden ${h} shown in ${text}`);
        if (decimals >= 3) assert.ok(Math.abs(Number(t) - h) >= 0.5 * 10 ** -decimals, `hidden ${h} shown rounded as ${t} in ${text}`);
      }
    }
  }
}

test('rounds: a patch applies to the last valid job (the baseline first; an invalid one is passed over); next shows that job and asks for a patch', async () => {
  const e = await openEpisode(4);
  const baseline = getPublicTask(task).baseline as { algorithm: Record<string, unknown> };
  const first = await submit(e.episode, bad(3));
  const job = async (id: number): Promise<Record<string, unknown>> =>
    JobResponse.parse(JSON.parse(await (await fetch(`${server.url}/v1/jobs/${id}`)).text())) as never;
  assert.match(first.feedback.next, /^Job 1: succeeded; train\/episodic_return [\d.e+-]+ on its own validation data; cost 500 env steps/);
  assert.match(first.feedback.next, /"name":"ars"/, 'the current job is the first one');
  assert.match(first.feedback.next, /3 jobs left\. JSON only\.$/);
  const second = await submit(e.episode, '{"algorithm": {"stepSize": 0.05}}');
  assert.equal(second.feedback.status, 'succeeded');
  const patched = (await job(second.feedback.job)) as { patch: { algorithm: Record<string, unknown> } };
  assert.deepEqual(patched.patch, { algorithm: { stepSize: 0.05 } });
  const third = await submit(e.episode, invalid[1]);
  assert.equal(third.feedback.status, 'invalid');
  assert.match(third.feedback.next, /the invalid one was not applied/);
  assert.match(third.feedback.next, /"stepSize":0\.05/, 'the current job is still the second one');
  const fourth = await submit(e.episode, '{"seed": 4}');
  assert.equal(fourth.feedback.status, 'succeeded', 'an ARS patch applies to the ARS job, not to the PPO baseline');
  assert.equal(fourth.feedback.unchanged, false);
  assert.match(fourth.feedback.next, /No jobs left in this episode\.$/);
  assert.equal(baseline.algorithm.name, 'ppo', 'the baseline is another algorithm, so the last patch could only apply to the episode job');
  await close(e.episode);
});

const FEEDBACK_KEYS = ['cost', 'episode', 'job', 'next', 'reason', 'status', 'submission', 'submissionsLeft', 'unchanged', 'validation'];

test('property: before close, no reply shows a hidden score, its stderr or uncertainty, a raw score or a reward', async () => {
  const pool = [bad(1), bad(2), bad(5), bad(LOST_SEED), baselineCopy, ...invalid];
  const store = new Store(dir);
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...pool), { minLength: 1, maxLength: 4 }), fc.nat({ max: 2 }), async (completions, extra) => {
        const created = await post('/v1/episodes', { task, maxSubmissions: completions.length + extra });
        const texts = [await created.text()];
        const episode = EpisodeCreated.parse(JSON.parse(texts[0])).episode;
        const jobs: { id: number; status: string }[] = [];
        for (const c of completions) {
          const { text, feedback } = await submit(episode, c);
          assert.deepEqual(Object.keys(JSON.parse(text)).sort(), FEEDBACK_KEYS);
          assert.deepEqual(Object.keys(feedback.cost).sort(), ['envSteps', 'examples', 'wallSeconds']);
          if (feedback.validation) {
            assert.deepEqual(Object.keys(feedback.validation).sort(), ['name', 'value']);
            assert.equal(feedback.validation.name, 'train/episodic_return');
          }
          if (feedback.status !== 'succeeded') assert.equal(feedback.validation, null);
          texts.push(text);
          jobs.push({ id: feedback.job, status: feedback.status });
          const shown = await getText(episode);
          const status = JSON.parse(shown) as Record<string, unknown>;
          assert.deepEqual(Object.keys(status).sort(), ['episode', 'maxSubmissions', 'reason', 'reward', 'status', 'submissions', 'submitted', 'task']);
          assert.deepEqual([status.reward, status.reason, status.status], [null, null, 'open']);
          for (const f of status.submissions as Record<string, unknown>[]) assert.deepEqual(Object.keys(f).sort(), FEEDBACK_KEYS);
          texts.push(shown);
        }
        await close(episode);
        // What the trainer's side knows of these jobs: the hidden scores, their uncertainty, the raw scores, the rewards.
        const hidden: number[] = [];
        for (const { id, status } of jobs) {
          const job = JobResponse.parse(await (await fetch(`${server.url}/v1/jobs/${id}`)).json());
          const request = RequestStatus.parse(await (await fetch(`${server.url}/v1/requests/${job.request}`)).json());
          const result = request.answer!.results[0];
          const raw = store.job(store.getRun()!.id, id)!.raw;
          // Every job has its reward to hide, but the ones the harness could not score (null, told as `unscorable`).
          assert.equal(job.reward === null, status === 'unscorable');
          for (const v of [job.score?.normalized, job.score?.stderr, result.score?.uncertainty, raw, job.reward, request.answer!.rewards[0]]) {
            if (typeof v === 'number') hidden.push(v);
          }
        }
        assertHidden(texts, hidden);
      }),
      { numRuns: 12, seed: 42 },
    );
  } finally {
    store.close();
  }
});

test('a resumed server keeps an open episode: its submissions, its allowance, and a submission the stop interrupted', async () => {
  const e = await openEpisode(3);
  const first = await submit(e.episode, bad(7));
  // The baseline spec on another seed (PPO, seconds), stopped while it trains: the reply is 503 and the submission is kept for --resume.
  const interrupted = post(`/v1/episodes/${e.episode}/submissions`, { completion: JSON.stringify({ ...(getPublicTask(task).baseline as object), seed: 99 }) });
  for (;;) {
    if (EpisodeStatus.parse(JSON.parse(await getText(e.episode))).submitted === 2) break;
    await new Promise((ok) => setTimeout(ok, 20));
  }
  service.stop();
  const stopped = await interrupted;
  assert.equal(stopped.status, 503);
  assert.equal((await post('/v1/episodes', { task })).status, 503, 'a stopping server opens no episode');
  assert.equal((await post(`/v1/episodes/${e.episode}/close`, {})).status, 503, 'nor closes one: it stays open for --resume');
  await server.close();
  await service.close();

  service = RewardService.open(dir, null, executor, { maxQueue: 64 });
  server = await startServer(service, { port: 0 });
  const shown = EpisodeStatus.parse(JSON.parse(await getText(e.episode)));
  assert.equal(shown.status, 'open');
  assert.equal(shown.submitted, 2);
  assert.deepEqual(shown.submissions[0], { ...first.feedback, submissionsLeft: 1 });
  const third = await submit(e.episode, baselineCopy);
  assert.equal(third.feedback.submission, 3);
  assert.equal(third.feedback.submissionsLeft, 0);
  // The close waits for the resumed submission and pays the mean of all three.
  const closed = await close(e.episode);
  const after = EpisodeStatus.parse(JSON.parse(await getText(e.episode)));
  assert.deepEqual(
    after.submissions.map((s) => s.submission),
    [1, 2, 3],
  );
  const paid = await Promise.all(after.submissions.map((s) => jobReward(s.job)));
  assert.equal(closed.submitted, 3);
  assert.ok(Math.abs(closed.reward! - (paid[0]! + paid[1]! + paid[2]!) / 3) < 1e-12, `the mean of ${paid}, got ${closed.reward}`);
});
