/**
 * `rrl experiment transfer`: does a trainer agent trained on the outer reward write better
 * jobs than search that starts from nothing, also on tasks it never trained on?
 *
 * 1. Meta-train the controller on the train tasks (GRPO on the outer reward), and keep its weights
 *    as the repetition's `prior.json`; or, with `prior`, start from a saved prior and skip it.
 * 2. On every held-out task, with the controller frozen: its first proposal (zero-shot: the
 *    mode of its policy, its single best guess) and its best of 4 and 16 (that guess plus
 *    samples); the controller adapting (four rounds of 4 from the meta-trained weights, GRPO
 *    on the task's own rewards between rounds) for its best of 16; random search's best of 4
 *    and 16; the model-based search's best of 4 (its first round) and 16 (four rounds of 4,
 *    learning from its own rewards); Optuna's TPE and CMA-ES samplers (the library, by ask and
 *    tell: agents/optuna.ts), each plain and seeded with the task's baseline as its first trial,
 *    best of 4 and 16 (four rounds of 4, like the model-based search); and the task's baseline
 *    spec. Every job runs on the same engine, and identical specs share one cached result.
 *    Without a Python that has optuna and cmaes the Optuna rows are skipped, said in the report.
 * 3. With `confirmPicks` (the default), the held-out comparison again on confirmed scores: the
 *    spec each compared row picked, and the zero-shot spec, trained again on the harness's
 *    confirmation seeds (confirm-picks.ts); the report gives both comparisons.
 * 4. With `secrets`, all of it again under each further evaluation secret (held-out seeds and
 *    test rows change with the secret), each secret's comparisons reported on their own.
 *
 * This file runs the repetitions and writes the report; beside it, transfer-options.ts holds the
 * settings, presets and result, transfer-repetition.ts one repetition (a seed under a secret),
 * transfer-arms.ts the comparison on one held-out task, transfer-summary.ts the means and
 * verdicts, and transfer-report.ts the markdown.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Executor } from '../run/executor.js';
import { initTf } from '../util/tf.js';
import { bridgePython } from '../inner/envs/gym-bridge.js';
import { type ControllerPrior, describePrior, loadPrior } from './agents/prior.js';
import { optunaMissing } from './agents/optuna.js';
import { comparisonSpec, learningCurveSpec, renderSvg } from './plots.js';
import { METHODS, mean, meanOf, summarizeHeldOut } from './transfer-summary.js';
import { Scorer } from './scoring/scorer-pool.js';
import { experimentSecrets } from './open-run.js';
import { transferMarkdown } from './transfer-report.js';
import { aimsByFamily, hasAims } from './transfer-aims.js';
import { type TransferListener, type TransferOptions, type TransferResult, resolveCorpus, resolveFamilies } from './transfer-options.js';
import { REPETITION_FILE, type RepetitionContext, type RepetitionResult, recordedRepetition, repetitionKey, runRepetition } from './transfer-repetition.js';

export { type FamilyCounts, type FamilyRow, type HeldOutRow, type Verdict, familyOf, summarizeHeldOut } from './transfer-summary.js';
export {
  PRESET_DRAWS,
  type TransferCompare,
  type TransferListener,
  type TransferOptions,
  type TransferResult,
  resolveFamilies,
  transferPreset,
} from './transfer-options.js';
export { HeldOut, readRun } from './transfer-arms.js';

/** A repetition's result, with the seconds it took over every invocation and whether this one read it back finished. */
type TimedRepetition = RepetitionResult & { wallSeconds: number; readBack: boolean };

/** The held-out means over the repetitions, and the comparisons under each secret alone. */
type Summaries = Pick<TransferResult, 'curve' | 'heldOut' | 'spread' | 'rows' | 'families' | 'verdict' | 'paired' | 'secrets' | 'confirmed'>;

/**
 * Checks the options (their families drawn) and readies the experiment in `dir`: the prior read
 * and fitted to this code's controller before anything trains, its cache, and whether the Optuna
 * rows run; what does not run is a note, said at once.
 */
