/**
 * A compute bound at validation time: from a spec and its brief, an estimate of the job's
 * parameter count, its peak memory and its work, so that a job that cannot fit the task's
 * caps is refused as `invalid` before it runs (docs/design.md, boundaries 3 and 4), rather than
 * found out by a worker whose WebAssembly heap runs out.
 *
 * The shapes follow the algorithm files (src/inner/algos). Notation: `d` observation or
 * feature count, `k` action count (Gaussian means for continuous actions) or classes,
 * `sizes = [d, ...model.hidden, k]`, for a network
 *   P     = Σ_l (sizes[l]·sizes[l+1] + sizes[l+1])     trainable parameters
 *   F     = Σ_l  sizes[l]·sizes[l+1]                   multiply-adds per row, forward
 *   U     = Σ_l  sizes[l+1]                            units per row (layer outputs)
 *
 * Memory, in bytes (float32 tensors unless said), the sum of:
 *   weights   P·4·5 per trained network (weights, gradients, clipped gradients, Adam m and v)
 *             + P·8·2 (the plain-JS snapshots used for acting and the artifact);
 *             a target network (DQN) adds P·4 + P·8.
 *   minibatch rows·U·4·6 per network run forward and backward (3 tensors per unit forward —
 *             matMul, bias add, activation — and 3 more backward until the step ends),
 *             rows·U·4·3 per network run forward only, plus rows·(k+1)·4·12 for the loss terms.
 *             The fused engine keeps fewer floats per unit and row than this counts, so the estimate
 *             errs high; compute-estimate.test.ts holds it near a real job's allocation.
 *   buffers   PPO: numEnvs·rolloutSteps rows of (4d + 4k + 33) bytes (obs, actions, log-prob,
 *             reward, done, value, advantage, return, permutation) and the minibatch copies;
 *             DQN: bufferSize·(8d + 9) (obs, next obs, action, reward, terminal; allocated whole);
 *             REINFORCE: the episodes of one update, (episodesPerUpdate + numEnvs)·maxEpisodeSteps
 *             rows, as JS doubles; ARS: the states of one iteration; supervised: the drawn rows
 *             as JS doubles and the validation split as tensors.
 *
 * Work, in FLOPs (2 per multiply-add), the sum of:
 *   gradient steps   rows through the network × 3F (forward + backward ≈ 3 forwards)
 *   acting           one forward per env step (PPO: actor and critic; DQN: the Q-network)
 *   targets          DQN: one forward of the target network per sampled row
 *   ARS              one forward per env step (it has no gradient steps)
 * and the estimated wall time is FLOPs / THROUGHPUT_FLOPS + gradient steps · STEP_OVERHEAD_S.
 * Both figures are generous for this kind of machine (see below), so the estimate errs towards
 * "it fits": only jobs far beyond the cap are refused. Not counted: environment physics,
 * reward expressions, the PPO behaviour-cloning warm start (its data size is not in the spec).
 */
import type { TaskBrief } from '../spec/brief.js';
import type { ArsConfig, DqnConfig, JobSpec, PpoConfig, ReinforceConfig } from '../spec/schema.js';
import type { EnvInfo } from './envs/types.js';
import { environmentFor } from './envs/source.js';

/**
 * Floating-point throughput assumed for training steps, in FLOP/s. Generous on purpose: several
 * times below what the fused engine (nn/mlp.ts) reaches on a small shared machine at every width
 * and batch that `npm run bench -- crossover` times, so a job refused on work is far over its cap.
 */
export const THROUGHPUT_FLOPS = 16e9;

/**
 * Fixed cost of one gradient step beyond its FLOPs (kernel calls, the loss written out in JS), in
 * seconds; a multiple of a small fused step's time in `npm run bench -- crossover`, so it too errs
 * towards "it fits".
 */
export const STEP_OVERHEAD_S = 1e-4;

/**
 * A job is refused on work when its estimated time (at the generous figures above) exceeds this
 * many times the brief's wall-clock cap: with the headroom of those figures, only a job that would
 * need several times its cap on a real machine is refused.
 */
export const WORK_MARGIN = 2;

/** One named share of the memory estimate. */
export interface MemoryPart {
  /** The spec field that drives this part, named in a refusal. */
  field: string;
  /** What the part is, with its numbers, for the message. */
  what: string;
  bytes: number;
}

