/**
 * The embedded trainer agent: a small neural policy (tfjs) over the design space. The
 * brief's features go through one tanh layer to one softmax per head, each head in a fixed
 * output slot named by `HEAD_NAMES` (so a decision means the same on every task); a spec is sampled
 * head by head and its log-probability is the sum over the heads that matter for it.
 *
 * Anchored on the task's baseline spec: each head's logits also get, on the option the task's own
 * baseline spec takes there (`baselineChoice`), an *anchor* whose strength per head the same
 * hidden layer computes. Absolute logits say "a learning rate of 3e-3"; the anchor says "keep
 * what the task's author chose", which means the same in a family never seen, so the prior carries
 * across families where absolute choices do not. A choice is also written on the baseline spec
 * (`specWriter`): the heads that keep the baseline's option keep its exact values, so the
 * baseline's choice is the baseline spec itself (docs/transfer.md, "The anchored controller").
 * Updated by GRPO: within each task's group the rewards are normalised to advantages; a few
 * Adam epochs maximise the clipped ratio objective against the sampling policy's
 * log-probabilities, with an entropy bonus and a KL penalty to the sampling policy.
 */
import type { TaskBrief } from '../../spec/brief.js';
import { Rng } from '../../util/rng.js';
import { initTf, tf } from '../../util/tf.js';
import { groupAdvantages } from '../reward.js';
import { FEATURE_DIM, TABLE_SLOTS, briefFeatures } from './features.js';
import { validateSpec } from '../../inner/spec-check.js';
import { getPublicTask } from '../../tasks/briefs.js';
import type { JobSpecInput } from '../../spec/schema.js';
import { HEAD_NAMES, type Head, activeHeads, buildHeads, decode, headLayout, nearestChoice, overlayOnBaseline } from './space.js';
import type { Agent, Proposal, ProposalContext, RewardGroup, UpdateStats } from './types.js';

/** Controller settings. */
export interface ControllerOptions {
  seed?: number;
  /** Width of the hidden layer. */
  hidden?: number;
  learningRate?: number;
  /** Entropy bonus, to keep exploring the design space. */
  entropyCoef?: number;
  /** GRPO: optimisation epochs per update, ratio clip and KL penalty to the sampling policy. */
  epochs?: number;
  clip?: number;
  klCoef?: number;
  /** Initial anchor strength (logits added to the baseline's option of every head; 0: no lean before training). */
  anchor?: number;
  /**
   * Family-robust updates (online group DRO over task families): each family's weight in the
   * policy gradient is multiplied by exp(−robust × its mean reward) every update, so the families
   * where the policy does worst count most; 0 weighs every task alike.
   */
  robust?: number;
}

/** The trace of one sampled spec. */
export interface ControllerTrace {
  choice: number[];
  logProb: number;
}

/** Largest head (number of options) the controller allocates logits for. */
const MAX_OPTIONS = 8;
/** Output slots: one per head name of the design space. */
const MAX_HEADS = HEAD_NAMES.length;
/**
 * Logit offset of padding options: small enough that their probability is below 1e-20,
 * large enough to stay exact in float32 (−1e9 lost the real logits to rounding and gave
 * NaN gradients on heads with a single real option).
 */
const MASK_LOGIT = -50;
/** Index of the anchor's first variable (the weights before it are the unanchored policy's). */
const ANCHOR_VARS = 4;
/** Bound of a family's log-weight (so no family's weight falls below e^−4 of another's). */
const MAX_FAMILY_LOG_WEIGHT = 2;

export class Controller implements Agent {
  readonly name = 'controller';
  private readonly opts: Required<ControllerOptions>;
  private readonly vars: tf.Variable[];
  private readonly opt: tf.AdamOptimizer;
  /** Each task family's log-weight in the policy gradient (family-robust updates); a family not seen yet has 0. */
  private familyLogWeights: Record<string, number> = {};

