import { z } from 'zod';

/**
 * The job spec: the trainer agent's whole output, one JSON document.
 * Every field carries a description and every number a bound; the same schema is
 * exported as JSON Schema for LLM structured output and printed by `rrl spec --json-schema`.
 */

const paramSetting = z
  .union(
    [
      z.number().min(-1e6).max(1e6).describe('a fixed value for every episode'),
      z
        .tuple([z.number().min(-1e6).max(1e6), z.number().min(-1e6).max(1e6)])
        .describe('[low, high]: drawn uniformly at the start of every episode (domain randomisation)'),
    ],
    { error: 'expected a number or a [low, high] pair of numbers' },
  )
  .describe('a physical parameter: a fixed value or a [low, high] range');

/** Most physical parameters one spec may set. */
export const MAX_PARAMS = 16;

/** Names that would reach an object's prototype; never parameter names. */
const RESERVED_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

const paramName = z
  .string()
  .max(64)
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'a parameter name is a letter or _ followed by letters, digits or _' })
  .refine((k) => !RESERVED_NAMES.has(k), { error: 'this name is reserved (it names an object prototype)' });

/** Observation/reward wrappers a job may ask for. */
export const WRAPPERS = ['normalize-observation'] as const;

export const EnvironmentSection = z
  .strictObject({
    params: z
      .record(paramName, paramSetting)
      .refine((o) => Object.keys(o).length <= MAX_PARAMS, { error: `at most ${MAX_PARAMS} parameters` })
      .meta({ maxProperties: MAX_PARAMS })
      .default({})
      .describe("physical parameters of the training environment by name, within the ranges the task's brief declares; unset parameters keep their defaults"),
    wrappers: z
      .array(z.enum(WRAPPERS))
      .max(4)
      .default([])
      .describe('normalize-observation: running mean/variance normalisation of observations, frozen into the saved policy'),
    numEnvs: z.number().int().min(1).max(64).default(8).describe('number of environment copies stepped together (control tasks)'),
    standardize: z.boolean().default(true).describe('supervised tasks: standardise every feature with the training set mean and std'),
    inputNoise: z.number().min(0).max(2).default(0).describe('supervised tasks: std of Gaussian noise added to standardised features of each training batch'),
    mixup: z.number().min(0).max(1).default(0).describe('supervised tasks: mixup alpha (0 disables); mixes pairs of examples and their labels'),
  })
  .describe('control: physics, wrappers, vectorisation; supervised: preprocessing and augmentation');

/** Training objectives of supervised jobs. */
export const OBJECTIVES = ['cross-entropy', 'focal', 'mse', 'huber'] as const;

export const RewardSection = z
  .strictObject({
    expression: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .describe(
        "control tasks (required there): training reward per step, a math expression over the brief's variables (observation names, r = " +
          'environment reward, t = step in episode, done = 1 on the terminal step); e.g. r + 0.1 * (1 - abs(x) / 2.4)',
      ),
    objective: z
      .enum(OBJECTIVES)
      .optional()
      .describe('supervised tasks (required there): the training loss; cross-entropy or focal for classification, mse or huber for regression'),
    labelSmoothing: z.number().min(0).max(0.5).default(0).describe('supervised classification: label smoothing epsilon'),
    focalGamma: z.number().min(0).max(5).default(2).describe('supervised classification with focal loss: focusing parameter gamma'),
    huberDelta: z.number().min(0.01).max(10).default(1).describe('supervised regression with huber loss: delta, in standardised target units'),
    weight: z
      .string()
      .min(1)
      .max(500)
      .nullable()
      .default(null)
      .describe(
        "supervised tasks: optional per-example loss weight, an expression over the brief's feature names and `label`; null weighs all examples equally",
      ),
  })
  .describe('what the job optimises: a per-step reward (control) or a loss (supervised); the hidden evaluation always uses the canonical metric');

/** The column decisions a spec starts from when it states none: what a practitioner would pick first. */
export const DEFAULT_COLUMN_DECISIONS = { categorical: 'one-hot', maxLevels: 16, missing: 'median', indicator: true } as const;

