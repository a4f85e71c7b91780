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
 *   minibatch rows·U·4·6 per network run forward and backward (tfjs keeps ~3 tensors per unit
 *             forward — matMul, bias add, activation — and ~3 more backward until the step ends),
 *             rows·U·4·3 per network run forward only, plus rows·(k+1)·4·12 for the loss terms.
 *             (Counted for tfjs; the fused engine keeps fewer, about 3 to 4 floats per unit and row,
 *             so the estimate errs high: compute-estimate.test.ts holds it within 4× of a real job's allocation.)
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
import { jobMemoryCapMb } from '../spec/brief.js';
import type { JobSpec } from '../spec/schema.js';
import type { SpecIssue } from '../spec/validate.js';
import { environmentFor } from './envs/source.js';

/**
 * Floating-point throughput assumed for training steps, in FLOP/s: 16 GFLOP/s.
 * First measured for tfjs-wasm on the development machine (2 shared cores, Node 20,
 * tfjs-backend-wasm 4.22) with a throwaway script that timed Adam steps of an MLP (3 warm-up
 * steps, then as many steps as fit in 3 s): d 32 → [256, 256] → 8 at batch 256: 100 ms a step,
 * 1.16 GFLOP/s; at batch 1024: 0.83 GFLOP/s; d 16 → [512, 512] → 8 at batch 2048: 1.03 GFLOP/s;
 * d 4 → [64, 64] → 2 at batch 1024 (DQN's largest batch): 50 ms a step, 0.55 GFLOP/s. About
 * 1 GFLOP/s, so 4 GFLOP/s left 4× headroom. The jobs now train on the fused engine (nn/mlp.ts),
 * whose steps were 4× to 19× faster than tfjs's in the same process at every width (32–512) and
 * batch (32–2048) of `npm run bench -- crossover`: the figure is scaled by the smallest of those
 * ratios, which keeps at least the old headroom.
 */
export const THROUGHPUT_FLOPS = 16e9;

/**
 * Fixed cost of one gradient step beyond its FLOPs (kernel calls, the loss written out in JS), in
 * seconds: 0.1 ms. tfjs's was measured at 3.3 ms (d 4 → [64, 64] → 2 at batch 8) and assumed 1 ms;
 * a fused step of [8, 32, 32, 2] at batch 32 took 0.06 ms against tfjs's 15.6 ms in the same
 * process (crossover bench), so a tenth of the old figure still leaves room.
 */
export const STEP_OVERHEAD_S = 1e-4;

/**
 * A job is refused on work when its estimated time (at the generous figures above) exceeds this
 * many times the brief's wall-clock cap: with the 4× and 3× headroom of the figures, only a job
 * that would need roughly 8× its cap or more on the measured machine is refused.
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

interface NetShape {
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

const n0 = (x: number): string => Math.round(x).toLocaleString('en-US');
const hiddenWords = (spec: JobSpec): string => `model.hidden [${spec.model.hidden.join(', ')}]`;

function finish(
  params: number,
  memory: MemoryPart[],
  flops: number,
  gradientSteps: number,
  work: { field: string; what: string },
  examplesUsed: number | null = null,
): ComputeEstimate {
  memory.sort((a, b) => b.bytes - a.bytes);
  const memoryBytes = memory.reduce((a, p) => a + p.bytes, 0);
  return { params, memoryBytes, memory, flops, gradientSteps, examplesUsed, seconds: flops / THROUGHPUT_FLOPS + gradientSteps * STEP_OVERHEAD_S, work };
}

function controlEstimate(spec: JobSpec, brief: TaskBrief): ComputeEstimate {
  const info = environmentFor(brief).info;
  const d = info.observationNames.length;
  const space = info.actionSpace;
  const k = space.type === 'discrete' ? space.n : space.shape[0];
  const sizes = [d, ...spec.model.hidden, k];
  const actor = netShape(sizes);
  const critic = netShape([d, ...spec.model.hidden, 1]);
  const envSteps = Math.min(spec.budget.envSteps ?? 0, brief.budget.maxEnvSteps);
  const numEnvs = spec.environment.numEnvs;
  const a = spec.algorithm;
  const memory: MemoryPart[] = [];

  if (a.name === 'ppo') {
    const steps = Math.max(1, Math.min(a.rolloutSteps, Math.floor(envSteps / numEnvs)));
    const batch = steps * numEnvs;
    const updates = Math.max(1, Math.floor(envSteps / batch));
    const mb = Math.max(1, Math.floor(batch / a.minibatches));
    const mbPerEpoch = Math.max(1, Math.floor(batch / mb));
    const gradientSteps = updates * a.epochs * mbPerEpoch;
    const rows = gradientSteps * mb;
    const params = actor.params + critic.params + (space.type === 'box' ? k : 0);
    const rowsWords = `minibatch of ${n0(mb)} rows (environment.numEnvs ${numEnvs} × algorithm.rolloutSteps ${steps} / algorithm.minibatches ${a.minibatches})`;
    memory.push(
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
    );
    const flops = 2 * (rows * 3 * (actor.macs + critic.macs) + updates * batch * (actor.macs + critic.macs));
    const what =
      `${n0(gradientSteps)} gradient steps (algorithm.epochs ${a.epochs} × ${mbPerEpoch} minibatches × ${n0(updates)} rollouts) of ${n0(mb)} ` +
      `rows through the actor and critic (${n0(actor.macs + critic.macs)} multiply-adds a row)`;
    return finish(params, memory, flops, gradientSteps, { field: a.epochs > 1 ? 'algorithm.epochs' : 'model.hidden', what });
  }

  if (a.name === 'dqn') {
    const q = actor;
    const B = a.batchSize;
    const vecSteps = Math.floor(envSteps / numEnvs);
    const events = Math.max(0, Math.floor(vecSteps / a.trainFrequency) - Math.floor(Math.floor(a.learningStarts / numEnvs) / a.trainFrequency));
    const gradientSteps = events * a.gradientSteps;
    memory.push(
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
    );
    const flops = 2 * (gradientSteps * B * (3 * q.macs + q.macs) + envSteps * q.macs + events * q.params);
    const what =
      `${n0(gradientSteps)} gradient steps (budget.envSteps ${n0(envSteps)} / environment.numEnvs ${numEnvs} / algorithm.trainFrequency ` +
      `${a.trainFrequency} × algorithm.gradientSteps ${a.gradientSteps}) of algorithm.batchSize ${B} rows (${n0(q.macs)} multiply-adds a row, ` +
      `${hiddenWords(spec)})`;
    const field = a.gradientSteps > 1 ? 'algorithm.gradientSteps' : a.trainFrequency <= 1 ? 'algorithm.trainFrequency' : 'algorithm.batchSize';
    return finish(q.params, memory, flops, gradientSteps, { field, what });
  }

  if (a.name === 'reinforce') {
    // One update holds every step of at least episodesPerUpdate finished episodes (up to numEnvs - 1 more finish at the same step).
    const rows = Math.min(envSteps, (a.episodesPerUpdate + numEnvs) * info.maxEpisodeSteps);
    memory.push(
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
    );
    // Every step is used in exactly one update; the number of updates depends on episode lengths (not counted).
    const flops = 2 * envSteps * (actor.macs + 3 * actor.macs + 4 * critic.macs);
    const what =
      `budget.envSteps ${n0(envSteps)} steps, each acted on and trained on once through the policy and value networks ` +
      `(${n0(4 * actor.macs + 4 * critic.macs)} multiply-adds a step, ${hiddenWords(spec)})`;
    return finish(actor.params + critic.params, memory, flops, 0, { field: 'model.hidden', what });
  }

  if (a.name === 'ars') {
    const rows = Math.min(envSteps, 2 * a.directions * info.maxEpisodeSteps);
    memory.push(
      {
        field: 'model.hidden',
        what: `${hiddenWords(spec)}: ${n0(actor.params)} parameters and algorithm.directions ${a.directions} perturbations`,
        bytes: actor.params * F64 * (a.directions + 4),
      },
      { field: 'algorithm.directions', what: `the states of one iteration, ${n0(rows)} rows`, bytes: rows * d * F64 * 2 },
    );
    const flops = 2 * envSteps * actor.macs;
    const what = `budget.envSteps ${n0(envSteps)} steps, each one forward pass in plain JS (${n0(actor.macs)} multiply-adds, ${hiddenWords(spec)})`;
    return finish(actor.params, memory, flops, 0, { field: 'model.hidden', what });
  }

  // Supervised algorithms on a control task are refused by briefIssues; nothing to estimate.
  return finish(0, memory, 0, 0, { field: 'algorithm.name', what: 'nothing' });
}

function supervisedEstimate(spec: JobSpec, brief: TaskBrief): ComputeEstimate {
  const info = brief.supervised;
  const a = spec.algorithm;
  if (!info || a.name !== 'supervised') return finish(0, [], 0, 0, { field: 'algorithm.name', what: 'nothing' });
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
  return finish(net.params, memory, flops, gradientSteps, { field: a.batchSize < 16 ? 'algorithm.batchSize' : 'budget.examples', what }, gradientSteps * batch);
}

/**
 * The scorer's wall-clock limit for one scoring, in seconds: `SCORER_DEFAULTS.timeoutMs` of
 * outer/scoring/scorer-pool.ts (this room cannot import it; compute-estimate.test.ts holds them equal).
 */
export const SCORER_LIMIT_S = 120;

/**
 * Throughput assumed for scoring, in FLOP/s: 0.25 GFLOP/s. The scorer runs the policy or model
 * forward in plain JS (inner/policy.ts, inner/model.ts), one step of every live episode at a time.
 * Measured (issue 42): acrobot-swingup with `hidden [512, 512, 512, 512]` — 30 held-out episodes ×
 * 500 steps × 1.6 MFLOP a forward pass, 23.7 GFLOP by this estimate — scored in about 20 s on an
 * idle core (1.2 GFLOP/s) and 43 s under load (0.55 GFLOP/s). The figure is half the loaded one, for
 * a slower or busier scorer and what the estimate leaves out (the physics, the bootstrap).
 */
export const SCORING_THROUGHPUT_FLOPS = 0.25e9;

/** The share of the scorer's limit a spec may plan to use: at most half, so the scorer's own time and a slow machine still fit. */
export const SCORING_MARGIN = 2;

/**
 * The most a spec's scoring may cost, in FLOPs: SCORER_LIMIT_S × SCORING_THROUGHPUT_FLOPS /
 * SCORING_MARGIN = 15 GFLOP. A spec above it is invalid (its scoring could time out, and a timeout
 * within the cap is the harness's failure: docs/design.md, boundary 6).
 */
export const SCORING_CAP_FLOPS = (SCORER_LIMIT_S * SCORING_THROUGHPUT_FLOPS) / SCORING_MARGIN;

/** The estimated cost of scoring one artifact on the hidden evaluation, in machine-independent units. */
export interface ScoringEstimate {
  /** Forward passes of one row (episodes × steps, or test rows). */
  forwards: number;
  /** FLOPs of one forward pass: 2 per multiply-add, 1 per hidden unit's activation, 3 per input value's normalisation. */
  flopsPerForward: number;
  flops: number;
  /** The sizes in words, for the message. */
  what: string;
}

/**
 * The cost of scoring a spec's artifact: control, held-out episodes × the environment's most steps
 * an episode × a forward pass of the policy network with the observation normalisation;
 * supervised, test rows × a forward pass with the feature standardisation. Null when the brief does
 * not state its evaluation's size, or an outside program trains the task (its model is its own).
 */
export function estimateScoring(spec: JobSpec, brief: TaskBrief): ScoringEstimate | null {
  if (brief.trainer) return null;
  let d: number;
  let k: number;
  let forwards: number;
  let sizes: string;
  if (brief.kind === 'control') {
    const episodes = brief.evaluation.episodes;
    if (episodes === undefined) return null;
    const info = environmentFor(brief).info;
    d = info.observationNames.length;
    k = info.actionSpace.type === 'discrete' ? info.actionSpace.n : info.actionSpace.shape[0];
    forwards = episodes * info.maxEpisodeSteps;
    sizes = `${n0(episodes)} held-out episodes × up to ${n0(info.maxEpisodeSteps)} steps`;
  } else {
    const rows = brief.evaluation.rows;
    const info = brief.supervised;
    if (rows === undefined || !info) return null;
    d = info.features.length;
    k = info.target.type === 'classification' ? (info.target.classes?.length ?? 0) : 1;
    forwards = rows;
    sizes = `${n0(rows)} test rows`;
  }
  const net = netShape([d, ...spec.model.hidden, k]);
  const flopsPerForward = 2 * net.macs + (net.units - k) + 3 * d;
  const flops = forwards * flopsPerForward;
  return { forwards, flopsPerForward, flops, what: `${sizes} × ${sci(flopsPerForward)} FLOPs a forward pass of ${hiddenWords(spec)}` };
}

/** "4.1 GB", "312 MB", "12 kB", in powers of 1024 like the memory cap's MB. */
export function formatBytes(bytes: number): string {
  if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(1)} GB`;
  if (bytes >= 2 ** 20) return `${Math.round(bytes / 2 ** 20).toLocaleString('en-US')} MB`;
  return `${Math.max(1, Math.round(bytes / 2 ** 10))} kB`;
}

/** "2.9e13". */
const sci = (x: number): string => x.toExponential(1).replace('e+', 'e');

/**
 * The caps a spec's estimate breaks: scoring above SCORING_CAP_FLOPS, memory above the brief's job
 * memory cap, or work that would need more than WORK_MARGIN × the brief's wall-clock cap at the
 * generous throughput.
 * Each issue names the field that drives the cost and gives the numbers.
 */
export function computeIssues(spec: JobSpec, brief: TaskBrief, estimate: ComputeEstimate = estimateCompute(spec, brief)): SpecIssue[] {
  const issues: SpecIssue[] = [];
  const capMb = jobMemoryCapMb(brief);
  if (estimate.memoryBytes > capMb * 2 ** 20) {
    const top = estimate.memory[0];
    issues.push({
      path: top.field,
      value: fieldValue(spec, top.field),
      message:
        `the job needs about ${formatBytes(estimate.memoryBytes)} of memory, over the task's cap of ${capMb.toLocaleString('en-US')} MB ` +
        `(${top.what}: ${formatBytes(top.bytes)})`,
    });
  }
  const wall = brief.budget.maxWallSeconds;
  if (estimate.seconds > WORK_MARGIN * wall) {
    issues.push({
      path: estimate.work.field,
      value: fieldValue(spec, estimate.work.field),
      message:
        `the job's work cannot finish within the task's wall-clock cap of ${n0(wall)} s: ${estimate.work.what}; about ${sci(estimate.flops)} FLOPs, ` +
        `which take about ${n0(estimate.seconds)} s even at ${THROUGHPUT_FLOPS / 1e9} GFLOP/s and ${STEP_OVERHEAD_S * 1000} ms a gradient step (refused ` +
        `above ${WORK_MARGIN}× the cap)`,
    });
  }
  const scoring = estimateScoring(spec, brief);
  if (scoring && scoring.flops > SCORING_CAP_FLOPS) {
    const gflop = (x: number): string => (x / 1e9).toLocaleString('en-US', { maximumFractionDigits: 1 });
    issues.push({
      path: 'model.hidden',
      value: spec.model.hidden,
      message:
        `scoring the model on the hidden evaluation needs about ${gflop(scoring.flops)} GFLOP, over the cap of ${gflop(SCORING_CAP_FLOPS)} GFLOP ` +
        `(${scoring.what}; the cap is the scorer's ${SCORER_LIMIT_S} s at an assumed ${SCORING_THROUGHPUT_FLOPS / 1e9} GFLOP/s, ` +
        `with ${SCORING_MARGIN}× margin)`,
    });
  }
  return issues;
}

/** The spec's value at a dotted path such as `algorithm.batchSize`. */
function fieldValue(spec: JobSpec, path: string): unknown {
  let v: unknown = spec;
  for (const key of path.split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
  return v;
}