  /** Creates a controller with small seeded random weights (near-uniform choices); call after `initTf()`. */
  constructor(options: ControllerOptions = {}) {
    this.opts = { seed: 1, hidden: 32, learningRate: 0.02, entropyCoef: 0.01, epochs: 4, clip: 0.2, klCoef: 0.05, anchor: 1, robust: 1, ...options };
    const rng = new Rng(this.opts.seed);
    const h = this.opts.hidden;
    const init = (n: number, scale: number): Float32Array => Float32Array.from({ length: n }, () => rng.normal() * scale);
    this.vars = [
      tf.variable(tf.tensor2d(init(FEATURE_DIM * h, 1 / Math.sqrt(FEATURE_DIM)), [FEATURE_DIM, h])),
      tf.variable(tf.zeros([h])),
      tf.variable(tf.tensor2d(init(h * MAX_HEADS * MAX_OPTIONS, 0.01), [h, MAX_HEADS * MAX_OPTIONS])),
      tf.variable(tf.zeros([MAX_HEADS * MAX_OPTIONS])),
      // The anchor's strength per head slot: hidden → MAX_HEADS, starting at `anchor` on every task.
      tf.variable(tf.zeros([h, MAX_HEADS])),
      tf.variable(tf.fill([MAX_HEADS], this.opts.anchor)),
    ];
    this.opt = tf.train.adam(this.opts.learningRate);
  }

  /**
   * Logits per head slot for a batch of feature rows and their baseline one-hots
   * ([rows, MAX_HEADS, MAX_OPTIONS]): the absolute logits plus each head's anchor strength on the
   * baseline's option.
   */
  private logits(x: tf.Tensor2D, anchor: tf.Tensor3D): tf.Tensor3D {
    const [w1, b1, w2, b2, wa, ba] = this.vars;
    const hdn = tf.tanh(tf.add(tf.matMul(x, w1 as tf.Tensor2D), b1));
    const absolute = tf.reshape(tf.add(tf.matMul(hdn, w2 as tf.Tensor2D), b2), [-1, MAX_HEADS, MAX_OPTIONS]);
    const strength = tf.reshape(tf.add(tf.matMul(hdn, wa as tf.Tensor2D), ba), [-1, MAX_HEADS, 1]);
    return tf.add(absolute, tf.mul(strength, anchor));
  }

  /** The baseline's option of every head in the output slots (1 on it, 0 elsewhere; all 0 for a task without a baseline spec). */
  private static anchorOf(brief: TaskBrief, heads: Head[], layout: ReturnType<typeof headLayout>): Float32Array {
    const a = new Float32Array(MAX_HEADS * MAX_OPTIONS);
    const choice = baselineChoice(brief, heads);
    if (choice) layout.forEach(({ slot, optionSlots }, h) => (a[slot * MAX_OPTIONS + optionSlots[choice[h]]] = 1));
    return a;
  }

  /** Mask of a brief's real options in the output slots (1 real, 0 padding or absent). */
  private static optionMask(layout: ReturnType<typeof headLayout>): Float32Array {
    const m = new Float32Array(MAX_HEADS * MAX_OPTIONS);
    for (const { slot, optionSlots } of layout) for (const o of optionSlots) m[slot * MAX_OPTIONS + o] = 1;
    return m;
  }

  /** Per-head probabilities for a brief (rows = heads, padded options have probability 0). */
  async probabilities(brief: TaskBrief): Promise<number[][]> {
    await initTf();
    const heads = buildHeads(brief);
    const layout = headLayout(heads);
    if (layout.some((l) => l.optionSlots.some((o) => o >= MAX_OPTIONS))) throw new Error(`design space: a head has more than ${MAX_OPTIONS} options`);
    const mask = Controller.optionMask(layout);
    const anchor = Controller.anchorOf(brief, heads, layout);
    const probs = tf.tidy(() => {
      const l = this.logits(tf.tensor2d(briefFeatures(brief), [1, FEATURE_DIM]), tf.tensor3d(anchor, [1, MAX_HEADS, MAX_OPTIONS]));
      const masked = tf.add(l, tf.mul(tf.sub(1, tf.tensor3d(mask, [1, MAX_HEADS, MAX_OPTIONS])), MASK_LOGIT));
      return tf.softmax(masked);
    });
    const data = probs.dataSync();
    probs.dispose();
    return layout.map(({ slot, optionSlots }) => optionSlots.map((o) => data[slot * MAX_OPTIONS + o]));
  }