/** The estimate for one job. */
export interface ComputeEstimate {
  /** Trainable parameters over every network the job trains. */
  params: number;
  /** Peak memory in bytes (tensors and the large JS buffers). */
  memoryBytes: number;
  /** The parts of the memory estimate, largest first. */
  memory: MemoryPart[];
  /** Work over the whole budget, in FLOPs. */
  flops: number;
  /** Gradient steps the budget allows. */
  gradientSteps: number;
  /**
   * Supervised jobs: the examples the job processes when nothing stops it early (its epochs over its
   * mixture, within the budget); null for control jobs, which run to their env-step budget.
   */
  examplesUsed: number | null;
  /** Estimated wall time in seconds at THROUGHPUT_FLOPS and STEP_OVERHEAD_S. */
  seconds: number;
  /** The spec field that drives the work, and the work in words, for the message. */
  work: { field: string; what: string };
}

/** The size of one MLP. */
export interface NetShape {
  params: number;
  macs: number;
  units: number;
}

/** Parameters, forward multiply-adds per row and units per row of an MLP with these layer sizes. */
export function netShape(sizes: number[]): NetShape {
  let params = 0;
  let macs = 0;
  let units = 0;
  for (let l = 0; l + 1 < sizes.length; l++) {
    macs += sizes[l] * sizes[l + 1];
    params += sizes[l] * sizes[l + 1] + sizes[l + 1];
    units += sizes[l + 1];
  }
  return { params, macs, units };
}

const F32 = 4;
const F64 = 8;
/** Tensors kept per unit and row while a network runs forward and backward. */
const TRAIN_TENSORS_PER_UNIT = 6;
/** Tensors kept per unit and row while a network runs forward only (inside a tidy). */
const FORWARD_TENSORS_PER_UNIT = 3;
/** Loss-term tensors per output and row (log-softmax, ratios, clips, masks, …). */
const LOSS_TENSORS_PER_OUTPUT = 12;

/** Memory of a network trained with Adam: weights, gradients, clipped gradients, m, v, JS snapshots. */
const trainedWeights = (net: NetShape): number => net.params * (F32 * 5 + F64 * 2);
/** Memory of a minibatch of `rows` through a network forward and backward. */
const trainActivations = (rows: number, net: NetShape, outputs: number): number =>
  rows * F32 * (TRAIN_TENSORS_PER_UNIT * net.units + LOSS_TENSORS_PER_OUTPUT * (outputs + 1));

/** Estimates the job's parameters, peak memory and work; the spec must already fit the brief. */
export function estimateCompute(spec: JobSpec, brief: TaskBrief): ComputeEstimate {
  return brief.kind === 'control' ? controlEstimate(spec, brief) : supervisedEstimate(spec, brief);
}

/** A count in words: "12,345". */
export const n0 = (x: number): string => Math.round(x).toLocaleString('en-US');
/** The spec's hidden widths in words, for messages. */
export const hiddenWords = (spec: JobSpec): string => `model.hidden [${spec.model.hidden.join(', ')}]`;
/** "2.9e13". */
export const sci = (x: number): string => x.toExponential(1).replace('e+', 'e');

/** What an estimate is made of, before its memory parts are summed and its time is derived. */
interface EstimateParts {
  params: number;
  memory: MemoryPart[];
  flops: number;
  gradientSteps: number;
  work: { field: string; what: string };
  examplesUsed?: number | null;
}

/** The estimate from its parts: memory parts largest first and summed, the time at the assumed throughput. */
function finish(parts: EstimateParts): ComputeEstimate {
  const { params, memory, flops, gradientSteps, work } = parts;
  memory.sort((a, b) => b.bytes - a.bytes);
  const memoryBytes = memory.reduce((a, p) => a + p.bytes, 0);
  const seconds = flops / THROUGHPUT_FLOPS + gradientSteps * STEP_OVERHEAD_S;
  return { params, memoryBytes, memory, flops, gradientSteps, examplesUsed: parts.examplesUsed ?? null, seconds, work };
}

/** What every control estimate starts from: the spec, the environment, the networks' shapes and the budget. */
interface ControlShapes {
  spec: JobSpec;
  info: EnvInfo;
  /** Observation size and action count (Gaussian means for continuous actions). */
  d: number;
  k: number;
  /** The policy network (DQN: the Q-network) and a value network. */
  actor: NetShape;
  critic: NetShape;
  envSteps: number;
  numEnvs: number;
}

