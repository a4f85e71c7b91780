/**
 * `npm run bench -- held-out-confirm --dir=<repetition dir> [--preset=full] [--seed=S]`: the
 * held-out comparison of a finished transfer repetition on confirmed scores, beside its single
 * scores. It runs the experiment's own confirmation (`confirmPicks`, src/outer/confirm-picks.ts:
 * each compared row's pick and the zero-shot spec trained again on the harness's
 * `CONFIRM_SEEDS` seeds, in `<task>/confirm-picks` of the repetition, with the experiment's
 * cache), so it confirms a repetition run with `--no-confirm-picks` or before the experiment
 * confirmed its picks, and reads again one that did. It prints per held-out family the single
 * scores the experiment reported beside the confirmed means, and the verdicts on both.
 *
 * `--dir` is one repetition's directory (`secret-K/seed-S` of a multi-repetition experiment), scored
 * under the secret of this process (set `RRL_EVAL_SECRET` for a derived one; the bench stops when
 * the held-out runs' evaluation identity differs); `--preset` the preset it ran, `--seed` its seed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { num, table } from '../src/cli/format.js';
import { CONFIRMED_ROWS, confirmPicks, readHeldOutRun } from '../src/outer/confirm-picks.js';
import { CONFIRM_SEEDS } from '../src/outer/noise.js';
import { Scorer } from '../src/outer/scoring/scorer-pool.js';
import { METHODS, familyOf } from '../src/outer/transfer-summary.js';
import { LocalExecutor } from '../src/run/local.js';
import { evalIdentity } from '../src/tasks/secret.js';
import { initTf } from '../src/util/tf.js';
import { repetitionArgs, repetitionCache } from './repetition.js';

const log = (s: string): boolean => process.stderr.write(`${s}\n`);
const mean = (xs: number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);

/** The rows compared (the experiment's confirmed rows), with the report's label. */
const PICKS = CONFIRMED_ROWS.map((r) => ({ ...r, label: METHODS.find(([k]) => k === r.key)?.[1] ?? r.key }));
type PickKey = (typeof CONFIRMED_ROWS)[number]['key'];
/** The searches the zero-shot job is held against (every best of 16 but the controller's own). */
const SEARCHES: PickKey[] = ['randomBest16', 'searchBest16', 'optunaTpeBest16', 'optunaCmaesBest16', 'optunaTpeSeededBest16', 'optunaCmaesSeededBest16'];

export async function heldOutConfirm(): Promise<Record<string, unknown>> {
  const { dir, preset, options, seed, workers } = repetitionArgs('held-out-confirm', 'a finished transfer repetition directory');
  await initTf();
  const executor = new LocalExecutor({ workers });
  const scorer = new Scorer();
  const tmp = mkdtempSync(join(tmpdir(), 'rrl-bench-held-out-confirm-'));
  const cache = repetitionCache(dir, tmp);
  const perTask: { task: string; baseline: number | null; single: Partial<Record<PickKey, number>>; confirmed: Partial<Record<PickKey, number>> }[] = [];
  try {
    const t0 = performance.now();
    for (const [i, task] of options.heldOutTasks.entries()) {
      const runs = [...new Set(PICKS.map((p) => p.run))].map((r) => readHeldOutRun(join(dir, task, r)));
      const ids = runs.map((r) => r?.evalId).filter((e): e is string => !!e);
      if (ids.some((e) => e !== evalIdentity())) {
        throw new Error(
          `held-out-confirm: ${task}'s runs were scored under evaluation ${ids[0]}, this process is under ${evalIdentity()} (set RRL_EVAL_SECRET)`,
        );
      }
      // The experiment's own confirmation (src/outer/confirm-picks.ts), in the repetition's directory: a repetition it confirmed is read, not retrained.
      const picks = await confirmPicks(join(dir, task), task, { executor, cache, scorer, seed: seed * 1000 + i });
      if (!picks.specs) {
        log(`${task}: no held-out runs in ${join(dir, task)}; skipped`);
        continue;
      }
      perTask.push({ task, baseline: runs.find((r) => r)?.baseline ?? null, single: picks.single, confirmed: picks.confirmed });
      log(`${task}: ${picks.specs} spec(s) × ${CONFIRM_SEEDS} seeds (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
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