  /** Samples one choice per head and decodes it into a spec (`proposalFrom`). */
  async propose(brief: TaskBrief, ctx: ProposalContext): Promise<Proposal> {
    return proposalFrom(brief, await this.probabilities(brief), ctx);
  }

  /** One group-relative policy-gradient step over every group. */
  async update(groups: RewardGroup[]): Promise<UpdateStats> {
    await initTf();
    const rows: { feat: Float32Array; sel: Float32Array; mask: Float32Array; anchor: Float32Array; adv: number; oldLogp: number; family: string }[] = [];
    let rewardSum = 0;
    let n = 0;
    for (const g of groups) {
      const advantages = groupAdvantages(g.items.map((i) => i.reward));
      const heads = buildHeads(g.brief);
      const feat = briefFeatures(g.brief);
      const layout = headLayout(heads);
      const mask = Controller.optionMask(layout);
      const anchor = Controller.anchorOf(g.brief, heads, layout);
      for (const [k, item] of g.items.entries()) {
        rewardSum += item.reward;
        n += 1;
        const t = item.trace as ControllerTrace;
        const active = activeHeads(heads, t.choice);
        const sel = new Float32Array(MAX_HEADS * MAX_OPTIONS);
        t.choice.forEach((c, h) => {
          if (active[h]) sel[layout[h].slot * MAX_OPTIONS + layout[h].optionSlots[c]] = 1;
        });
        rows.push({ feat, sel, mask, anchor, adv: advantages[k], oldLogp: t.logProb, family: g.brief.family });
      }
    }
    if (!rows.length) return {};
    const B = rows.length;
    const weights = this.familyWeights(groups, rows);
    const stack = (k: 'feat' | 'sel' | 'mask' | 'anchor', width: number): Float32Array => {
      const out = new Float32Array(B * width);
      rows.forEach((r, i) => out.set(r[k], i * width));
      return out;
    };
    const feats = tf.tensor2d(stack('feat', FEATURE_DIM), [B, FEATURE_DIM]);
    const sel = tf.tensor3d(stack('sel', MAX_HEADS * MAX_OPTIONS), [B, MAX_HEADS, MAX_OPTIONS]);
    const mask = tf.tensor3d(stack('mask', MAX_HEADS * MAX_OPTIONS), [B, MAX_HEADS, MAX_OPTIONS]);
    const anchor = tf.tensor3d(stack('anchor', MAX_HEADS * MAX_OPTIONS), [B, MAX_HEADS, MAX_OPTIONS]);
    const adv = tf.tensor1d(rows.map((r, i) => r.adv * weights[i]));
    const oldLogp = tf.tensor1d(rows.map((r) => r.oldLogp));
    const masked = (): tf.Tensor3D => tf.add(this.logits(feats, anchor), tf.mul(tf.sub(1, mask), MASK_LOGIT)) as tf.Tensor3D;
    // The sampling policy's per-head distributions, frozen for the KL penalty.
    const oldLogpAll = tf.tidy(() => tf.logSoftmax(masked()));
    const stats = { loss: 0, entropy: 0, kl: 0, clipFrac: 0 };
    const { epochs, clip, klCoef, entropyCoef } = this.opts;
    for (let e = 0; e < epochs; e++) {
      const lossT = this.opt.minimize(
        () =>
          tf.tidy(() => {
            const logpAll = tf.logSoftmax(masked());
            const logp = tf.sum(tf.mul(logpAll, sel), [1, 2]);
            const ratio = tf.exp(tf.sub(logp, oldLogp));
            const surrogate = tf.minimum(tf.mul(ratio, adv), tf.mul(tf.clipByValue(ratio, 1 - clip, 1 + clip), adv));
            const probs = tf.exp(logpAll);
            const ent = tf.mean(tf.neg(tf.sum(tf.mul(tf.mul(probs, logpAll), mask), [1, 2])));
            const kl = tf.mean(tf.sum(tf.mul(tf.mul(tf.exp(oldLogpAll), tf.sub(oldLogpAll, logpAll)), mask), [1, 2]));
            const loss = tf.add(tf.sub(tf.neg(tf.mean(surrogate)), tf.mul(entropyCoef, ent)), tf.mul(klCoef, kl)) as tf.Scalar;
            const clipped = tf.mean(tf.cast(tf.greater(tf.abs(tf.sub(ratio, 1)), clip), 'float32'));
            [stats.entropy, stats.kl, stats.clipFrac] = [ent, kl, clipped].map((t) => t.dataSync()[0]);
            return loss;
          }),
        true,
        this.vars,
      );
      stats.loss = lossT ? lossT.dataSync()[0] : NaN;
      lossT?.dispose();
      if (!Number.isFinite(stats.loss)) {
        tf.dispose([feats, sel, mask, anchor, adv, oldLogp, oldLogpAll]);
        throw new Error(`controller update: the GRPO loss became ${stats.loss} in epoch ${e + 1}`);
      }
    }
    tf.dispose([feats, sel, mask, anchor, adv, oldLogp, oldLogpAll]);
    return {
      'agent/loss': stats.loss,
      'agent/entropy': stats.entropy,
      'agent/kl': stats.kl,
      'agent/clipfrac': stats.clipFrac,
      'agent/mean_reward': rewardSum / n,
      'agent/family_weight_max': Math.max(...weights),
    };
  }

