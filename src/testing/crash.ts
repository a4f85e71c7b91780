/**
 * The kill-anywhere harness (DESIGN boundary 5, "nothing is lost"), shared by
 * `src/outer/crash.test.ts` and `npm run bench -- crash`.
 *
 * `rrl train` runs as a child process and is killed with SIGKILL at seeded random moments,
 * each time started again with `--resume` on the same run directory, until it finishes.
 * After every kill the store is read from outside (./store-view.ts) and every job seen
 * finished must stay finished and identical: same finish time, score and reward, and an
 * artifact `status.json` that was never written again (a job that trains twice rewrites it).
 * An uninterrupted run of the same configuration and seed gives the kill moments their
 * timeline and the final result its reference.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Rng } from '../util/rng.js';
import { BASELINE_SEEDS } from '../outer/noise.js';
import { type JobView, type StoreView, progressOf, readStore } from './store-view.js';

const BIN = resolve(fileURLToPath(import.meta.url), '../../../../bin/rrl.js');
const POLL_MS = 10;

/** The `rrl train` configuration the harness kills. */
export interface CrashRunConfig {
  tasks: string;
  agent: string;
  iterations: number;
  group: number;
  seed: number;
  workers: number;
}

/**
 * Small and deterministic: the embedded controller (it checkpoints and updates a network, the
 * state most at risk) on cartpole-short, whose jobs train in a second or two (iris-species jobs
 * became too quick for kills to land in every step once the fused engine trained them); 3
 * iterations of 2 proposals plus the baseline on its harness seeds.
 */
export const CRASH_RUN: CrashRunConfig = { tasks: 'cartpole-short', agent: 'controller', iterations: 3, group: 2, seed: 5, workers: 2 };

/** Where a kill landed, as far as the store and the child's own log can tell. */
export type Phase = 'startup' | 'proposal' | 'training' | 'scoring' | 'rewards+checkpoint' | 'finishing';

/** One planned kill: once the run has reached progress `level`, wait `delayMs`, then SIGKILL. */
export interface KillPlan {
  kind: 'time' | 'event';
  level: number;
  delayMs: number;
  /** The delay from spawn when the run is already past `level`: a moment in the process's first step. */
  firstStepMs: number;
  /** The delay from spawn when the run is in its last steps: a moment in the process's startup. */
  startupDelayMs: number;
}

/** What `killAnywhere` found. */
export interface CrashReport {
  config: CrashRunConfig;
  kills: number;
  killsByPhase: Record<Phase, number>;
  /** Starts with the original command because the killed process had not yet recorded the run. */
  restarts: number;
  resumes: number;
  /** Resumes (or restarts) that exited non-zero on their own, with the end of their log. */
  resumesFailed: number;
  failures: string[];
  /** The run finished before every planned kill was made. */
  finishedEarly: boolean;
  jobs: number;
  jobsFinished: number;
  /** Jobs seen finished after some kill, checked after every later kill and at the end. */
  jobsWatched: number;
  lost: string[];
  rerun: string[];
  /** Broken completeness or consistency of the final run (iterations, rewards, checkpoints). */
  incomplete: string[];
  /** Differences from the uninterrupted run (same config and seed). */
  differences: string[];
  referenceSeconds: number;
  crashSeconds: number;
  final: StoreView;
  reference: StoreView;
}

