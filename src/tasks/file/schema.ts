/**
 * The task file: one JSON document that describes a user's own task — its brief (title,
 * description, the variables and their meaning), its data (supervised) or environment
 * (control, from Gymnasium), the metric, the baseline, the normalisation anchors, the caps and
 * the split. One zod schema for both kinds; `rrl task schema` prints its JSON Schema.
 */
import { z } from 'zod';
import { MAX_GYMNASIUM_ID, gymnasiumIdProblem } from '../../inner/envs/gym-id.js';

/** Task ids: lowercase words joined by hyphens, like the built-in ones (`cars-mpg`). */
export const TASK_ID = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/** Metrics of supervised task files (higher-is-better forms are computed by the scorer). */
export const SUPERVISED_METRICS = ['accuracy', 'macro-f1', 'log-loss', 'rmse', 'mae', 'r2'] as const;
/** The metric of a supervised task file. */
export type SupervisedMetric = (typeof SUPERVISED_METRICS)[number];
/** Metrics that need a classification target. */
export const CLASSIFICATION_METRICS: readonly SupervisedMetric[] = ['accuracy', 'macro-f1', 'log-loss'];

const relPath = z.string().min(1).max(512).describe("a file path relative to the task file's folder; it must stay inside the task directory");
const format = z.enum(['csv', 'jsonl', 'parquet']).optional().describe('the file format (default: from the extension: .csv, .jsonl/.ndjson, .parquet)');

const brief = {
  $schema: z.string().optional().describe('where the JSON Schema of this file lives (ignored)'),
  id: z
    .string()
    .regex(TASK_ID, 'lowercase words joined by hyphens, e.g. "my-cars"')
    .max(64)
    .describe('the task id (lowercase words joined by hyphens); must not clash with a built-in task'),
  title: z.string().min(3).max(200).describe('one line saying what is learned'),
  description: z.string().min(10).max(4000).describe('what the task is, in words a practitioner would write; the agent reads it'),
  family: z.string().regex(TASK_ID).max(64).optional().describe('the task family (default: the id)'),
  variables: z
    .record(z.string().min(1).max(200), z.string().min(1).max(500))
    .default({})
    .describe('each variable (column, observation) and its meaning and unit, in words'),
  caps: z
    .object({
      maxExamples: z
        .number()
        .int()
        .min(100)
        .max(100_000_000)
        .optional()
        .describe('supervised: training examples a job may process, summed over epochs (default: 50 per training row, at least 20 000, at most 1 000 000)'),
      maxEnvSteps: z.number().int().min(100).max(100_000_000).optional().describe('control: environment steps a job may take (default 100 000)'),
      maxWallSeconds: z.number().int().min(1).max(86_400).default(120).describe("a job's wall-clock cap in seconds"),
    })
    .strict()
    .default({ maxWallSeconds: 120 })
    .describe('the budget caps the engine enforces on every job'),
  anchors: z
    .object({
      trivial: z
        .number()
        .optional()
        .describe("the raw metric that maps to 0 (default: computed, the trivial predictor's or random policy's score on the hidden split)"),
      reference: z.number().optional().describe('the raw metric that maps to 1 (default: a perfect model: accuracy/F1/R² 1, error 0)'),
      how: z.string().max(500).optional().describe('how the anchors were obtained, in words'),
    })
    .strict()
    .default({})
    .describe('the normalisation anchors of the score, in the metric’s own units (errors as positive numbers)'),
  experiments: z
    .enum(['train', 'held-out', 'none'])
    .default('held-out')
    .describe('which side of the transfer experiment the task joins (none: in no experiment)'),
};

/** An extra source of the catalogue: another file of the user's (e.g. a noisy crowd-labelled set). */
const SourceSchema = z
  .object({
    id: z.string().regex(TASK_ID).max(64).describe('the source id a job spec names in dataset.sources'),
    file: relPath,
    format,
    description: z.string().min(3).max(1000).describe('what this source is, as a data card would say (the agent reads it)'),
  })
  .strict();

