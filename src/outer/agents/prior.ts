/**
 * A controller prior: the weights of a meta-trained controller, saved with where they came from,
 * so that a later run starts from them instead of meta-training again. `rrl experiment transfer`
 * writes one per repetition (`prior.json`) and takes one with `--prior`. The repository ships two:
 * `SHIPPED_PRIOR` (the corpus preset's meta-training, on real tables and the task families; the
 * `corpus-quick` preset's) and `FAMILIES_PRIOR` (the full preset's, on the families alone; the `quick` preset's).
 *
 * Only weights travel: no optimiser state, no scores, no job of the run that made it. A prior
 * meta-trained under one evaluation secret is valid under another (it has seen train tasks only);
 * its provenance names the secret's identity, so a report can say so.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Store } from '../../store/store.js';
import { initTf } from '../../util/tf.js';
import { Controller, type ControllerOptions } from './controller.js';

/** The file format's tag. */
export const PRIOR_FORMAT = 'rrl-controller-prior/1';

/** The prior the repository ships: the corpus preset's meta-training, seed 1, on the corpus's train packages and the train families (docs/transfer.md, "The shipped priors"). */
export const SHIPPED_PRIOR = resolve(fileURLToPath(new URL('../../../../priors/controller.json', import.meta.url)));

/** The prior shipped before it: the full preset's meta-training, seed 1, on the train families alone; the `quick` preset's prior and the corpus preset's reference row. */
export const FAMILIES_PRIOR = resolve(fileURLToPath(new URL('../../../../priors/controller-families.json', import.meta.url)));

/** Where a prior came from. */
export interface PriorProvenance {
  /** The meta-training run's seed, its iterations and how many train tasks it drew from. */
  seed: number | null;
  iterations: number;
  trainTasks: number | null;
  /** The evaluation identity the meta-training was scored under (null: not recorded). */
  evalId: string | null;
  /** When the prior was written, and the command or run that made it (free text). */
  createdAt: string;
  source: string;
}

/** A saved prior: the controller's settings and weights, and its provenance. */
export interface ControllerPrior {
  format: typeof PRIOR_FORMAT;
  provenance: PriorProvenance;
  /** The controller's settings (width, update settings) and weights, as `Controller.state()` gives them, without the optimiser. */
  state: { version?: number; options: ControllerOptions; weights: number[][]; familyLogWeights?: Record<string, number> };
}

/** Keeps what a prior needs of a controller's state: settings and weights at float32 precision (9 digits restore a float32 exactly). */
function priorState(state: unknown): ControllerPrior['state'] {
  const s = state as { version?: number; options?: ControllerOptions; weights?: number[][]; familyLogWeights?: Record<string, number> };
  if (!s || !Array.isArray(s.weights) || !s.options) throw new Error('not a controller state (no options or weights)');
  return {
    // A prior written before checkpoints stated their version has none: the controller reads its layout from its arrays.
    ...(s.version === undefined ? {} : { version: s.version }),
    options: s.options,
    weights: s.weights.map((w) => w.map((x) => Number(Math.fround(x).toPrecision(9)))),
    ...(s.familyLogWeights ? { familyLogWeights: s.familyLogWeights } : {}),
  };
}

/** The prior of a finished meta-training run (the run directory holding its `store.db`): its last checkpoint. */
export function priorFromRun(runDir: string, source = `meta-training run ${runDir}`): ControllerPrior {
  const store = new Store(runDir);
  try {
    const run = store.getRun();
    const checkpoint = run && store.latestCheckpoint(run.id);
    if (!run || !checkpoint) throw new Error(`${runDir} holds no meta-training run with a checkpoint`);
    if (checkpoint.agent !== 'controller') throw new Error(`${runDir}: its checkpoint is the ${checkpoint.agent} agent's, not the controller's`);
    const config = (run.config ?? {}) as { seed?: number; tasks?: unknown[] };
    return {
      format: PRIOR_FORMAT,
      provenance: {
        seed: typeof config.seed === 'number' ? config.seed : null,
        iterations: checkpoint.iteration + 1,
        trainTasks: Array.isArray(config.tasks) ? config.tasks.length : null,
        evalId: run.evalIdentity,
        createdAt: new Date().toISOString(),
        source,
      },
      state: priorState(checkpoint.state),
    };
  } finally {
    store.close();
  }
}

/** Writes a prior as JSON. */
export function writePrior(path: string, prior: ControllerPrior): void {
  writeFileSync(path, `${JSON.stringify(prior)}\n`);
}

/**
 * Reads a prior from `path`: a prior file, or a directory of a transfer repetition (its
 * `prior.json`, else its meta-training run `meta/`) or of a meta-training run itself. Throws
 * one line that says what is wrong with anything else.
 */
export function readPrior(path: string): ControllerPrior {
  if (!existsSync(path)) throw new Error(`prior ${path} does not exist`);
  if (statSync(path).isDirectory()) {
    if (existsSync(join(path, 'prior.json'))) return readPrior(join(path, 'prior.json'));
    if (existsSync(join(path, 'meta', 'store.db'))) return priorFromRun(join(path, 'meta'));
    if (existsSync(join(path, 'store.db'))) return priorFromRun(path);
    throw new Error(`prior ${path}: a directory without prior.json, meta/store.db or store.db (name one repetition's directory, such as secret-1/seed-1)`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`prior ${path} is not JSON: ${(err as Error).message}`);
  }
  const p = parsed as Partial<ControllerPrior>;
  if (p?.format !== PRIOR_FORMAT) throw new Error(`prior ${path} is not a controller prior (format "${String(p?.format)}", expected "${PRIOR_FORMAT}")`);
  if (!p.provenance || typeof p.provenance !== 'object') throw new Error(`prior ${path} has no provenance`);
  return { format: PRIOR_FORMAT, provenance: p.provenance, state: priorState(p.state) };
}

/**
 * A controller with the prior's weights and settings (`seed` for its sampling stream); throws
 * when the weights do not fit this code's controller (other features or width).
 */
export async function controllerFromPrior(prior: ControllerPrior, seed: number, overrides: ControllerOptions = {}): Promise<Controller> {
  await initTf();
  const controller = new Controller({ ...prior.state.options, ...overrides, seed });
  await controller.load(prior.state);
  return controller;
}

/** Reads the prior at `path` and fits it to this code's controller (`seed` for its sampling stream); an error names the path in one line. */
export async function loadPrior(path: string, seed: number): Promise<{ prior: ControllerPrior; controller: Controller }> {
  const prior = readPrior(path);
  const controller = await controllerFromPrior(prior, seed).catch((err: Error) => Promise.reject(new Error(`prior ${path}: ${err.message}`)));
  return { prior, controller };
}

/** One line on a prior's origin, for reports. */
export function describePrior(prior: ControllerPrior): string {
  const p = prior.provenance;
  const tasks = p.trainTasks === null ? '' : ` on ${p.trainTasks} train tasks`;
  const seed = p.seed === null ? '' : `, seed ${p.seed}`;
  const evalId = p.evalId ? `, scored under evaluation ${p.evalId}` : '';
  return `${p.iterations} meta-training iterations${tasks}${seed}${evalId} (${p.source})`;
}
