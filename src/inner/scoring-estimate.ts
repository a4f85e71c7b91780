/**
 * A scoring bound at validation time: the cost of scoring a spec's artifact on the hidden
 * evaluation, so that a model too large to score within the scorer's limit is refused as
 * `invalid` before it trains (compute-issues.ts).
 */
import type { TaskBrief } from '../spec/brief.js';
import type { JobSpec } from '../spec/schema.js';
import { hiddenWords, n0, netShape, sci } from './compute-estimate.js';
import { environmentFor } from './envs/source.js';

/**
 * The scorer's wall-clock limit for one scoring, in seconds: `SCORER_DEFAULTS.timeoutMs` of
 * outer/scoring/scorer-pool.ts (this room cannot import it; compute-estimate.test.ts holds them equal).
 */
export const SCORER_LIMIT_S = 120;

/**
 * Throughput assumed for scoring, in FLOP/s. The scorer runs the policy or model forward in plain
 * JS (inner/policy.ts, inner/model.ts), one step of every live episode at a time, far slower than
 * training's fused engine. The figure sits well below the scorer's rate on a loaded machine, for a
 * slower or busier scorer and what the estimate leaves out (the physics, the bootstrap).
 */
export const SCORING_THROUGHPUT_FLOPS = 0.25e9;

/** The share of the scorer's limit a spec may plan to use: at most half, so the scorer's own time and a slow machine still fit. */
export const SCORING_MARGIN = 2;

/**
 * The most a spec's scoring may cost, in FLOPs: SCORER_LIMIT_S × SCORING_THROUGHPUT_FLOPS /
 * SCORING_MARGIN. A spec above it is invalid (its scoring could time out, and a timeout within the
 * cap is the harness's failure: docs/design.md, boundary 6).
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