/** PPO: rollout buffers, minibatches through actor and critic, `epochs` passes over every rollout. */
function ppoEstimate(c: ControlShapes, a: PpoConfig): ComputeEstimate {
  const { spec, d, k, actor, critic, envSteps, numEnvs } = c;
  const steps = Math.max(1, Math.min(a.rolloutSteps, Math.floor(envSteps / numEnvs)));
  const batch = steps * numEnvs;
  const updates = Math.max(1, Math.floor(envSteps / batch));
  const mb = Math.max(1, Math.floor(batch / a.minibatches));
  const mbPerEpoch = Math.max(1, Math.floor(batch / mb));
  const gradientSteps = updates * a.epochs * mbPerEpoch;
  const rows = gradientSteps * mb;
  const params = actor.params + critic.params + (c.info.actionSpace.type === 'box' ? k : 0);
  const rowsWords = `minibatch of ${n0(mb)} rows (environment.numEnvs ${numEnvs} × algorithm.rolloutSteps ${steps} / algorithm.minibatches ${a.minibatches})`;
  const memory: MemoryPart[] = [
    {
      field: 'model.hidden',
      what: `${hiddenWords(spec)}: ${n0(params)} parameters with gradients and Adam state`,
      bytes: trainedWeights(actor) + trainedWeights(critic),
    },
    {
      field: 'model.hidden',
      what: `${rowsWords} × ${n0(actor.units + critic.units)} units of the actor and critic (${hiddenWords(spec)}), forward and backward`,
      bytes: trainActivations(mb, actor, k) + trainActivations(mb, critic, 1) + mb * (F32 * 2 * (d + k + 3)),
    },
    {
      field: 'algorithm.rolloutSteps',
      what: `rollout buffers of ${n0(batch)} rows (environment.numEnvs ${numEnvs} × algorithm.rolloutSteps ${steps})`,
      bytes: batch * (F32 * d + F32 * k + 33),
    },
  ];
  const flops = 2 * (rows * 3 * (actor.macs + critic.macs) + updates * batch * (actor.macs + critic.macs));
  const what =
    `${n0(gradientSteps)} gradient steps (algorithm.epochs ${a.epochs} × ${mbPerEpoch} minibatches × ${n0(updates)} rollouts) of ${n0(mb)} ` +
    `rows through the actor and critic (${n0(actor.macs + critic.macs)} multiply-adds a row)`;
  return finish({ params, memory, flops, gradientSteps, work: { field: a.epochs > 1 ? 'algorithm.epochs' : 'model.hidden', what } });
}

/** DQN: the Q-network, its target copy, the replay buffer allocated whole, the due gradient steps. */
function dqnEstimate(c: ControlShapes, a: DqnConfig): ComputeEstimate {
  const { spec, d, k, envSteps, numEnvs } = c;
  const q = c.actor;
  const B = a.batchSize;
  const vecSteps = Math.floor(envSteps / numEnvs);
  const events = Math.max(0, Math.floor(vecSteps / a.trainFrequency) - Math.floor(Math.floor(a.learningStarts / numEnvs) / a.trainFrequency));
  const gradientSteps = events * a.gradientSteps;
  const memory: MemoryPart[] = [
    {
      field: 'model.hidden',
      what: `${hiddenWords(spec)}: ${n0(q.params)} parameters of the Q-network with Adam state and its target copy`,
      bytes: trainedWeights(q) + q.params * (F32 + F64),
    },
    {
      field: 'algorithm.batchSize',
      what: `batches of algorithm.batchSize ${B} rows × ${n0(q.units)} units (${hiddenWords(spec)}), forward and backward plus the target network`,
      bytes: trainActivations(B, q, k) + B * F32 * FORWARD_TENSORS_PER_UNIT * q.units + B * F32 * (2 * d + 3),
    },
    {
      field: 'algorithm.bufferSize',
      what: `a replay buffer of algorithm.bufferSize ${n0(a.bufferSize)} transitions × ${d} observation values`,
      bytes: a.bufferSize * (F32 * 2 * d + 9),
    },
  ];
  const flops = 2 * (gradientSteps * B * (3 * q.macs + q.macs) + envSteps * q.macs + events * q.params);
  const what =
    `${n0(gradientSteps)} gradient steps (budget.envSteps ${n0(envSteps)} / environment.numEnvs ${numEnvs} / algorithm.trainFrequency ` +
    `${a.trainFrequency} × algorithm.gradientSteps ${a.gradientSteps}) of algorithm.batchSize ${B} rows (${n0(q.macs)} multiply-adds a row, ` +
    `${hiddenWords(spec)})`;
  const field = a.gradientSteps > 1 ? 'algorithm.gradientSteps' : a.trainFrequency <= 1 ? 'algorithm.trainFrequency' : 'algorithm.batchSize';
  return finish({ params: q.params, memory, flops, gradientSteps, work: { field, what } });
}