  /**
   * Online group DRO over the update's task families: each family's log-weight falls by `robust` ×
   * its mean reward in this update (then centred over the families seen so far and bounded by
   * ±MAX_FAMILY_LOG_WEIGHT); each row then weighs its family's weight, scaled so that the rows'
   * weights average 1 (the step size stays the same).
   */
  private familyWeights(groups: RewardGroup[], rows: { family: string }[]): number[] {
    const rewards = new Map<string, number[]>();
    for (const g of groups) rewards.set(g.brief.family, [...(rewards.get(g.brief.family) ?? []), ...g.items.map((i) => i.reward)]);
    const logW = { ...this.familyLogWeights };
    for (const [family, r] of rewards) logW[family] = (logW[family] ?? 0) - (this.opts.robust * r.reduce((a, b) => a + b, 0)) / r.length;
    // Only the families' relative weights matter: centred over the families seen so far, then bounded.
    const centre = Object.values(logW).reduce((a, b) => a + b, 0) / Object.keys(logW).length;
    for (const family of Object.keys(logW)) logW[family] = Math.max(-MAX_FAMILY_LOG_WEIGHT, Math.min(MAX_FAMILY_LOG_WEIGHT, logW[family] - centre));
    this.familyLogWeights = logW;
    const raw = rows.map((r) => Math.exp(this.familyLogWeights[r.family] ?? 0));
    const mean = raw.reduce((a, b) => a + b, 0) / raw.length;
    return raw.map((w) => w / mean);
  }

  /** Weights and Adam state (through the optimizer's own save format) as plain arrays, with the layout's version. */
  async state(): Promise<unknown> {
    const adam = await this.opt.getWeights();
    return {
      version: CHECKPOINT_VERSION,
      options: this.opts,
      familyLogWeights: this.familyLogWeights,
      weights: this.vars.map((v) => Array.from(v.dataSync())),
      adam: adam.map((w) => ({ name: w.name, shape: w.tensor.shape, values: Array.from(w.tensor.dataSync()) })),
    };
  }

  /** Restores weights and Adam state from `state()`, or from a checkpoint of an older layout (`migrateCheckpoint`). */
  async load(state: unknown): Promise<void> {
    await initTf();
    const c = migrateCheckpoint(state, this.opts.hidden, this.opts.anchor);
    const fits = c.weights.length === this.vars.length && c.weights.every((w, i) => Array.isArray(w) && w.length === this.vars[i].size);
    if (!fits) {
      throw new Error(
        'controller checkpoint has the wrong shape (saved by a controller with other features or width; ' +
          `this one reads ${FEATURE_DIM} features, hidden ${this.opts.hidden})`,
      );
    }
    c.weights.forEach((w, i) => this.vars[i].assign(tf.tensor(w, this.vars[i].shape)));
    // A checkpoint without family weights weighs every family alike.
    const saved = c.familyLogWeights && typeof c.familyLogWeights === 'object' ? Object.entries(c.familyLogWeights) : [];
    this.familyLogWeights = Object.fromEntries(
      saved.filter(([, w]) => Number.isFinite(w)).map(([f, w]) => [f, Math.max(-MAX_FAMILY_LOG_WEIGHT, Math.min(MAX_FAMILY_LOG_WEIGHT, w))]),
    );
    if (c.adam?.length) {
      // Adam restores its moments by position (the order of this.vars), so saved names are kept as they are.
      await this.opt.setWeights(c.adam.map((w) => ({ name: w.name, tensor: tf.tensor(w.values, w.shape) })));
    }
  }
}