/** How a supervised job turns a table's categorical columns and missing cells into the network's inputs. */
export const ColumnDecisionsSection = z
  .strictObject({
    categorical: z
      .enum(['one-hot', 'frequency', 'target'])
      .default(DEFAULT_COLUMN_DECISIONS.categorical)
      .describe(
        "a categorical column's encoding: one-hot (a 0/1 input per level, the maxLevels − 1 most frequent and one for the rest), frequency " +
          "(the level's share of the training rows) or target (the level's smoothed mean target per class, fitted out of fold)",
      ),
    maxLevels: z.number().int().min(2).max(64).default(DEFAULT_COLUMN_DECISIONS.maxLevels).describe('one-hot: the most inputs one categorical column gives'),
    missing: z
      .enum(['drop-row', 'mean', 'median', 'constant'])
      .default(DEFAULT_COLUMN_DECISIONS.missing)
      .describe(
        'a missing cell: its training row dropped (at scoring the training mean fills it), or filled with the training mean, median or 0 ' +
          '(a categorical cell is a level of its own unless rows are dropped)',
      ),
    indicator: z
      .boolean()
      .default(DEFAULT_COLUMN_DECISIONS.indicator)
      .describe('a column with missing training cells gets a 0/1 "was missing" input (not with drop-row)'),
  })
  .describe('supervised tasks whose table has categorical columns or missing cells: how they become inputs (no effect on a numeric, complete table)');

export const DatasetSection = z
  .strictObject({
    demonstrations: z
      .string()
      .max(64)
      .nullable()
      .default(null)
      .describe("control tasks: id of a demonstration set from the task's catalog for a behaviour-cloning warm start, or null"),
    bcEpochs: z.number().int().min(1).max(200).default(20).describe('control tasks: behaviour-cloning epochs over the demonstrations before RL'),
    sources: z
      .array(
        z.strictObject({
          id: z.string().max(64).describe("id of a source from the task's catalog"),
          weight: z
            .number()
            .min(0)
            .max(1)
            .describe(
              'mixture weight: with dataset.size set, the share of the drawn examples (normalised over the chosen sources); with size null, a ' +
                'source of weight above 0 is used whole',
            ),
        }),
      )
      .max(8)
      .default([])
      .describe('supervised tasks: the sources to train on and their mixture weights'),
    size: z
      .number()
      .int()
      .min(10)
      .max(100_000)
      .nullable()
      .default(null)
      .describe(
        'supervised tasks: examples drawn from the mixture (with replacement when a source is smaller); null uses every example of the chosen sources once',
      ),
    validationFraction: z
      .number()
      .min(0)
      .max(0.5)
      .default(0.1)
      .describe('supervised tasks: share of the drawn examples held back for validation (early stopping, curves)'),
    columns: ColumnDecisionsSection.prefault({}),
  })
  .describe('data the job trains on besides its own experience');

export const ModelSection = z
  .strictObject({
    hidden: z.array(z.number().int().min(1).max(512)).max(4).describe('hidden layer widths of the policy (and value) network; [] is a linear policy'),
    activation: z.enum(['tanh', 'relu']).describe('activation of the hidden layers'),
    dropout: z.number().min(0).max(0.8).default(0).describe('supervised tasks: dropout rate after each hidden layer'),
  })
  .describe('the model architecture');

export const PpoParams = z
  .strictObject({
    name: z.literal('ppo').describe('proximal policy optimisation (clipped objective, GAE, minibatch epochs)'),
    learningRate: z.number().min(1e-6).max(0.1).describe('Adam learning rate'),
    annealLr: z.boolean().default(true).describe('anneal the learning rate linearly to 0 over the budget'),
    gamma: z.number().min(0.8).max(0.9999).describe('discount factor'),
    gaeLambda: z.number().min(0.5).max(1).describe('GAE lambda'),
    clip: z.number().min(0.01).max(1).describe('PPO ratio clip epsilon'),
    epochs: z.number().int().min(1).max(20).describe('optimisation epochs per rollout'),
    minibatches: z.number().int().min(1).max(64).describe('minibatches per epoch'),
    rolloutSteps: z.number().int().min(8).max(4096).describe('steps per environment per rollout'),
    entropyCoef: z.number().min(0).max(0.5).describe('entropy bonus coefficient'),
    valueCoef: z.number().min(0).max(5).default(0.5).describe('value loss coefficient'),
    maxGradNorm: z.number().min(0.01).max(100).default(0.5).describe('global gradient-norm clip'),
    normalizeAdvantages: z.boolean().default(true).describe('normalise advantages per minibatch'),
    initLogStd: z.number().min(-5).max(2).default(0).describe('continuous actions: initial log standard deviation of the Gaussian policy'),
  })
  .describe('PPO hyperparameters (discrete actions: categorical policy; continuous: Gaussian policy with state-independent log std)');

