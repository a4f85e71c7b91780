/**
 * The harness half of a supervised task: the secret split of the clean data into the
 * training pool and the hidden test set, the sources built from the pool, and the scorer;
 * and what the evaluation of each built-in supervised task knows (`SUPERVISED_EVALUATIONS`).
 * Jobs receive only the sources their spec names; the test set never leaves this module
 * except through a score.
 */
import { split } from '../../inner/data/index.js';
import type { Dataset } from '../../spec/data.js';
import type { SupervisedData } from '../../spec/data.js';
import { ModelRunner, type ModelFile } from '../../inner/model.js';
import { mixSeed } from '../../util/rng.js';
import type { Anchors, Evaluation, HiddenEvaluation } from '../hidden-types.js';
import { evalSecret, heldOutSeeds } from '../secret.js';
import { bootstrapStderr } from '../bootstrap.js';
import { runEvaluationCommand } from './evaluate-command.js';
import type { SupervisedMetricName, SupervisedTaskDef } from './define.js';

/** What the evaluation of a supervised task knows besides its definition. */
export interface SupervisedEvaluationSettings {
  /** Normalisation anchors in raw units (higher is better; errors negated) that replace the computed ones. */
  anchors?: { random?: number; reference?: number; how?: string };
  /**
   * An outside program scores artifacts instead of the built-in scorer:
   * run as `argv... JOB_DIR HELD_OUT_JSON`, it prints `{"raw": number}` on stdout.
   */
  evaluation?: { kind: 'command'; argv: string[] };
}

const BUILT_IN: SupervisedEvaluationSettings = {};

/** What the evaluation of each built-in supervised task (`tasks.ts`, `examples.ts`) knows, by task id. */
export const SUPERVISED_EVALUATIONS: Readonly<Record<string, SupervisedEvaluationSettings>> = {
  'penguins-species': BUILT_IN,
  'cars-mpg': BUILT_IN,
  'seattle-weather': BUILT_IN,
  'iris-species': BUILT_IN,
  'two-spirals': BUILT_IN,
  'two-moons': BUILT_IN,
  // The softmax regression of examples/softmax-trainer.mjs, scored by its own evaluation command.
  'iris-command': { ...BUILT_IN, evaluation: { kind: 'command', argv: ['node', 'examples/softmax-eval.mjs'] } },
};

/** A supervised task's hidden evaluation plus the data its jobs may receive. */
export interface SupervisedEvaluation extends HiddenEvaluation {
  /** The rows of the named sources, built from the training pool. */
  jobData(sourceIds: string[]): SupervisedData;
  /** Harness and tests only: the training pool and the hidden test set. */
  heldOut(): { pool: Dataset; test: Dataset };
  /** Harness and tests only: a built source as a dataset. */
  source(id: string): Dataset;
}

function taskHash(id: string): number {
  let h = 0;
  for (const ch of id) h = mixSeed(h, ch.codePointAt(0) ?? 0);
  return h;
}

/** Smallest probability log-loss takes the log of (a model certain of a wrong class costs -log 1e-15). */
const LOG_LOSS_FLOOR = 1e-15;

/**
 * Canonical metric of predictions against truth, higher is better (the errors RMSE, MAE and
 * log-loss are negated). `pred` holds class indices (classification) or values (regression);
 * log-loss reads `proba` instead, one row of class probabilities per example.
 */
export function metricValue(metric: SupervisedMetricName, pred: number[], truth: number[], classes = 0, proba?: number[][]): number {
  const n = truth.length;
  if (metric === 'accuracy') return pred.reduce((a, p, i) => a + (p === truth[i] ? 1 : 0), 0) / n;
  if (metric === 'rmse') return -Math.sqrt(pred.reduce((a, p, i) => a + (p - truth[i]) ** 2, 0) / n);
  if (metric === 'mae') return -pred.reduce((a, p, i) => a + Math.abs(p - truth[i]), 0) / n;
  if (metric === 'r2') {
    const m = truth.reduce((a, b) => a + b, 0) / n;
    const ssTot = truth.reduce((a, t) => a + (t - m) ** 2, 0);
    const ssRes = pred.reduce((a, p, i) => a + (p - truth[i]) ** 2, 0);
    return ssTot === 0 ? (ssRes === 0 ? 1 : 0) : 1 - ssRes / ssTot;
  }
  if (metric === 'log-loss') {
    if (!proba) throw new Error('log-loss needs the predicted class probabilities');
    return truth.reduce((a, t, i) => a + Math.log(Math.max(LOG_LOSS_FLOOR, proba[i][t] ?? 0)), 0) / n;
  }
  let f1 = 0;
  for (let c = 0; c < classes; c++) {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    pred.forEach((p, i) => {
      if (p === c && truth[i] === c) tp++;
      else if (p === c) fp++;
      else if (truth[i] === c) fn++;
    });
    f1 += tp === 0 ? 0 : (2 * tp) / (2 * tp + fp + fn);
  }
  return f1 / classes;
}

/**
 * The metric with its bootstrap standard error over the test rows (each resample recomputes
 * the metric on rows drawn with replacement, so it works for every metric alike).
 */