/** The checkpoint layout `Controller.state()` writes. */
export const CHECKPOINT_VERSION = 4;

/** A controller checkpoint as `Controller.state()` writes it. */
export interface Checkpoint {
  version: number;
  weights: number[][];
  /** Adam's state; left out where it no longer matches the weights. */
  adam?: { name: string; shape: number[]; values: number[] }[];
  familyLogWeights?: Record<string, number>;
}

/** A checkpoint's layout one version on, each step with why it exists. */
const MIGRATIONS: Record<number, (c: Checkpoint, hidden: number) => Checkpoint> = {
  // 1 → 2: the anchor was added, two arrays after the policy's four. A checkpoint from before it loads with
  // the anchor off on every slot, the policy it saved; Adam's moments were for other variables.
  1: (c, hidden) => {
    const slots = Math.floor((c.weights[3]?.length ?? 0) / MAX_OPTIONS);
    return { ...c, version: 2, weights: [...c.weights, Array(hidden * slots).fill(0), Array(slots).fill(0)], adam: undefined };
  },
  // 2 → 3: the checkpoint states its version; the arrays are the same.
  2: (c) => ({ ...c, version: 3 }),
  // 3 → 4: a real table's column facts became features (TABLE_SLOTS). They were always 0 before, so their
  // first-layer rows never trained: zeroed, an older checkpoint reads them as it did (its policy unchanged on every task).
  3: (c, hidden) => {
    const w1 = [...(c.weights[0] ?? [])];
    for (const slot of TABLE_SLOTS) w1.fill(0, slot * hidden, (slot + 1) * hidden);
    return { ...c, version: 4, weights: [w1, ...c.weights.slice(1)] };
  },
};

/** The version of a checkpoint written before checkpoints stated theirs: four arrays are from before the anchor. */
function unstatedVersion(weights: unknown[]): number {
  return weights.length === ANCHOR_VARS ? 1 : 2;
}

/**
 * A saved checkpoint in this code's layout: its head slots fitted first (`padHeadSlots`: heads are
 * only ever added, at any version), then each migration from its version to `CHECKPOINT_VERSION`.
 * Weights that fit no layout pass through as they are, for the caller's shape check to refuse.
 */
export function migrateCheckpoint(state: unknown, hidden: number, anchor: number): Checkpoint {
  const s = state as Partial<Checkpoint> | null;
  const weights = Array.isArray(s?.weights) ? s.weights : [];
  const version = s?.version ?? unstatedVersion(weights);
  if (!Number.isInteger(version) || version < 1 || version > CHECKPOINT_VERSION) {
    throw new Error(`controller checkpoint of version ${JSON.stringify(version)}: this code reads versions 1 to ${CHECKPOINT_VERSION}`);
  }
  const padded = weights.length >= ANCHOR_VARS ? padHeadSlots(weights, hidden, anchor) : null;
  // Adam's moments are shaped like the saved weights: a checkpoint given new slots starts them afresh.
  let c: Checkpoint = { ...(s as Checkpoint), version, weights: padded ?? weights, ...(padded ? { adam: undefined } : {}) };
  for (let v = version; v < CHECKPOINT_VERSION; v++) c = MIGRATIONS[v](c, hidden);
  return c;
}

/**
 * The weights of a checkpoint saved when `HEAD_NAMES` had fewer entries (a new head takes the next
 * slot), widened to this code's slots: the new heads' logits start at 0 (uniform before the
 * anchor) and their anchor strength at `anchor`, as a new controller's. Null when the checkpoint
 * already has every slot or its shapes are not an older layout of this controller's.
 */