export const ArsParams = z
  .strictObject({
    name: z.literal('ars').describe('augmented random search (Mania et al. 2018, V2-t): gradient-free, cheap on small control tasks'),
    stepSize: z.number().min(1e-4).max(1).describe('step size alpha'),
    directions: z.number().int().min(1).max(256).describe('random directions per iteration (N)'),
    topDirections: z.number().int().min(1).max(256).describe('best directions used in the update (b <= N)'),
    noise: z.number().min(1e-4).max(1).describe('exploration noise std nu'),
  })
  .describe('ARS hyperparameters');

export const DqnParams = z
  .strictObject({
    name: z.literal('dqn').describe('deep Q-network (Mnih et al. 2015): replay buffer, target network, epsilon-greedy schedule; discrete actions'),
    learningRate: z.number().min(1e-6).max(0.1).describe('Adam learning rate'),
    gamma: z.number().min(0.8).max(0.9999).describe('discount factor'),
    bufferSize: z.number().int().min(100).max(1_000_000).describe('replay buffer capacity (transitions)'),
    batchSize: z.number().int().min(8).max(1024).describe('transitions per gradient step'),
    learningStarts: z.number().int().min(0).max(1_000_000).describe('env steps collected before learning starts'),
    trainFrequency: z.number().int().min(1).max(256).describe('env steps (per environment vector step) between gradient steps'),
    gradientSteps: z.number().int().min(1).max(16).default(1).describe('gradient steps each time training happens'),
    targetUpdateInterval: z.number().int().min(1).max(100_000).describe('env steps between target network updates'),
    tau: z.number().min(0.001).max(1).default(1).describe('target network soft-update coefficient (1: hard copy)'),
    explorationFraction: z.number().min(0.01).max(1).describe('share of the budget over which epsilon decays linearly'),
    explorationInitial: z.number().min(0).max(1).default(1).describe('epsilon at the start'),
    explorationFinal: z.number().min(0).max(1).describe('epsilon after the decay'),
    maxGradNorm: z.number().min(0.01).max(100).default(10).describe('global gradient-norm clip'),
  })
  .describe('DQN hyperparameters');

export const ReinforceParams = z
  .strictObject({
    name: z.literal('reinforce').describe('REINFORCE (Williams 1992) with a learned value baseline; discrete actions'),
    learningRate: z.number().min(1e-6).max(0.1).describe('Adam learning rate of the policy'),
    valueLearningRate: z.number().min(1e-6).max(0.1).default(1e-3).describe('Adam learning rate of the value baseline'),
    gamma: z.number().min(0.8).max(1).describe('discount factor'),
    episodesPerUpdate: z.number().int().min(1).max(64).describe('complete episodes per policy update'),
    entropyCoef: z.number().min(0).max(0.5).default(0).describe('entropy bonus coefficient'),
    normalizeAdvantages: z.boolean().default(true).describe('normalise advantages within each update'),
  })
  .describe('REINFORCE hyperparameters');

/** Optimisers of supervised jobs. */
export const OPTIMIZERS = ['sgd', 'adam', 'adamw'] as const;