export function metricWithStderr(metric: SupervisedMetricName, pred: number[], truth: number[], classes = 0, proba?: number[][]): Evaluation {
  const raw = metricValue(metric, pred, truth, classes, proba);
  const stderr = bootstrapStderr(truth.length, (idx) => {
    const p = Array.from(idx, (i) => pred[i]);
    const t = Array.from(idx, (i) => truth[i]);
    return metricValue(metric, p, t, classes, proba ? Array.from(idx, (i) => proba[i]) : undefined);
  });
  return { raw, stderr };
}

/** The trivial predictor's raw score on the test set (fit on the pool) and how it predicts, in words. */
function trivialAnchor(metric: SupervisedMetricName, pool: Dataset, test: Dataset): { raw: number; how: string } {
  const k = test.classes?.length ?? 0;
  if (pool.kind === 'classification') {
    const counts = new Array<number>(pool.classes!.length).fill(0);
    for (const y of pool.y) counts[y]++;
    const majority = counts.indexOf(Math.max(...counts));
    const prior = counts.map((c) => c / pool.y.length);
    const raw = metricValue(
      metric,
      test.y.map(() => majority),
      test.y,
      k,
      test.y.map(() => prior),
    );
    const how = metric === 'log-loss' ? "the training pool's class frequencies as probabilities" : 'always the most frequent class of the training pool';
    return { raw, how };
  }
  if (metric === 'mae') {
    const sorted = [...pool.y].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    return {
      raw: metricValue(
        metric,
        test.y.map(() => median),
        test.y,
      ),
      how: 'always the median of the training pool',
    };
  }
  const m = pool.y.reduce((a, b) => a + b, 0) / pool.y.length;
  return {
    raw: metricValue(
      metric,
      test.y.map(() => m),
      test.y,
    ),
    how: 'always the mean of the training pool',
  };
}

/** The raw score of a perfect model: 1 for accuracy, F1 and R², 0 for the (negated) errors. */
function perfectScore(metric: SupervisedMetricName): number {
  return metric === 'accuracy' || metric === 'macro-f1' || metric === 'r2' ? 1 : 0;
}

/** Builds the evaluation and data access of a supervised task definition from what its evaluation knows. */
export function supervisedEvaluation(def: SupervisedTaskDef, settings: SupervisedEvaluationSettings): SupervisedEvaluation {
  // The split (and everything built from it) depends on the secret it was drawn under.
  let parts: { secret: string; pool: Dataset; test: Dataset } | null = null;
  const sources = new Map<string, Dataset>();
  let anchors: Anchors | null = null;
  const splitData = (): { pool: Dataset; test: Dataset } => {
    const secret = evalSecret();
    if (parts?.secret !== secret) {
      const r = split(def.load(), def.testFraction, heldOutSeeds(def.id, 1, secret)[0]);
      parts = { secret, pool: r.train, test: r.test };
      sources.clear();
      anchors = null;
    }
    return { pool: parts.pool, test: parts.test };
  };
  const source = (id: string): Dataset => {
    const { pool } = splitData(); // first, so a changed secret clears the built sources
    let d = sources.get(id);
    if (!d) {
      const i = def.sources.findIndex((s) => s.id === id);
      if (i < 0) throw new Error(`dataset.sources: "${id}" is not in the catalog of ${def.id}`);
      // One base seed for the catalog, so sources described as "the small checked sample" share it.
      d = def.sources[i].build(pool, mixSeed(taskHash(def.id), 0));
      sources.set(id, d);
    }
    return d;
  };
  const command = settings.evaluation;
  return {
    taskId: def.id,
    ...(command
      ? {
          scoreDir(dir: string, timeoutMs?: number): Evaluation {
            const { test } = splitData();
            return runEvaluationCommand(command.argv, dir, { features: test.features, x: test.x, y: test.y }, timeoutMs);
          },
        }
      : {}),
    score(trained) {
      if (command) throw new Error(`${def.id}: artifacts are scored by the evaluation command (scoreArtifact)`);
      const { test } = splitData();
      const runner = new ModelRunner(trained as ModelFile);
      const pred = runner.predict(test.x);
      const proba = def.metric === 'log-loss' ? runner.predictProba(test.x) : undefined;
      return metricWithStderr(def.metric, pred, test.y, test.classes?.length ?? 0, proba);
    },
    anchors() {
      const { pool, test } = splitData();
      if (!anchors) {
        const given = settings.anchors ?? {};
        const trivial = given.random === undefined ? trivialAnchor(def.metric, pool, test) : null;
        const random = given.random ?? trivial!.raw;
        const reference = given.reference ?? perfectScore(def.metric);
        anchors = {
          random,
          reference,
          how:
            given.how ??
            `trivial: ${trivial ? trivial.how : `${random} (given)`}; ` +
              `reference: ${given.reference === undefined ? `a perfect model (raw ${reference})` : `${reference} (given)`}`,
        };
      }
      return anchors;
    },
    heldOut: splitData,
    source,
    jobData(sourceIds) {
      const out: SupervisedData = { sources: {} };
      // Coded columns (categorical levels, missing cells) travel with the rows: the job's encoding reads them.
      const { columns } = splitData().pool;
      if (columns) out.columns = columns;
      for (const id of sourceIds) {
        const d = source(id);
        out.sources[id] = { x: d.x, y: d.y };
      }
      return out;
    },
  };
}