export function padHeadSlots(weights: number[][], hidden: number, anchor: number): number[][] | null {
  const [w1, b1, w2, b2, wa, ba] = weights;
  const saved = Array.isArray(b2) ? b2.length / MAX_OPTIONS : 0;
  if (!Number.isInteger(saved) || saved <= 0 || saved >= MAX_HEADS || !Array.isArray(w2) || w2.length !== hidden * saved * MAX_OPTIONS) return null;
  const widen = (rows: number[], from: number, to: number, fill: number): number[] =>
    Array.from({ length: rows.length / from }, (_, r) => [...rows.slice(r * from, (r + 1) * from), ...Array(to - from).fill(fill)]).flat();
  const out = [w1, b1, widen(w2, saved * MAX_OPTIONS, MAX_HEADS * MAX_OPTIONS, 0), widen(b2, saved * MAX_OPTIONS, MAX_HEADS * MAX_OPTIONS, 0)];
  if (weights.length === ANCHOR_VARS) return out;
  if (!Array.isArray(wa) || !Array.isArray(ba) || wa.length !== hidden * saved || ba.length !== saved) return null;
  return [...out, widen(wa, saved, MAX_HEADS, 0), widen(ba, saved, MAX_HEADS, anchor)];
}

/**
 * The option each head takes in the task's baseline spec (its nearest spec in the design space,
 * `nearestChoice`), or null for a brief of no known task. The baseline is part of the public task,
 * as the brief is.
 */
export function baselineChoice(brief: TaskBrief, heads: Head[] = buildHeads(brief)): number[] | null {
  let baseline: unknown;
  try {
    baseline = getPublicTask(brief.id).baseline;
  } catch {
    return null;
  }
  return nearestChoice(brief, heads, baseline);
}

/**
 * A proposal from per-head probabilities: one choice per head sampled from them, or with
 * `ctx.greedy` the most probable valid one (`validMode`), written as a spec with a seed from
 * `ctx.rng`; its trace holds the choice and its log-probability over the heads it uses.
 */
export function proposalFrom(brief: TaskBrief, probs: number[][], ctx: ProposalContext): Proposal {
  const heads = buildHeads(brief);
  const sampled = ctx.greedy ? null : probs.map((p) => ctx.rng.categorical(p));
  const write = specWriter(brief, heads, ctx.rng.int(1_000_000));
  const choice = sampled ?? validMode(brief, probs, write);
  const active = activeHeads(heads, choice);
  const logProb = choice.reduce((a, c, i) => a + (active[i] ? Math.log(probs[i][c]) : 0), 0);
  const trace: ControllerTrace = { choice, logProb };
  return { spec: write(choice), trace };
}

/**
 * The policy's mode among valid specs: the option of highest probability on every head, or, when
 * that spec is invalid (a supervised mixture whose every weight is 0), the valid spec one head's
 * change reaches at the least loss of log-probability. A single best guess is never a job that
 * cannot run.
 */
export function validMode(brief: TaskBrief, probs: number[][], write: (choice: number[]) => JobSpecInput): number[] {
  const mode = probs.map((p) => p.indexOf(Math.max(...p)));
  const valid = (c: number[]): boolean => validateSpec(write(c), brief).ok;
  if (valid(mode)) return mode;
  const changes = probs.flatMap((p, h) => p.map((q, o) => ({ h, o, loss: Math.log(p[mode[h]]) - Math.log(q) })).filter((x) => x.o !== mode[h]));
  changes.sort((a, b) => a.loss - b.loss || a.h - b.h || a.o - b.o);
  for (const { h, o } of changes) {
    const c = [...mode];
    c[h] = o;
    if (valid(c)) return c;
  }
  return mode;
}

/**
 * How the controller writes a choice: relative to the task's baseline spec (`overlayOnBaseline`:
 * the heads that keep the baseline's option keep its exact values), or `decode` alone for a brief
 * of no known task. A written spec the checks refuse where `decode`'s would pass falls back to `decode`'s.
 */
export function specWriter(brief: TaskBrief, heads: Head[], seed: number): (choice: number[]) => JobSpecInput {
  const base = baselineChoice(brief, heads);
  if (!base) return (choice) => decode(brief, heads, choice, seed);
  const baseline = getPublicTask(brief.id).baseline;
  const anchor = decode(brief, heads, base, seed);
  return (choice) => {
    const plain = decode(brief, heads, choice, seed);
    const written = overlayOnBaseline(baseline, plain, anchor);
    return validateSpec(written, brief).ok || !validateSpec(plain, brief).ok ? written : plain;
  };
}
