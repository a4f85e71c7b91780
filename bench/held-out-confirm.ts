/**
 * `npm run bench -- held-out-confirm --dir=<repetition dir> [--preset=full] [--seed=S]`: the
 * held-out comparison of a finished transfer repetition on confirmed scores. A method's best of 16
 * is the highest of 16 single trainings, so the luck of their seeds lifts it; the zero-shot job is
 * one training. What a user keeps is the spec, not its lucky score: this retrains the spec each
 * method picked (its best of 16; random search's best of 4 too) and the controller's zero-shot
 * spec on the harness's `CONFIRM_SEEDS` seeds (the seeds a bonus is confirmed on, none of them a
 * seed the picks trained with), with the experiment's cache, and prints per held-out family the
 * single scores the experiment reported beside the confirmed means (a spec picked by several
 * methods is retrained once). The baseline spec's score is already a mean over the harness's seeds.
 *
 * `--dir` is one repetition's directory (`secret-K/seed-S` of a multi-repetition experiment), scored
 * under the secret of this process (set `RRL_EVAL_SECRET` for a derived one; the bench stops when
 * the held-out runs' evaluation identity differs); `--preset` the preset it ran, `--seed` its seed.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { familyOf } from '../src/outer/transfer-summary.js';
import { train } from '../src/outer/loop.js';
import { CONFIRM_SEEDS, harnessSeeds, seedlessKey, taskReference, withSeed } from '../src/outer/noise.js';
import { Scorer } from '../src/outer/scoring/scorer-pool.js';
import { LocalExecutor } from '../src/run/local.js';
import { Store } from '../src/store/store.js';
import { evalIdentity, evalSecret } from '../src/tasks/secret.js';
import { ScriptedAgent } from '../src/testing/scripted-agent.js';
import { initTf } from '../src/util/tf.js';
import { repetitionArgs, repetitionCache } from './repetition.js';
import { num, table } from '../src/cli/format.js';

const log = (s: string): boolean => process.stderr.write(`${s}\n`);
const mean = (xs: number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/** The rows compared: a label, the held-out run it reads, and which of its proposals it picks. */
const PICKS = [
  { key: 'zeroShot', label: 'zero-shot', run: 'controller', first: 1 },
  { key: 'controllerBest16', label: 'controller (frozen) best of 16', run: 'controller', first: 16 },
  { key: 'controllerAdaptBest16', label: 'controller (adapting) best of 16', run: 'controller-adapt', first: 16 },
  { key: 'randomBest4', label: 'random best of 4', run: 'random', first: 4 },
  { key: 'randomBest16', label: 'random best of 16', run: 'random', first: 16 },
  { key: 'searchBest16', label: 'model-based search best of 16', run: 'search', first: 16 },
  { key: 'optunaTpeBest16', label: 'Optuna TPE best of 16', run: 'optuna-tpe', first: 16 },
  { key: 'optunaCmaesBest16', label: 'Optuna CMA-ES best of 16', run: 'optuna-cmaes', first: 16 },
  { key: 'optunaTpeSeededBest16', label: 'Optuna TPE seeded best of 16', run: 'optuna-tpe-seeded', first: 16 },
  { key: 'optunaCmaesSeededBest16', label: 'Optuna CMA-ES seeded best of 16', run: 'optuna-cmaes-seeded', first: 16 },
] as const;
type PickKey = (typeof PICKS)[number]['key'];
/** The searches the zero-shot job is held against (every best of 16 but the controller's own). */
const SEARCHES: PickKey[] = ['randomBest16', 'searchBest16', 'optunaTpeBest16', 'optunaCmaesBest16', 'optunaTpeSeededBest16', 'optunaCmaesSeededBest16'];

/** A held-out run's proposals (spec and single score as the experiment reads it: failed or invalid is 0) and its reference, or null. */
function readProposals(dir: string): { proposals: { spec: unknown; v: number }[]; baseline: number | null; evalId: string | null } | null {
  if (!existsSync(join(dir, 'store.db'))) return null;
  const store = new Store(dir);
  try {
    const run = store.getRun();
    if (!run) return null;
    const jobs = store.jobs(run.id);
    return {
      proposals: jobs.filter((j) => j.kind === 'proposal').map((j) => ({ spec: j.spec, v: j.status === 'succeeded' ? (j.normalized ?? 0) : 0 })),
      baseline: taskReference(jobs.filter((j) => j.kind === 'baseline')).mean,
      evalId: run.evalIdentity ?? null,
    };
  } finally {
    store.close();
  }
}

/** The experiment's pick among the first `n`: the highest single score, the earlier on ties. */
function pick(proposals: { spec: unknown; v: number }[], n: number): { spec: unknown; v: number } | null {
  let best: { spec: unknown; v: number } | null = null;
  for (const p of proposals.slice(0, n)) if (best === null || p.v > best.v) best = p;
  return best;
}

