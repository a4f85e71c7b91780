/**
 * `npm run bench -- zero-shot --dir=<repetition dir> [--preset=full] [--at=1,2,4,…]`: how much
 * meta-training the controller's prior needs. A transfer experiment keeps the controller's
 * checkpoint after every meta-training iteration (`<dir>/meta/store.db`); for each iteration named
 * in `--at` this loads that checkpoint, frozen, and trains its zero-shot job on every held-out task
 * of the preset, exactly as the experiment does (the same run seeds, the experiment's cache), and
 * prints the mean normalised hidden score per held-out family. The references are the experiment's
 * own: random search's best of 4 and the baseline spec on the same tasks, read from the held-out
 * runs the repetition directory holds (a task whose runs it lacks has no reference).
 *
 * `--priors=A,B,…` (prior files or repetition directories, `readPrior`) adds a row per prior and,
 * with two or more, one for their ensemble: the mode of the priors' mean per-head probabilities
 * (`--at=` with nothing after it leaves the checkpoints out).
 *
 * `--dir` is one repetition's directory (the experiment's directory, or its `secret-K/seed-S` when
 * it ran several), `--preset` the preset it ran (the held-out tasks and the seed come from it;
 * `--seed=S` for another), and the run must be scored under the secret of this process (set
 * `RRL_EVAL_SECRET` for a derived one): the bench stops when the meta run's evaluation identity differs.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Controller, proposalFrom } from '../src/outer/agents/controller.js';
import { controllerFromPrior, readPrior } from '../src/outer/agents/prior.js';
import type { Agent } from '../src/outer/agents/types.js';
import { HeldOut, readRun } from '../src/outer/experiment.js';
import { repetitionArgs, repetitionCache } from './repetition.js';
import { familyOf } from '../src/outer/transfer-summary.js';
import { trainAgent } from '../src/outer/loop.js';
import { Scorer } from '../src/outer/scoring/scorer-pool.js';
import { LocalExecutor } from '../src/run/local.js';
import { Store } from '../src/store/store.js';
import { evalIdentity } from '../src/tasks/secret.js';
import { initTf } from '../src/util/tf.js';
import { num, table } from '../src/cli/format.js';

const log = (s: string): boolean => process.stderr.write(`${s}\n`);
const mean = (xs: number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/** A held-out run's scores as the experiment reads them (`readRun`), or null where the directory holds no run. */
function readRunIfAny(dir: string): ReturnType<typeof readRun> | null {
  if (!existsSync(join(dir, 'store.db'))) return null;
  try {
    return readRun(dir);
  } catch {
    return null;
  }
}

/** A frozen ensemble of controllers: its proposal is the valid mode of their mean per-head probabilities. */
function ensemble(members: Controller[]): Agent {
  return {
    name: 'controller-ensemble',
    async propose(brief, ctx) {
      const all = await Promise.all(members.map((c) => c.probabilities(brief)));
      const probs = all[0].map((row, h) => row.map((_, o) => mean(all.map((p) => p[h][o]))!));
      return proposalFrom(brief, probs, { ...ctx, greedy: true });
    },
    async update() {
      return {};
    },
    async state() {
      return {};
    },
    async load() {},
  };
}

