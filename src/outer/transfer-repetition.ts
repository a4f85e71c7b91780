/**
 * One repetition of the transfer experiment: a seed under an evaluation secret, in a directory of
 * its own. It meta-trains the controller (or starts it from the prior), compares the methods on
 * every held-out task (transfer-arms.ts) and gives the task rows and their means.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FAMILIES } from '../tasks/families/index.js';
import { Controller, type ControllerOptions } from './agents/controller.js';
import { type ControllerPrior, controllerFromPrior, priorFromRun, writePrior } from './agents/prior.js';
import { type TrainConfig, trainAgent } from './loop.js';
import { type ComparisonContext, compareOnTask } from './transfer-arms.js';
import type { TransferOptions, TransferResult } from './transfer-options.js';
import { type HeldOutRow, methodMeans } from './transfer-summary.js';

/** What every repetition of an experiment shares: the comparisons' context, and the prior to start from (null: meta-train). */
export interface RepetitionContext extends ComparisonContext {
  prior: ControllerPrior | null;
  /** The prior meta-training starts from (`TransferOptions.init`), or null: random weights. */
  init: ControllerPrior | null;
  /** The reference prior whose zero-shot job is a row (`TransferOptions.referencePrior`), or null. */
  reference: ControllerPrior | null;
}

/** Which repetition: its directory, seed and evaluation secret (its index, identity, and prefix in the events). */
export interface Repetition {
  dir: string;
  seed: number;
  secret: { index: number; evalId: string; tag: string };
}

/** What one repetition yields. */
export interface RepetitionResult {
  seed: number;
  /** The secret's index (0: the installation's) and identity. */
  secret: number;
  evalId: string;
  curve: TransferResult['curve'];
  rows: HeldOutRow[];
  heldOut: Omit<HeldOutRow, 'task'>;
  confirmed: { heldOut: Omit<HeldOutRow, 'task'>; rows: HeldOutRow[] } | null;
}

/** A finished repetition as its `repetition.json` keeps it: the figures, the seconds it took when it ran, and the inputs' key. */
export interface RecordedRepetition extends RepetitionResult {
  wallSeconds: number;
  /** `repetitionKey` of the inputs the figures come from. */
  key: string;
}

/** The file a finished repetition's figures are kept in, in its directory: small enough to commit, and enough to rebuild the report. */
export const REPETITION_FILE = 'repetition.json';

/**
 * What a repetition's figures depend on besides its seed and secret, as a hash: the tasks, the
 * schedule, the compared methods, and the contents (not the paths) of the priors it reads. A
 * recorded repetition is reused only under the same key, so a changed option never reports old figures.
 */
export function repetitionKey(ctx: Pick<RepetitionContext, 'options' | 'prior' | 'init' | 'reference'>): string {
  const o = ctx.options;
  const weights = (p: ControllerPrior | null) => (p ? createHash('sha256').update(JSON.stringify(p.state)).digest('hex') : null);
  const inputs = {
    trainTasks: o.trainTasks,
    heldOutTasks: o.heldOutTasks,
    iterations: o.iterations,
    group: o.group,
    reward: o.reward ?? null,
    pruneFlat: o.pruneFlat ?? false,
    fidelity: o.fidelity ?? null,
    families: o.families ?? null,
    tasksPerIteration: o.tasksPerIteration ?? null,
    anchor: o.anchor ?? null,
    robust: o.robust ?? null,
    compare: o.compare ?? 'all',
    confirmPicks: o.confirmPicks !== false,
    prior: weights(ctx.prior),
    init: weights(ctx.init),
    reference: weights(ctx.reference),
  };
  return createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 16);
}

/** Reads `repDir`'s recorded repetition; null when there is none or it is not a finished one (unreadable, or without its figures). */
export function readRecordedRepetition(repDir: string): RecordedRepetition | null {
  try {
    const r = JSON.parse(readFileSync(join(repDir, REPETITION_FILE), 'utf8')) as Partial<RecordedRepetition>;
    const w = r.wallSeconds;
    if (typeof w !== 'number' || !Number.isFinite(w) || w < 0 || !Array.isArray(r.rows) || !r.heldOut) return null;
    return r as RecordedRepetition;
  } catch {
    return null;
  }
}