/** A supervised task file. */
export const SupervisedTaskFileSchema = z
  .object({
    ...brief,
    kind: z.literal('supervised'),
    data: z
      .object({
        file: relPath,
        format,
        target: z.string().min(1).max(200).describe('the column to predict'),
        type: z.enum(['classification', 'regression']).describe('classification (a class per row) or regression (a number per row)'),
        features: z
          .array(z.string().min(1).max(200))
          .min(1)
          .max(1000)
          .describe('the columns the model reads: numbers, or categories (a column with text cells is read as categorical)'),
        categorical: z
          .array(z.string().min(1).max(200))
          .max(1000)
          .default([])
          .describe('features to read as categorical although their cells are numbers (codes such as 1, 2, 3 for three kinds)'),
        id: z.string().regex(TASK_ID).max(64).default('main').describe('the source id of the training part of this file'),
        description: z.string().max(1000).optional().describe('what the data is, for the catalogue (default: a sentence from the file name)'),
        sources: z
          .array(SourceSchema)
          .max(5)
          .default([])
          .describe(
            'up to 5 extra sources of your own with the same columns (rows that repeat a hidden test row are dropped); an id of the standard catalogue ' +
              '(clean-small, noisy-large, shifted, imbalanced, duplicated, augmented) shares what the embedded controller learned about such sources',
          ),
        catalog: z
          .boolean()
          .default(true)
          .describe(
            'add the standard catalogue, made from the training part of this file by the harness (clean-small, noisy-large, shifted, imbalanced, ' +
              'duplicated, augmented; an id one of your sources uses is left out, and so many others that the sources in all are at most six, ' +
              'clean-small first)',
          ),
        missing: z
          .enum(['keep', 'drop-row', 'error'])
          .default('keep')
          .describe(
            "a row with an empty feature cell: kept (each job decides how to fill it: the spec's dataset.columns), dropped (counted in " +
              '`rrl task validate`), or an error; a row with an empty target is always dropped',
          ),
      })
      .strict()
      .describe('the data: the hidden test set is split from this file by the harness, with its evaluation secret'),
    metric: z.enum(SUPERVISED_METRICS).describe('the canonical metric of the hidden evaluation'),
    split: z
      .object({ testFraction: z.number().min(0.05).max(0.5).default(0.3).describe("share of the data file's rows held out for the hidden test set") })
      .strict()
      .default({ testFraction: 0.3 }),
    baseline: z
      .object({
        source: z.string().regex(TASK_ID).optional().describe('the source the baseline trains on (default: data.id)'),
        objective: z.enum(['cross-entropy', 'focal', 'mse', 'huber']).optional().describe('default: cross-entropy (classification), mse (regression)'),
        hidden: z.array(z.number().int().min(1).max(1024)).max(8).optional().describe('hidden layer widths (default [64, 64])'),
        epochs: z.number().int().min(1).max(10_000).optional().describe('default 50'),
        learningRate: z.number().positive().max(1).optional().describe('default 0.001'),
        batchSize: z.number().int().min(1).max(4096).optional().describe('default 32'),
        examples: z.number().int().min(1).max(100_000_000).optional().describe('default: half the example cap'),
      })
      .strict()
      .default({})
      .describe('the baseline job (a plain MLP on one source), the reference the agent is rewarded against'),
  })
  .strict();

/** A control task file: an environment registered with Gymnasium. */
export const ControlTaskFileSchema = z
  .object({
    ...brief,
    kind: z.literal('control'),
    environment: z
      .object({
        gymnasium: z
          .string()
          .max(MAX_GYMNASIUM_ID)
          .describe(
            'the registered Gymnasium id, e.g. CartPole-v1 or ALE/Pong-v5; "package.module:Env-v0" (Gymnasium imports the module first) only with allowImport',
          ),
        allowImport: z
          .boolean()
          .default(false)
          .describe('let "gymnasium" name a Python module to import ("package.module:Env-v0"): validating or loading the file then runs that module\'s code'),
        kwargs: z
          .record(z.string(), z.union([z.number(), z.boolean(), z.string()]))
          .default({})
          .describe('keyword arguments of gymnasium.make'),
        maxEpisodeSteps: z.number().int().min(1).max(100_000).optional().describe("episode time limit (default: the environment's)"),
      })
      .strict()
      .superRefine((env, ctx) => {
        // A gymnasium id or allowImport of the wrong type or length: their own checks say so.
        if (typeof env.gymnasium !== 'string' || env.gymnasium.length > MAX_GYMNASIUM_ID || typeof env.allowImport !== 'boolean') return;
        const problem = gymnasiumIdProblem(env.gymnasium, env.allowImport, 'environment.allowImport');
        if (problem) ctx.addIssue({ code: 'custom', path: ['gymnasium'], message: problem });
      }),
    metric: z.literal('mean-return').default('mean-return').describe('mean undiscounted return over the hidden episodes'),
    split: z
      .object({ episodes: z.number().int().min(1).max(1000).default(20).describe('hidden evaluation episodes (seeds drawn from the evaluation secret)') })
      .strict()
      .default({ episodes: 20 }),
    baseline: z
      .object({
        algorithm: z.enum(['ppo', 'dqn', 'reinforce', 'ars']).default('ppo'),
        envSteps: z.number().int().min(100).max(100_000_000).optional().describe('default: half the env-step cap'),
      })
      .strict()
      .default({ algorithm: 'ppo' }),
  })
  .strict();

/** The task file schema: a supervised or a control task. */
export const TaskFileSchema = z.discriminatedUnion('kind', [SupervisedTaskFileSchema, ControlTaskFileSchema]);

/** A parsed supervised task file. */
export type SupervisedTaskFile = z.infer<typeof SupervisedTaskFileSchema>;
/** A parsed control task file. */
export type ControlTaskFile = z.infer<typeof ControlTaskFileSchema>;
/** A parsed task file. */
export type TaskFile = z.infer<typeof TaskFileSchema>;

/** The JSON Schema of task files (what `rrl task schema` prints). */
export function taskFileJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(TaskFileSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
}

/**
 * Parses a task file's text. JSON only: no YAML parser is installed; this one function is what a
 * YAML reader would replace.
 */
export function parseTaskText(text: string): unknown {
  return JSON.parse(text);
}

/** One line per problem of a zod error, each naming the field. */
export function schemaProblems(error: z.ZodError): string[] {
  return error.issues.map((i) => {
    const where = i.path.length
      ? i.path
          .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
          .join('.')
          .replace(/\.\[/g, '[')
      : '(top level)';
    return `${where}: ${i.message}`;
  });
}