export async function zeroShot(): Promise<Record<string, unknown>> {
  const { dir, preset, options, seed, workers, opt } = repetitionArgs('zero-shot', 'a transfer repetition directory, which holds meta/store.db');
  if (!existsSync(join(dir, 'meta', 'store.db')))
    throw new Error(`zero-shot: ${join(dir, 'meta', 'store.db')} does not exist (--dir names one repetition's directory)`);
  const meta = new Store(join(dir, 'meta'));
  const metaRun = meta.getRun();
  const saved = meta.db.prepare('SELECT iteration, state FROM checkpoints ORDER BY iteration').all() as { iteration: number; state: string }[];
  meta.close();
  if (!metaRun || !saved.length) throw new Error(`zero-shot: ${join(dir, 'meta')} holds no meta-training run with checkpoints`);
  if (metaRun.evalIdentity && metaRun.evalIdentity !== evalIdentity()) {
    throw new Error(
      `zero-shot: the meta run was scored under evaluation ${metaRun.evalIdentity}, this process is under ${evalIdentity()} (set RRL_EVAL_SECRET)`,
    );
  }
  const atArg = opt('at') ?? saved.map((c) => c.iteration + 1).join(',');
  const asked = atArg === '' ? [] : atArg.split(',').map(Number);
  const at = asked.filter((k) => saved.some((c) => c.iteration === k - 1));
  const missing = asked.filter((k) => !at.includes(k));
  if (missing.length) log(`no checkpoint after iteration ${missing.join(', ')} (the run has ${saved.length}); skipped`);
  await initTf();
  const executor = new LocalExecutor({ workers });
  const scorer = new Scorer();
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-bench-zero-shot-'));
  // The experiment's cache: the baselines are trained already.
  const cache = repetitionCache(dir, tmp);
  const families = [...new Set(options.heldOutTasks.map(familyOf))];
  const rows: (string | number)[][] = [];
  const result: Record<string, unknown>[] = [];
  let lastScores: { task: string; v: number | null }[] = [];
  try {
    // The experiment's own references on the same tasks: random search's best of 4 and the baseline spec.
    const refs = options.heldOutTasks.map((task) => {
      const random = readRunIfAny(join(dir, task, 'random'));
      return { task, random4: random ? Math.max(...random.proposals.slice(0, 4).map((v) => v ?? 0)) : null, baseline: random?.baseline ?? null };
    });
    const perFamily = (scores: { task: string; v: number | null }[]): Record<string, number | null> =>
      Object.fromEntries(
        [...families, 'all'].map((f) => [f, mean(scores.filter((s) => (f === 'all' || familyOf(s.task) === f) && s.v !== null).map((s) => s.v!))]),
      );
    // What to evaluate: each checkpoint asked for, each prior, and the priors' ensemble.
    const entries: { label: string; key: Record<string, unknown>; agent: () => Promise<Agent> }[] = at.map((k) => ({
      label: `after iteration ${k}`,
      key: { afterIteration: k },
      agent: async () => {
        const controller = new Controller({ seed });
        await controller.load(JSON.parse(saved.find((c) => c.iteration === k - 1)!.state));
        return new HeldOut(controller, false);
      },
    }));
    const priorPaths = (opt('priors') ?? '')
      .split(',')
      .filter(Boolean)
      .map((p) => resolve(p));
    const priors = await Promise.all(priorPaths.map(async (p) => controllerFromPrior(readPrior(p), seed)));
    priors.forEach((c, i) => entries.push({ label: `prior ${priorPaths[i]}`, key: { prior: priorPaths[i] }, agent: async () => new HeldOut(c, false) }));
    if (priors.length > 1)
      entries.push({ label: `ensemble of the ${priors.length} priors`, key: { ensemble: priorPaths }, agent: async () => ensemble(priors) });
    const t0 = performance.now();
    for (const [e, entry] of entries.entries()) {
      const agent = await entry.agent();
      const scores: { task: string; v: number | null }[] = [];
      for (const [i, task] of options.heldOutTasks.entries()) {
        const run = join(tmp, `entry-${e}`, task);
        const config = { tasks: [task], agent: 'controller' as const, iterations: 1, group: 1, seed: seed * 1000 + i, confirm: false };
        await trainAgent(run, config, executor, { agent, cache, scorer });
        scores.push({ task, v: readRunIfAny(run)?.proposals[0] ?? null });
      }
      const means = perFamily(scores);
      lastScores = scores;
      log(`${entry.label}: zero-shot ${num(means.all)} (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
      rows.push([entry.label, ...[...families, 'all'].map((f) => num(means[f]))]);
      result.push({ ...entry.key, zeroShot: means });
    }
    const random4 = perFamily(refs.map((r) => ({ task: r.task, v: r.random4 })));
    const baseline = perFamily(refs.map((r) => ({ task: r.task, v: r.baseline })));
    for (const [label, m] of [
      ['random best of 4 (reference)', random4],
      ['baseline spec (reference)', baseline],
    ] as const) {
      rows.push([label, ...[...families, 'all'].map((f) => num(m[f]))]);
    }
    console.log(
      `\nzero-shot job of the meta-training checkpoints (${preset} preset, seed ${seed}, evaluation ${evalIdentity()}), mean normalised hidden score`,
    );
    console.log(table(['policy', ...families, 'all held-out tasks'], rows));
    // The last row against random best of 4 on the tasks that have the reference (all of them after a finished repetition).
    const matched = refs.filter((r, i) => r.random4 !== null && lastScores[i]?.v != null);
    if (matched.length < refs.length)
      log(`the references cover ${matched.length} of ${refs.length} held-out tasks (the repetition's held-out runs are not all there)`);
    const zsMatched = mean(matched.map((r) => lastScores[refs.indexOf(r)].v!));
    const r4Matched = mean(matched.map((r) => r.random4!));
    const ratio = zsMatched !== null && r4Matched ? zsMatched / r4Matched : null;
    console.log(`the last row's zero-shot / random best of 4, on the ${matched.length} tasks with the reference: ${num(ratio)}`);
    return {
      preset,
      seed,
      evalId: evalIdentity(),
      curve: result,
      references: { random4, baseline },
      tasksWithReference: matched.length,
      lastOverRandom4: ratio,
    };
  } finally {
    await scorer.close();
    await executor.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}