interface Child {
  proc: ChildProcess;
  lines: string[];
  /** Milliseconds from spawn to its first `iteration i/n: …` line (the end of its startup); null before. */
  announcedMs: number | null;
  exited: boolean;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(argv: string[]): Child {
  const t0 = performance.now();
  const proc = spawn(process.execPath, [BIN, ...argv], { stdio: ['ignore', 'ignore', 'pipe'] });
  const child: Child = { proc, lines: [], announcedMs: null, exited: false, exit: null as never };
  let buf = '';
  proc.stderr!.setEncoding('utf8');
  proc.stderr!.on('data', (d: string) => {
    const parts = (buf + d).split('\n');
    buf = parts.pop()!;
    child.lines.push(...parts);
    if (child.announcedMs === null && parts.some((l) => /^iteration \d+\/\d+:/.test(l))) child.announcedMs = performance.now() - t0;
  });
  child.exit = new Promise((r) =>
    proc.once('close', (code, signal) => {
      if (buf) child.lines.push(buf);
      child.exited = true;
      r({ code, signal });
    }),
  );
  return child;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls the run's progress until `reached(level, msSinceSpawn)` or the child's exit; true when reached. */
async function watch(child: Child, dir: string, t0: number, reached: (level: number, ms: number) => boolean): Promise<boolean> {
  while (!child.exited) {
    if (reached(progressOf(dir), performance.now() - t0)) return true;
    await Promise.race([sleep(POLL_MS), child.exit]);
  }
  return false;
}

const trainArgs = (c: CrashRunConfig, dir: string): string[] => [
  'train',
  '--tasks',
  c.tasks,
  '--agent',
  c.agent,
  '--iterations',
  `${c.iterations}`,
  '--group',
  `${c.group}`,
  '--seed',
  `${c.seed}`,
  '--workers',
  `${c.workers}`,
  '--run',
  dir,
  '--json',
];
const resumeArgs = (c: CrashRunConfig, dir: string): string[] => ['train', '--resume', dir, '--workers', `${c.workers}`, '--json'];
const tail = (c: Child): string => c.lines.slice(-4).join(' | ');

/** Milliseconds the CLI takes to load everything `rrl train` loads and exit (`rrl train --help`): a process's startup before its first write. */
async function cliBootMs(): Promise<number> {
  const t0 = performance.now();
  const child = start(['train', '--help']);
  await child.exit;
  return performance.now() - t0;
}

/** The reference: when each progress level was reached and when startup ended (ms from spawn). */
export interface Timeline {
  levelAt: number[];
  startupMs: number;
}

/** Runs the configuration once without a kill: its final store and its timeline. */
export async function uninterrupted(config: CrashRunConfig, dir: string): Promise<Timeline & { wallMs: number; view: StoreView }> {
  const t0 = performance.now();
  const child = start(trainArgs(config, dir));
  const levelAt = [0];
  await watch(child, dir, t0, (p, ms) => {
    while (levelAt.length <= p) levelAt.push(ms);
    return false;
  });
  const { code } = await child.exit;
  const wallMs = performance.now() - t0;
  if (code !== 0) throw new Error(`the uninterrupted run failed (exit ${code}): ${tail(child)}`);
  const final = progressOf(dir);
  while (levelAt.length <= final) levelAt.push(wallMs);
  return { levelAt, startupMs: child.announcedMs ?? levelAt[1], wallMs, view: readStore(dir) };
}

/**
 * Draws `kills` kill moments from the reference timeline, spread over the run's steps: a `time`
 * kill picks one of the steps (from one progress level to the next, the first one including the
 * process's startup) and a moment uniform within it; an `event` kill (share `eventShare`) comes
 * 0–30 ms after a random write (a job recorded, an iteration closed), the moments a lost write
 * would show. A kill whose moment the run has already passed comes in the restarted process's
 * first step (its startup, once the run is in its last steps). Levels stop three short of the end,
 * and a process that gets past the last planned level is killed at once, so that every kill comes
 * before the run finishes.
 */
export function planKills(rng: Rng, { levelAt, startupMs }: Timeline, kills: number, eventShare = 0.5): KillPlan[] {
  const last = levelAt.length - 1 - 3;
  if (last < 1) throw new Error('the run is too short to kill anywhere: it needs at least four progress steps');
  const plans: KillPlan[] = [];
  for (let k = 0; k < kills; k++) {
    const firstStepMs = rng.uniform(0, levelAt[1]);
    const startupDelayMs = rng.uniform(0, startupMs);
    if (rng.next() < eventShare) {
      plans.push({ kind: 'event', level: 1 + rng.int(last), delayMs: rng.uniform(0, 30), firstStepMs, startupDelayMs });
    } else {
      const level = rng.int(last + 1);
      plans.push({ kind: 'time', level, delayMs: rng.uniform(0, levelAt[level + 1] - levelAt[level]), firstStepMs, startupDelayMs });
    }
  }
  return plans.sort((a, b) => a.level - b.level || a.delayMs - b.delayMs);
}

/** Where a kill landed, from the store before and after it and what the killed process printed. */
export function phaseOf(before: StoreView, after: StoreView, lines: string[], iterations: number): Phase {
  if (!after.run) return 'startup';
  const open = after.iterations.find((i) => i.status !== 'done');
  const cur = open ? open.idx : after.iterations.length;
  if (cur >= iterations) return 'finishing';
  const proposals = (v: StoreView): JobView[] => v.jobs.filter((j) => j.kind === 'proposal' && j.round === cur);
  if (!lines.some((l) => l.startsWith(`iteration ${cur + 1}/`))) {
    // Not yet announced: the iteration's proposals were being made (or had just been stored) if this
    // process closed the previous iteration or stored them; otherwise it was still starting up.
    const closedPrevious = lines.some((l) => l.startsWith(`iteration ${cur}: mean outer reward`));
    return closedPrevious || (proposals(after).length > 0 && proposals(before).length === 0) ? 'proposal' : 'startup';
  }
  const pending = [...after.jobs.filter((j) => j.kind === 'baseline'), ...proposals(after)].filter((j) => j.status === 'pending');
  if (pending.length === 0) return 'rewards+checkpoint';
  return pending.some((j) => j.artifactStatus?.text.includes('"succeeded"')) ? 'scoring' : 'training';
}

const describe = (j: JobView): string => `job ${j.id} (${j.kind}, round ${j.round}, slot ${j.slot})`;
const result = (j: JobView): string => JSON.stringify([j.status, j.failureKind, j.error, j.raw, j.normalized, j.scoredAt, j.curvePoints, j.artifactDir]);

/** Remembers every finished job, paid reward and closed iteration, and reports any that was lost or changed. */
export class Witness {
  private readonly jobs = new Map<number, { view: JobView; at: string }>();
  private readonly rewards = new Map<number, string>();
  private readonly iterations = new Map<number, string>();
  readonly lost: string[] = [];
  readonly rerun: string[] = [];
  readonly changed: string[] = [];

  get watched(): number {
    return this.jobs.size;
  }

  /** Compares `view` (read at moment `at`) with everything seen before, then remembers it. */
  see(view: StoreView, at: string): void {
    const now = new Map(view.jobs.map((j) => [j.id, j]));
    for (const [id, { view: was, at: seenAt }] of this.jobs) {
      const j = now.get(id);
      const where = `${describe(was)}, finished ${seenAt}`;
      const before = this.lost.length + this.rerun.length;
      if (!j || j.status === 'pending') this.lost.push(`${where}: ${j ? 'pending again' : 'gone'} ${at}`);
      else if (j.finishedAt !== was.finishedAt) this.rerun.push(`${where}: finished again ${at} (${was.finishedAt} → ${j.finishedAt})`);
      else if (JSON.stringify(j.artifactStatus) !== JSON.stringify(was.artifactStatus))
        this.rerun.push(`${where}: its artifact's status.json was written again ${at}`);
      else if (result(j) !== result(was)) this.rerun.push(`${where}: its result changed ${at}: ${result(was)} → ${result(j)}`);
      if (this.lost.length + this.rerun.length > before) this.jobs.delete(id); // reported once; watched again when next seen finished
    }
    for (const j of view.jobs) {
      if (j.status !== 'pending' && !this.jobs.has(j.id)) this.jobs.set(j.id, { view: j, at });
      if (j.reward === null) continue;
      const paid = JSON.stringify([j.reward, j.advantage, j.groupId]);
      const was = this.rewards.get(j.id);
      if (was === undefined) this.rewards.set(j.id, paid);
      else if (was !== paid) this.changed.push(`${describe(j)}: reward paid again ${at}: ${was} → ${paid}`);
    }
    for (const it of view.iterations.filter((i) => i.status === 'done')) {
      const row = JSON.stringify(it);
      const was = this.iterations.get(it.idx);
      if (was === undefined) this.iterations.set(it.idx, row);
      else if (was !== row) this.changed.push(`iteration ${it.idx}: closed again ${at}: ${was} → ${row}`);
    }
  }
}

/** What a finished run must hold: every iteration closed with its rewards and checkpoint, every job finished once. */
export function checkComplete(view: StoreView, config: CrashRunConfig): string[] {
  const problems: string[] = [];
  const tasks = config.tasks.split(',');
  if (view.run?.status !== 'finished') problems.push(`run status is ${view.run?.status ?? 'missing'}, not finished`);
  for (const j of view.jobs.filter((j) => j.status === 'pending')) problems.push(`${describe(j)} is still pending`);
  for (let it = 0; it < config.iterations; it++) {
    const row = view.iterations.find((i) => i.idx === it);
    if (row?.status !== 'done') problems.push(`iteration ${it} is ${row?.status ?? 'missing'}, not done`);
    if (!view.checkpoints.some((c) => c.iteration === it)) problems.push(`iteration ${it} has no agent checkpoint`);
    const mine = view.jobs.filter((j) => j.kind === 'proposal' && j.round === it);
    for (const task of tasks) {
      const slots = mine
        .filter((j) => j.task === task)
        .map((j) => j.slot)
        .sort((a, b) => a - b);
      if (JSON.stringify(slots) !== JSON.stringify([...Array(config.group).keys()]))
        problems.push(`iteration ${it}, ${task}: proposal slots ${slots.join(',')}`);
    }
    for (const j of mine) {
      if (j.reward === null) problems.push(`${describe(j)} has no reward`);
      else if (j.groupId !== `it${it}/${j.task}`) problems.push(`${describe(j)} was paid in group ${j.groupId}`);
    }
    const mean = mine.reduce((a, j) => a + (j.reward ?? NaN), 0) / mine.length;
    if (row && !(Math.abs((row.meanReward ?? NaN) - mean) < 1e-9))
      problems.push(`iteration ${it}: mean reward ${row.meanReward} but its jobs' rewards average ${mean}`);
  }
  for (const task of tasks) {
    // The baseline trains once on each harness seed (slots 0..S−1); slot s+S is the retry of a failed slot s.
    const slots = view.jobs.filter((j) => j.kind === 'baseline' && j.task === task).map((j) => j.slot);
    const failed = new Set(view.jobs.filter((j) => j.kind === 'baseline' && j.task === task && j.status === 'failed').map((j) => j.slot));
    const expected = slots.every((s, i) => slots.indexOf(s) === i && (s < BASELINE_SEEDS || failed.has(s - BASELINE_SEEDS)));
    const seeds = Array.from({ length: BASELINE_SEEDS }, (_, i) => i).every((i) => slots.includes(i));
    if (!expected || !seeds) problems.push(`${task}: baseline jobs in slots ${slots.join(', ')} (one per harness seed, a retry only after a failure)`);
  }
  for (const j of view.jobs.filter((j) => j.artifactDir && !j.artifactStatus)) problems.push(`${describe(j)}: its artifact has no status.json`);
  return problems;
}

/** Differences between two runs of one configuration: jobs' specs and results, rewards, iterations, agent checkpoints. */
export function compareRuns(got: StoreView, want: StoreView): string[] {
  const out: string[] = [];
  const key = (j: JobView): string => `${j.kind}/${j.task}/${j.round}/${j.slot}`;
  const fields = (j: JobView): string => JSON.stringify([j.spec, j.status, j.failureKind, j.raw, j.normalized, j.curvePoints, j.reward, j.advantage]);
  const mine = new Map(got.jobs.map((j) => [key(j), j]));
  if (got.jobs.length !== want.jobs.length) out.push(`${got.jobs.length} jobs, the uninterrupted run has ${want.jobs.length}`);
  for (const w of want.jobs) {
    const g = mine.get(key(w));
    if (!g) out.push(`${key(w)} is missing`);
    else if (fields(g) !== fields(w)) out.push(`${key(w)} differs: ${fields(g).slice(0, 300)} vs ${fields(w).slice(0, 300)}`);
  }
  const summary = (v: StoreView): string[] => v.iterations.map((i) => JSON.stringify([i.idx, i.status, i.meanReward, i.meanNormalized, i.bestNormalized]));
  if (JSON.stringify(summary(got)) !== JSON.stringify(summary(want)))
    out.push(`iteration summaries differ: ${summary(got).join(' ')} vs ${summary(want).join(' ')}`);
  for (const w of want.checkpoints) {
    const g = got.checkpoints.find((c) => c.iteration === w.iteration);
    if (g?.state !== w.state) out.push(`the agent checkpoint after iteration ${w.iteration} differs`);
  }
  return out;
}

/**
 * Runs `config` once uninterrupted in `referenceDir`, then again in `dir`, killed with SIGKILL at
 * `kills` moments drawn from `seed` and resumed after each, and reports what was lost, rerun or
 * left incomplete. `log` hears one line per kill.
 */
export async function killAnywhere(options: {
  dir: string;
  referenceDir: string;
  config?: CrashRunConfig;
  kills?: number;
  seed?: number;
  log?: (line: string) => void;
}): Promise<CrashReport> {
  const config = options.config ?? CRASH_RUN;
  const { dir } = options;
  const log = options.log ?? (() => {});
  const ref = await uninterrupted(config, options.referenceDir);
  log(
    `uninterrupted: ${(ref.wallMs / 1000).toFixed(1)} s, startup ${(ref.startupMs / 1000).toFixed(1)} s, progress levels at ${ref.levelAt.map((t) => (t / 1000).toFixed(1)).join(' ')} s`,
  );
  const plans = planKills(new Rng(options.seed ?? 1), ref, options.kills ?? 20);
  const bootMs = await cliBootMs();
  log(`the CLI boots in ${(bootMs / 1000).toFixed(2)} s`);
  const last = ref.levelAt.length - 1 - 3;
  const witness = new Witness();
  const killsByPhase: Record<Phase, number> = { startup: 0, proposal: 0, training: 0, scoring: 0, 'rewards+checkpoint': 0, finishing: 0 };
  const report = { kills: 0, restarts: 0, resumes: 0, resumesFailed: 0, failures: [] as string[], finishedEarly: false };
  const t0 = performance.now();
  let failedInARow = 0;
  /** Starts the run again (resume, or the original command while nothing is recorded) and kills it per `plan`. */
  const next = async (plan: KillPlan | null): Promise<'killed' | 'finished' | 'failed'> => {
    const before = readStore(dir);
    if (before.run) report.resumes += 1;
    else if (report.kills > 0) report.restarts += 1;
    const spawnedAt = performance.now();
    const child = start(before.run ? resumeArgs(config, dir) : trainArgs(config, dir));
    if (plan) {
      const p0 = progressOf(dir);
      let { level, delayMs } = plan;
      // The run is in its last steps: kill during startup, scaled into the CLI's boot time, which a
      // resume spends before any write (a resume with only the last close left can finish faster
      // than a fresh run's startup, and its final writes come too close together to catch).
      if (p0 > last) [level, delayMs] = [p0, plan.startupDelayMs * Math.min(1, bootMs / ref.startupMs)];
      else if (level <= p0 && plan.kind === 'event' && p0 < last)
        level = p0 + 1; // the next write this process makes
      // Its moment has passed: one in this process's first step, its boot (as measured now, under
      // today's load) and the reference's first training step.
      else if (level <= p0) [level, delayMs] = [p0, (plan.firstStepMs / ref.levelAt[1]) * (bootMs + Math.max(0, ref.levelAt[1] - ref.startupMs))];
      let anchor = -1; // when this process reached `level`
      await watch(child, dir, spawnedAt, (p, ms) => {
        if (anchor < 0 && p >= level) anchor = ms;
        // Past the last planned level only the final jobs and the end are left: kill now, before the run can finish.
        return p > Math.max(last, p0) || (anchor >= 0 && ms >= anchor + delayMs);
      });
      if (!child.exited) child.proc.kill('SIGKILL');
    }
    const { code, signal } = await child.exit;
    const killed = signal === 'SIGKILL';
    if (killed) {
      report.kills += 1;
      const after = readStore(dir);
      const phase = phaseOf(before, after, child.lines, config.iterations);
      killsByPhase[phase] += 1;
      witness.see(after, `after kill ${report.kills} (${phase})`);
      log(`kill ${report.kills}: ${plan!.kind} at ${((performance.now() - spawnedAt) / 1000).toFixed(2)} s, ${phase}; progress ${progressOf(dir)}`);
      failedInARow = 0;
      return 'killed';
    }
    if (code === 0) return 'finished';
    report.resumesFailed += 1;
    report.failures.push(`exit ${code}: ${tail(child)}`);
    log(`a ${before.run ? 'resume' : 'start'} failed: exit ${code}: ${tail(child)}`);
    return ++failedInARow >= 3 ? 'failed' : next(plan);
  };
  let outcome: 'killed' | 'finished' | 'failed' = 'killed';
  for (const plan of plans) {
    outcome = await next(plan);
    if (outcome !== 'killed') break;
  }
  report.finishedEarly = outcome === 'finished';
  if (outcome === 'killed') outcome = await next(null);
  const crashSeconds = (performance.now() - t0) / 1000;
  const final = readStore(dir);
  const jobsWatched = witness.watched;
  witness.see(final, 'at the end');
  return {
    config,
    ...report,
    killsByPhase,
    jobs: final.jobs.length,
    jobsFinished: final.jobs.filter((j) => j.status !== 'pending').length,
    jobsWatched,
    lost: witness.lost,
    rerun: witness.rerun,
    incomplete: [...witness.changed, ...(outcome === 'finished' ? checkComplete(final, config) : ['the run did not finish: three starts in a row failed'])],
    differences: compareRuns(final, ref.view),
    referenceSeconds: ref.wallMs / 1000,
    crashSeconds,
    final,
    reference: ref.view,
  };
}