/** REINFORCE: the episodes of one update held in JS and run through both networks at once. */
function reinforceEstimate(c: ControlShapes, a: ReinforceConfig): ComputeEstimate {
  const { spec, info, d, k, actor, critic, envSteps, numEnvs } = c;
  // One update holds every step of at least episodesPerUpdate finished episodes (up to numEnvs - 1 more finish at the same step).
  const rows = Math.min(envSteps, (a.episodesPerUpdate + numEnvs) * info.maxEpisodeSteps);
  const memory: MemoryPart[] = [
    {
      field: 'model.hidden',
      what: `${hiddenWords(spec)}: ${n0(actor.params + critic.params)} parameters with Adam state`,
      bytes: trainedWeights(actor) + trainedWeights(critic),
    },
    {
      field: 'model.hidden',
      what:
        `updates of up to ${n0(rows)} rows ((algorithm.episodesPerUpdate ${a.episodesPerUpdate} + environment.numEnvs ${numEnvs}) episodes × ` +
        `${info.maxEpisodeSteps} steps) × ${n0(actor.units + critic.units)} units (${hiddenWords(spec)}), forward and backward`,
      bytes: trainActivations(rows, actor, k) + trainActivations(rows, critic, 1) + rows * F32 * FORWARD_TENSORS_PER_UNIT * critic.units,
    },
    {
      field: 'algorithm.episodesPerUpdate',
      what: `the episodes of one update, ${n0(rows)} rows kept in JS`,
      bytes: rows * ((d + 2) * F64 * 2 + (d + 2) * F32),
    },
  ];
  // Every step is used in exactly one update; the number of updates depends on episode lengths (not counted).
  const flops = 2 * envSteps * (actor.macs + 3 * actor.macs + 4 * critic.macs);
  const what =
    `budget.envSteps ${n0(envSteps)} steps, each acted on and trained on once through the policy and value networks ` +
    `(${n0(4 * actor.macs + 4 * critic.macs)} multiply-adds a step, ${hiddenWords(spec)})`;
  return finish({ params: actor.params + critic.params, memory, flops, gradientSteps: 0, work: { field: 'model.hidden', what } });
}

/** ARS: θ and its perturbations, the states of one iteration, one plain-JS forward pass per env step. */
function arsEstimate(c: ControlShapes, a: ArsConfig): ComputeEstimate {
  const { spec, info, d, actor, envSteps } = c;
  const rows = Math.min(envSteps, 2 * a.directions * info.maxEpisodeSteps);
  const memory: MemoryPart[] = [
    {
      field: 'model.hidden',
      what: `${hiddenWords(spec)}: ${n0(actor.params)} parameters and algorithm.directions ${a.directions} perturbations`,
      bytes: actor.params * F64 * (a.directions + 4),
    },
    { field: 'algorithm.directions', what: `the states of one iteration, ${n0(rows)} rows`, bytes: rows * d * F64 * 2 },
  ];
  const flops = 2 * envSteps * actor.macs;
  const what = `budget.envSteps ${n0(envSteps)} steps, each one forward pass in plain JS (${n0(actor.macs)} multiply-adds, ${hiddenWords(spec)})`;
  return finish({ params: actor.params, memory, flops, gradientSteps: 0, work: { field: 'model.hidden', what } });
}

/** A control job's estimate: the shapes its algorithm starts from, then the algorithm's own estimate. */
function controlEstimate(spec: JobSpec, brief: TaskBrief): ComputeEstimate {
  const info = environmentFor(brief).info;
  const d = info.observationNames.length;
  const space = info.actionSpace;
  const k = space.type === 'discrete' ? space.n : space.shape[0];
  const c: ControlShapes = {
    spec,
    info,
    d,
    k,
    actor: netShape([d, ...spec.model.hidden, k]),
    critic: netShape([d, ...spec.model.hidden, 1]),
    envSteps: Math.min(spec.budget.envSteps ?? 0, brief.budget.maxEnvSteps),
    numEnvs: spec.environment.numEnvs,
  };
  const a = spec.algorithm;
  if (a.name === 'ppo') return ppoEstimate(c, a);
  if (a.name === 'dqn') return dqnEstimate(c, a);
  if (a.name === 'reinforce') return reinforceEstimate(c, a);
  if (a.name === 'ars') return arsEstimate(c, a);
  // Supervised algorithms on a control task are refused by briefIssues; nothing to estimate.
  return finish({ params: 0, memory: [], flops: 0, gradientSteps: 0, work: { field: 'algorithm.name', what: 'nothing' } });
}