export const SupervisedParams = z
  .strictObject({
    name: z.literal('supervised').describe('minibatch gradient training of the model on the dataset (supervised tasks)'),
    optimizer: z.enum(OPTIMIZERS).describe('sgd (with momentum), adam, or adamw (decoupled weight decay)'),
    learningRate: z.number().min(1e-6).max(1).describe('peak learning rate'),
    momentum: z.number().min(0).max(0.99).default(0.9).describe('sgd momentum'),
    weightDecay: z.number().min(0).max(0.1).default(0).describe('weight decay (L2 for sgd/adam, decoupled for adamw)'),
    schedule: z.enum(['constant', 'cosine', 'step']).default('constant').describe('learning-rate schedule over the epochs (step: x0.1 at 50% and 75%)'),
    warmupEpochs: z.number().int().min(0).max(50).default(0).describe('epochs of linear warm-up'),
    batchSize: z.number().int().min(1).max(4096).describe('examples per gradient step'),
    epochs: z.number().int().min(1).max(500).describe('passes over the training set'),
    earlyStoppingPatience: z
      .number()
      .int()
      .min(0)
      .max(100)
      .default(0)
      .describe('stop after this many epochs without validation improvement and keep the best weights (0: off)'),
  })
  .describe('supervised optimiser and schedule');

export const AlgorithmSection = z
  .discriminatedUnion('name', [PpoParams, ArsParams, DqnParams, ReinforceParams, SupervisedParams])
  .superRefine((a, ctx) => {
    if (a.name === 'dqn' && a.explorationFinal > a.explorationInitial) {
      ctx.addIssue({ code: 'custom', path: ['explorationFinal'], message: `must be <= explorationInitial (${a.explorationInitial})` });
    }
    if (a.name === 'ars' && a.topDirections > a.directions) {
      ctx.addIssue({
        code: 'custom',
        path: ['topDirections'],
        message: `must be <= directions (${a.directions})`,
      });
    }
  })
  .describe('the training algorithm and its hyperparameters');

export const BudgetSection = z
  .strictObject({
    envSteps: z
      .number()
      .int()
      .min(1)
      .max(10_000_000)
      .optional()
      .describe("control tasks (required there): environment steps the engine may take (capped by the task's brief)"),
    examples: z
      .number()
      .int()
      .min(1)
      .max(100_000_000)
      .optional()
      .describe("supervised tasks (required there): training examples the engine may process, summed over epochs (capped by the task's brief)"),
    targetReturn: z
      .number()
      .min(-1e6)
      .max(1e6)
      .nullable()
      .default(null)
      .describe(
        'control tasks: stop early once the mean return of the last 20 training episodes reaches this (on the canonical environment reward); ' +
          'null: use the whole budget',
      ),
    stopWhenFlat: z
      .boolean()
      .default(false)
      .describe(
        'control tasks: stop a hopeless job once half the budget is spent and the mean return of the last 20 training episodes is no better than ' +
          'that of its first 20 (training returns only; the hidden evaluation is never consulted)',
      ),
  })
  .describe('compute budget; the engine counts it itself and stops at the cap');

export const JobSpecSchema = z
  .strictObject({
    task: z.string().min(1).max(64).describe('id of the task this job is for'),
    environment: EnvironmentSection,
    reward: RewardSection,
    dataset: DatasetSection.prefault({}),
    model: ModelSection,
    algorithm: AlgorithmSection,
    budget: BudgetSection,
    seed: z.number().int().min(0).max(2_147_483_647).describe('seed of every random choice in the job'),
  })
  .describe('a complete training job written by the trainer agent');

/** A validated job spec (defaults filled in). */
export type JobSpec = z.output<typeof JobSpecSchema>;
/** A job spec as written (defaulted fields optional). */
export type JobSpecInput = z.input<typeof JobSpecSchema>;
export type PpoConfig = z.output<typeof PpoParams>;
export type ArsConfig = z.output<typeof ArsParams>;
export type DqnConfig = z.output<typeof DqnParams>;
export type ReinforceConfig = z.output<typeof ReinforceParams>;
export type SupervisedConfig = z.output<typeof SupervisedParams>;
/** How a supervised job encodes categorical columns and handles missing cells. */
export type ColumnDecisions = z.output<typeof ColumnDecisionsSection>;
/** Names of the inner algorithms. */
export type AlgorithmName = JobSpec['algorithm']['name'];
export const ALGORITHMS: readonly AlgorithmName[] = ['ppo', 'ars', 'dqn', 'reinforce', 'supervised'];

/** The job spec's JSON Schema (draft 2020-12), as an LLM's structured output expects it. */
export function jobSpecJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(JobSpecSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
}