export async function heldOutConfirm(): Promise<Record<string, unknown>> {
  const { dir, preset, options, seed, workers } = repetitionArgs('held-out-confirm', 'a finished transfer repetition directory');
  const secret = evalSecret();
  await initTf();
  const executor = new LocalExecutor({ workers });
  const scorer = new Scorer();
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-bench-held-out-confirm-'));
  const cache = repetitionCache(dir, tmp);
  const perTask: { task: string; baseline: number | null; single: Partial<Record<PickKey, number>>; confirmed: Partial<Record<PickKey, number>> }[] = [];
  try {
    const t0 = performance.now();
    for (const [i, task] of options.heldOutTasks.entries()) {
      const runs = new Map<string, ReturnType<typeof readProposals>>();
      for (const p of PICKS) if (!runs.has(p.run)) runs.set(p.run, readProposals(join(dir, task, p.run)));
      const ids = [...runs.values()].map((r) => r?.evalId).filter((e): e is string => !!e);
      if (ids.some((e) => e !== evalIdentity())) {
        throw new Error(
          `held-out-confirm: ${task}'s runs were scored under evaluation ${ids[0]}, this process is under ${evalIdentity()} (set RRL_EVAL_SECRET)`,
        );
      }
      const picked = PICKS.flatMap((p) => {
        const run = runs.get(p.run);
        const got = run ? pick(run.proposals, p.first) : null;
        return got ? [{ key: p.key, ...got, specKey: seedlessKey(got.spec) }] : [];
      });
      if (!picked.length) {
        log(`${task}: no held-out runs in ${join(dir, task)}; skipped`);
        continue;
      }
      // Each distinct spec once, on every confirmation seed.
      const specs = [...new Map(picked.map((p) => [p.specKey, p.spec])).entries()];
      const seeds = harnessSeeds(task, CONFIRM_SEEDS, secret);
      const script = specs.flatMap(([, spec]) => seeds.map((s) => () => withSeed(spec, s)));
      const run = join(tmp, task);
      const config = { tasks: [task], agent: 'random' as const, iterations: 1, group: script.length, seed: seed * 1000 + i, confirm: false };
      await train(run, config, executor, { agent: new ScriptedAgent(script), cache, scorer });
      const scores = readProposals(run)!.proposals.map((p) => p.v);
      const confirmedOf = new Map(specs.map(([key], k) => [key, mean(scores.slice(k * seeds.length, (k + 1) * seeds.length))!]));
      perTask.push({
        task,
        baseline: runs.get('random')?.baseline ?? runs.get('controller')?.baseline ?? null,
        single: Object.fromEntries(picked.map((p) => [p.key, p.v])),
        confirmed: Object.fromEntries(picked.map((p) => [p.key, confirmedOf.get(p.specKey)!])),
      });
      log(`${task}: ${specs.length} spec(s) × ${seeds.length} seeds (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
    }
  } finally {
    await scorer.close();
    await executor.close();
    rmSync(tmp, { recursive: true, force: true });
  }
  const families = [...new Set(perTask.map((t) => familyOf(t.task))), 'all'];
  const of = (f: string) => perTask.filter((t) => f === 'all' || familyOf(t.task) === f);
  const familyMean = (f: string, which: 'single' | 'confirmed', key: PickKey): number | null =>
    mean(of(f).flatMap((t) => (t[which][key] === undefined ? [] : [t[which][key] as number])));
  const rows = PICKS.map((p) => [p.label, ...families.map((f) => `${num(familyMean(f, 'single', p.key))} → ${num(familyMean(f, 'confirmed', p.key))}`)]);
  rows.push([
    'baseline spec (mean over the harness seeds)',
    ...families.map((f) => num(mean(of(f).flatMap((t) => (t.baseline === null ? [] : [t.baseline]))))),
  ]);
  // The verdicts the experiment reports, on single scores and on confirmed ones.
  const verdict = (which: 'single' | 'confirmed') => {
    const levelWithEvery = (f: string): boolean | null => {
      const zs = familyMean(f, which, 'zeroShot');
      const others = SEARCHES.map((k) => familyMean(f, which, k)).filter((v): v is number => v !== null);
      // Null ("not run") unless every search ran (`--compare random` runs random search only).
      return zs === null || others.length < SEARCHES.length ? null : others.every((v) => zs >= v);
    };
    const zs = (f: string) => familyMean(f, which, 'zeroShot');
    const r4 = (f: string) => familyMean(f, which, 'randomBest4');
    const fams = families.filter((f) => f !== 'all');
    return {
      zeroShotAtLeastEveryBest16: levelWithEvery('all'),
      familiesAtLeastEveryBest16: levelWithEvery('all') === null ? null : fams.filter((f) => levelWithEvery(f)).length,
      familiesAboveRandomBest4: fams.filter((f) => (zs(f) ?? -Infinity) > (r4(f) ?? Infinity)).length,
      families: fams.length,
    };
  };
  const single = verdict('single');
  const confirmed = verdict('confirmed');
  console.log(
    `\nheld-out comparison, single score → confirmed on ${CONFIRM_SEEDS} harness seeds (${preset} preset, seed ${seed}, evaluation ${evalIdentity()})`,
  );
  console.log(table(['row', ...families.map((f) => (f === 'all' ? `all ${perTask.length} tasks` : f))], rows));
  for (const [label, v] of [
    ['single scores', single],
    ['confirmed', confirmed],
  ] as const) {
    console.log(
      `${label}: zero-shot at least level with every search's best of 16 on the mean: ${v.zeroShotAtLeastEveryBest16 === null ? 'not run' : v.zeroShotAtLeastEveryBest16 ? 'yes' : 'no'}; ` +
        `in ${v.familiesAtLeastEveryBest16 ?? 'not run'} of ${v.families} families; above random best of 4 in ${v.familiesAboveRandomBest4} of ${v.families}`,
    );
  }
  const means = (which: 'single' | 'confirmed') =>
    Object.fromEntries(PICKS.map((p) => [p.key, Object.fromEntries(families.map((f) => [f, familyMean(f, which, p.key)]))]));
  return {
    preset,
    seed,
    evalId: evalIdentity(),
    confirmSeeds: CONFIRM_SEEDS,
    single: means('single'),
    confirmed: means('confirmed'),
    verdict: { single, confirmed },
    perTask,
  };
}