/**
 * The recorded repetition in `repDir` when it is this one (the same key, seed and secret): the
 * experiment reuses it without running anything, so a repetition committed from another session
 * or machine rebuilds the report.
 */
export function recordedRepetition(repDir: string, key: string, rep: Pick<Repetition, 'seed' | 'secret'>): RecordedRepetition | null {
  const r = readRecordedRepetition(repDir);
  return r && r.key === key && r.seed === rep.seed && r.evalId === rep.secret.evalId ? r : null;
}

/** The controller's settings: the prior's, with the repetition's seed and the options' anchor and robustness. */
function controllerSettings(options: TransferOptions, seed: number, prior: ControllerPrior | null): ControllerOptions {
  return {
    ...(prior ? prior.state.options : {}),
    seed,
    ...(options.anchor !== undefined ? { anchor: options.anchor } : {}),
    ...(options.robust !== undefined ? { robust: options.robust } : {}),
  };
}

/** Meta-trains one controller (or starts it from the prior) and compares methods on the held-out tasks, in the repetition's directory. */
export async function runRepetition(ctx: RepetitionContext, rep: Repetition): Promise<RepetitionResult> {
  const { options, prior } = ctx;
  const { dir, seed } = rep;
  // 1. Meta-training, or the prior's weights instead.
  const settings = controllerSettings(options, seed, prior);
  const { controller, curve } = prior ? { controller: await controllerFromPrior(prior, seed, settings), curve: [] } : await metaTrain(ctx, rep, settings);
  // 2. Held-out tasks.
  const reference = ctx.reference ? await controllerFromPrior(ctx.reference, seed) : null;
  const rows: HeldOutRow[] = [];
  const confirmedRows: HeldOutRow[] = [];
  for (const [i, task] of options.heldOutTasks.entries()) {
    const t = { task, dir, tag: rep.secret.tag, seed: seed * 1000 + i, controller, settings, reference };
    const { row, confirmed } = await compareOnTask(ctx, t);
    rows.push(row);
    if (confirmed) confirmedRows.push(confirmed);
  }
  const confirmed = options.confirmPicks !== false ? { rows: confirmedRows, heldOut: methodMeans(confirmedRows) } : null;
  return { seed, secret: rep.secret.index, evalId: rep.secret.evalId, curve, rows, heldOut: methodMeans(rows), confirmed };
}

/** Meta-trains a controller on the train tasks in `dir/meta`, and saves its weights as `dir/prior.json`. */
async function metaTrain(
  ctx: RepetitionContext,
  rep: Repetition,
  settings: ControllerOptions,
): Promise<{ controller: Controller; curve: TransferResult['curve'] }> {
  const { options, onEvent } = ctx;
  const { dir, seed } = rep;
  const tag = rep.secret.tag;
  const controller = ctx.init ? await controllerFromPrior(ctx.init, seed, settings) : new Controller(settings);
  const metaConfig: TrainConfig = {
    tasks: options.trainTasks,
    agent: 'controller',
    iterations: options.iterations,
    group: options.group,
    seed,
    ...(options.families ? { families: options.families.filter((d) => FAMILIES[d.family]?.split === 'train') } : {}),
    ...(options.tasksPerIteration ? { tasksPerIteration: options.tasksPerIteration } : {}),
    reward: options.reward,
    pruneFlat: options.pruneFlat ?? false,
    ...(options.fidelity ? { fidelity: options.fidelity } : {}),
  };
  const per = options.tasksPerIteration ? `, ${Math.min(options.tasksPerIteration, options.trainTasks.length)} per iteration` : '';
  onEvent?.({ type: 'phase', message: `${tag}meta-training the controller on ${options.trainTasks.length} train tasks${per}`, stage: 'meta' });
  const meta = await trainAgent(join(dir, 'meta'), metaConfig, ctx.executor, {
    agent: controller,
    cache: ctx.cache,
    scorer: ctx.scorer,
    onEvent: (e) => onEvent?.({ ...e, stage: `${tag}meta` }),
  });
  writePrior(join(dir, 'prior.json'), priorFromRun(join(dir, 'meta'), `rrl experiment transfer, seed ${seed}`));
  return { controller, curve: meta.iterations };
}