async function prepare(dir: string, requested: TransferOptions, onEvent?: TransferListener): Promise<Omit<RepetitionContext, 'executor' | 'scorer'>> {
  if (requested.corpus) onEvent?.({ type: 'phase', message: `reading the corpus's ${requested.corpus.on} and train packages` });
  const options = await resolveCorpus(resolveFamilies(requested));
  if (!options.prior && !options.trainTasks.length) throw new Error('the transfer experiment needs at least one train task');
  if (!options.heldOutTasks.length) throw new Error('the transfer experiment needs at least one held-out task');
  const prior = options.prior ? (await loadPrior(options.prior, options.seed)).prior : null;
  const reference = options.referencePrior ? (await loadPrior(options.referencePrior, options.seed)).prior : null;
  const init = options.init && !prior ? (await loadPrior(options.init, options.seed)).prior : null;
  if (init) onEvent?.({ type: 'phase', message: `meta-training starts from the prior ${options.init}: ${describePrior(init)}` });
  await initTf();
  mkdirSync(dir, { recursive: true });
  const cache = join(dir, 'cache.db');
  // The Optuna rows need a Python with optuna and cmaes; without one they are skipped, loudly.
  const notes: string[] = [];
  const python = options.python ?? bridgePython();
  const compare = options.compare ?? 'all';
  const withOptuna = compare !== 'random';
  const missing = withOptuna ? optunaMissing(python) : null;
  if (missing) {
    notes.push(`SKIPPED the Optuna rows (${compare === 'all' ? 'TPE, CMA-ES, seeded' : 'TPE and CMA-ES seeded'}): ${missing}`);
    onEvent?.({ type: 'phase', message: `!! ${notes[0]}` });
  }
  if (compare === 'random')
    notes.push('Compared with random search only (compare: random): the adapting controller, the model-based search and Optuna did not run.');
  if (compare === 'corpus')
    notes.push(
      "Compared as the corpus presets do (compare: corpus): Optuna's seeded TPE and CMA-ES, not the plain ones, the adapting controller or the model-based search.",
    );
  if (prior) onEvent?.({ type: 'phase', message: `no meta-training: the controller starts from the prior ${options.prior}: ${describePrior(prior)}` });
  // `compare: 'random'` leaves out the learning searches, Optuna's with them.
  const optuna = missing || !withOptuna ? null : { python };
  return { options, prior, reference, init, cache, notes, optuna, onEvent };
}

/**
 * Runs every seed under every secret (the installation's first, then those derived from it), in
 * `dir/secret-K/seed-S`, each level only when there are several; each repetition's figures are
 * written as soon as it finishes, so that an experiment stopped later keeps them.
 */
async function runRepetitions(dir: string, ctx: RepetitionContext): Promise<TimedRepetition[]> {
  const { options, onEvent } = ctx;
  const nSeeds = options.seeds ?? 1;
  const nSecrets = options.secrets ?? 1;
  const perSeed: TimedRepetition[] = [];
  const key = repetitionKey(ctx);
  for (const { index: i, evalId, run: underSecret } of experimentSecrets(nSecrets)) {
    if (nSecrets > 1) onEvent?.({ type: 'phase', message: `evaluation secret ${i + 1} of ${nSecrets} (${evalId})` });
    for (let k = 0; k < nSeeds; k++) {
      const seed = options.seed + k;
      const secretDir = nSecrets > 1 ? join(dir, `secret-${i + 1}`) : dir;
      const tag = [nSecrets > 1 ? `secret ${i + 1}` : '', nSeeds > 1 ? `seed ${seed}` : ''].filter(Boolean).join(', ');
      const repDir = nSeeds > 1 ? join(secretDir, `seed-${seed}`) : secretDir;
      const rep = { dir: repDir, seed, secret: { index: i, evalId, tag: tag ? `${tag}: ` : '' } };
      // A repetition recorded under the same inputs is reused as it is; one an earlier invocation left
      // unfinished, or recorded under other inputs, runs again, reading back the runs it finds in its directory.
      const done = recordedRepetition(repDir, key, rep);
      if (done) {
        onEvent?.({ type: 'phase', message: `${rep.secret.tag}read back from ${join(repDir, REPETITION_FILE)}` });
        const { key: _, wallSeconds, ...result } = done;
        perSeed.push({ ...result, wallSeconds, readBack: true });
        continue;
      }
      const r0 = performance.now();
      const result = await underSecret(() => runRepetition(ctx, rep));
      const wallSeconds = (performance.now() - r0) / 1000;
      perSeed.push({ ...result, wallSeconds, readBack: false });
      writeFileSync(join(repDir, REPETITION_FILE), JSON.stringify({ ...result, wallSeconds, key }, null, 2));
    }
  }
  return perSeed;
}

/** The means over the repetitions: the curve per iteration, each task's row, the held-out means (with their spread) and the verdicts. */
function summarize(options: TransferOptions, perSeed: TimedRepetition[]): Summaries {
  const nSecrets = options.secrets ?? 1;
  const secrets = Array.from({ length: nSecrets }, (_, i) => {
    const mine = perSeed.filter((r) => r.secret === i);
    const s = summarizeHeldOut(options.heldOutTasks, mine);
    return { secret: i, evalId: mine[0].evalId, heldOut: s.heldOut, verdict: s.verdict };
  });
  const curve = perSeed[0].curve.map((p, i) => {
    const at = perSeed.map((r) => r.curve[i]);
    return {
      iteration: p.iteration,
      meanReward: mean(at.map((q) => q.meanReward)),
      meanNormalized: meanOf(at.map((q) => q.meanNormalized)),
      bestNormalized: meanOf(at.map((q) => q.bestNormalized)),
    };
  });
  const { rows, heldOut, spread, families, verdict, paired } = summarizeHeldOut(options.heldOutTasks, perSeed);
  return { secrets, curve, rows, heldOut, spread, families, verdict, paired, confirmed: summarizeConfirmed(options, perSeed) };
}