/** A supervised job's estimate: its drawn rows, the validation split, `epochs` passes within the example budget. */
function supervisedEstimate(spec: JobSpec, brief: TaskBrief): ComputeEstimate {
  const info = brief.supervised;
  const a = spec.algorithm;
  if (!info || a.name !== 'supervised')
    return finish({ params: 0, memory: [], flops: 0, gradientSteps: 0, work: { field: 'algorithm.name', what: 'nothing' } });
  const d = info.features.length;
  const k = info.target.type === 'classification' ? (info.target.classes?.length ?? 0) : 1;
  const net = netShape([d, ...spec.model.hidden, k]);
  const chosen = spec.dataset.sources.filter((s) => s.weight > 0);
  const catalogRows = (ids: string[]): number => ids.reduce((sum, id) => sum + (info.sources.find((s) => s.id === id)?.examples ?? 0), 0);
  const provided = catalogRows(spec.dataset.sources.map((s) => s.id));
  const n = spec.dataset.size ?? catalogRows(chosen.map((s) => s.id));
  const nVal = Math.floor(n * spec.dataset.validationFraction);
  const nTrain = Math.max(1, n - nVal);
  const batch = Math.min(a.batchSize, nTrain);
  const perEpoch = Math.max(1, Math.floor(nTrain / batch));
  const maxExamples = Math.min(spec.budget.examples ?? 0, brief.budget.maxExamples ?? 0);
  const gradientSteps = Math.min(a.epochs * perEpoch, Math.floor(maxExamples / batch));
  const epochs = Math.ceil(gradientSteps / perEpoch);
  const memory: MemoryPart[] = [
    {
      field: 'model.hidden',
      what: `${hiddenWords(spec)}: ${n0(net.params)} parameters with gradients and optimiser state`,
      bytes: trainedWeights(net) + net.params * F64,
    },
    {
      field: 'algorithm.batchSize',
      what: `batches of ${n0(batch)} rows (algorithm.batchSize ${a.batchSize}) × ${n0(net.units)} units (${hiddenWords(spec)}), forward and backward`,
      bytes: trainActivations(batch, net, k) + batch * F32 * (d + k + 1 + (spec.model.dropout > 0 ? net.units : 0)) * 2,
    },
    {
      field: 'dataset.size',
      what:
        `${n0(n)} drawn rows (dataset.size ${spec.dataset.size ?? 'null: every row of the chosen sources'}) and the ${n0(provided)} rows provided, × ` +
        `${d} features`,
      bytes: (n + provided) * (d + 1) * F64 * 2,
    },
    {
      field: 'dataset.validationFraction',
      what: `a validation split of ${n0(nVal)} rows evaluated at once (${hiddenWords(spec)})`,
      bytes: nVal * F32 * (d + k + 1 + FORWARD_TENSORS_PER_UNIT * net.units),
    },
  ];
  const flops = 2 * (gradientSteps * batch * 3 * net.macs + epochs * nVal * net.macs);
  const what =
    `${n0(gradientSteps)} gradient steps of ${n0(batch)} rows (algorithm.epochs ${a.epochs} × ${n0(perEpoch)} steps an epoch, within ` +
    `budget.examples ${n0(maxExamples)}) through ${n0(net.macs)} multiply-adds a row (${hiddenWords(spec)})`;
  const work = { field: a.batchSize < 16 ? 'algorithm.batchSize' : 'budget.examples', what };
  return finish({ params: net.params, memory, flops, gradientSteps, work, examplesUsed: gradientSteps * batch });
}

/** "4.1 GB", "312 MB", "12 kB", in powers of 1024 like the memory cap's MB. */
export function formatBytes(bytes: number): string {
  if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(1)} GB`;
  if (bytes >= 2 ** 20) return `${Math.round(bytes / 2 ** 20).toLocaleString('en-US')} MB`;
  return `${Math.max(1, Math.round(bytes / 2 ** 10))} kB`;
}