/** The same on confirmed scores, overall and under each secret alone; null when a repetition has none. */
function summarizeConfirmed(options: TransferOptions, perSeed: TimedRepetition[]): TransferResult['confirmed'] {
  const confirmedReps = perSeed.map((r) => r.confirmed);
  if (!confirmedReps.every((c) => c !== null)) return null;
  const nSecrets = options.secrets ?? 1;
  return {
    ...summarizeHeldOut(options.heldOutTasks, confirmedReps as NonNullable<RepetitionResult['confirmed']>[]),
    secrets: Array.from({ length: nSecrets }, (_, i) => {
      const s = summarizeHeldOut(
        options.heldOutTasks,
        perSeed.filter((r) => r.secret === i).map((r) => r.confirmed as NonNullable<RepetitionResult['confirmed']>),
      );
      return { secret: i, heldOut: s.heldOut, verdict: s.verdict };
    }),
  };
}

/** What the report is written from beside the summaries. */
interface ReportContext {
  dir: string;
  options: TransferOptions;
  prior: ControllerPrior | null;
  perSeed: TimedRepetition[];
  notes: string[];
  wallSeconds: number;
}

/** Writes the report in `dir`: markdown and the SVG plots; their paths. */
async function writeReport(r: ReportContext, s: Summaries): Promise<TransferResult['files']> {
  const { dir, options, prior } = r;
  const { rows, heldOut, spread, families, verdict, paired } = s;
  const markdown = transferMarkdown({
    options,
    prior: prior ? describePrior(prior) : null,
    curve: s.curve,
    summary: { rows, heldOut, spread, families, verdict, paired },
    secrets: s.secrets,
    confirmed: s.confirmed,
    perSeed: r.perSeed,
    notes: r.notes,
    wallSeconds: r.wallSeconds,
    nSeeds: options.seeds ?? 1,
    nSecrets: options.secrets ?? 1,
  });
  const files = {
    markdown: join(dir, 'transfer.md'),
    json: join(dir, 'transfer.json'),
    curveSvg: join(dir, 'learning-curve.svg'),
    comparisonSvg: join(dir, 'held-out.svg'),
  };
  writeFileSync(files.markdown, markdown);
  const curveTitle = prior ? 'No meta-training in this run: the controller started from a prior' : undefined;
  writeFileSync(files.curveSvg, await renderSvg(learningCurveSpec(s.curve, curveTitle)));
  const bars = METHODS.filter(([k]) => heldOut[k] !== null).map(([k, label]) => ({ method: label, score: heldOut[k] as number }));
  writeFileSync(files.comparisonSvg, await renderSvg(comparisonSpec(bars)));
  return files;
}

/**
 * Runs the transfer experiment in `dir` with `executor`: one meta-training and comparison per
 * seed under each evaluation secret (in `dir/secret-K/seed-S`, each level only when there are
 * several), then one report of the means over these repetitions, with each secret's verdicts.
 */
export async function runTransfer(dir: string, requested: TransferOptions, executor: Executor, onEvent?: TransferListener): Promise<TransferResult> {
  const t0 = performance.now();
  const prepared = await prepare(dir, requested, onEvent);
  const { options, prior, notes } = prepared;
  // One scorer pool for every run of the experiment: its threads load the hidden evaluation once, not once per run.
  const scorer = new Scorer();
  let perSeed: TimedRepetition[];
  try {
    perSeed = await runRepetitions(dir, { ...prepared, executor, scorer });
  } finally {
    await scorer.close();
  }
  const summaries = summarize(options, perSeed);
  const wallSeconds = (performance.now() - t0) / 1000;
  const files = await writeReport({ dir, options, prior, perSeed, notes, wallSeconds }, summaries);
  const result: TransferResult = {
    options,
    curve: summaries.curve,
    heldOut: summaries.heldOut,
    spread: summaries.spread,
    rows: summaries.rows,
    families: summaries.families,
    verdict: summaries.verdict,
    paired: summaries.paired,
    perSeed: perSeed.map((r) => ({
      seed: r.seed,
      secret: r.secret,
      evalId: r.evalId,
      heldOut: r.heldOut,
      rows: r.rows,
      curve: r.curve,
      confirmed: r.confirmed,
      wallSeconds: r.wallSeconds,
      readBack: r.readBack,
    })),
    secrets: summaries.secrets,
    confirmed: summaries.confirmed,
    aims: hasAims(options) ? { confirmed: summaries.confirmed ? aimsByFamily(summaries.confirmed.rows) : null, single: aimsByFamily(summaries.rows) } : null,
    files,
    notes,
    wallSeconds,
  };
  writeFileSync(files.json, JSON.stringify(result, null, 2));
  return result;
}
