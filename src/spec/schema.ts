import { z } from 'zod';

/**
 * The job spec: the trainer agent's whole output, one JSON document.
 * Every field carries a description and every number a bound; the same schema is
 * exported as JSON Schema for LLM structured output and printed by `rrl spec --json-schema`.
 */

const paramSetting = z
  .union([
    z.number().min(-1e6).max(1e6).describe('a fixed value for every episode'),
    z
      .tuple([z.number().min(-1e6).max(1e6), z.number().min(-1e6).max(1e6)])
      .describe('[low, high]: drawn uniformly at the start of every episode (domain randomisation)'),
  ], { error: 'expected a number or a [low, high] pair of numbers' })
  .describe('a physical parameter: a fixed value or a [low, high] range');

/** Observation/reward wrappers a job may ask for. */
export const WRAPPERS = ['normalize-observation'] as const;

export const EnvironmentSection = z
  .strictObject({
    params: z
      .record(z.string().max(64), paramSetting)
      .default({})
      .describe(
        "physical parameters of the training environment by name, within the ranges the task's brief declares; unset parameters keep their defaults",
      ),
    wrappers: z
      .array(z.enum(WRAPPERS))
      .max(4)
      .default([])
      .describe('normalize-observation: running mean/variance normalisation of observations, frozen into the saved policy'),
    numEnvs: z.number().int().min(1).max(64).default(8).describe('number of environment copies stepped together'),
  })
  .describe('the training environment: physics, wrappers, vectorisation');

export const RewardSection = z
  .strictObject({
    expression: z
      .string()
      .min(1)
      .max(500)
      .describe(
        "training reward per step, a math expression over the brief's variables (observation names, r = environment reward, t = step in episode, done = 1 on the terminal step); e.g. r + 0.1 * (1 - abs(x) / 2.4)",
      ),
  })
  .describe('the reward the job trains on (the hidden evaluation always uses the canonical reward)');

export const DatasetSection = z
  .strictObject({
    demonstrations: z
      .string()
      .max(64)
      .nullable()
      .default(null)
      .describe("id of a demonstration set from the task's catalog for a behaviour-cloning warm start, or null"),
  })
  .describe('data the job trains on besides its own experience');

export const ModelSection = z
  .strictObject({
    hidden: z
      .array(z.number().int().min(1).max(512))
      .max(4)
      .describe('hidden layer widths of the policy (and value) network; [] is a linear policy'),
    activation: z.enum(['tanh', 'relu']).describe('activation of the hidden layers'),
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
  })
  .describe('PPO hyperparameters');

export const ArsParams = z
  .strictObject({
    name: z.literal('ars').describe('augmented random search (Mania et al. 2018, V2-t): gradient-free, cheap on small control tasks'),
    stepSize: z.number().min(1e-4).max(1).describe('step size alpha'),
    directions: z.number().int().min(1).max(256).describe('random directions per iteration (N)'),
    topDirections: z.number().int().min(1).max(256).describe('best directions used in the update (b <= N)'),
    noise: z.number().min(1e-4).max(1).describe('exploration noise std nu'),
  })
  .describe('ARS hyperparameters');

export const AlgorithmSection = z
  .discriminatedUnion('name', [PpoParams, ArsParams])
  .superRefine((a, ctx) => {
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
    envSteps: z.number().int().min(1).max(10_000_000).describe("environment steps the engine may take (capped by the task's brief)"),
    targetReturn: z
      .number()
      .min(-1e6)
      .max(1e6)
      .nullable()
      .default(null)
      .describe('stop early once the mean return of the last 20 training episodes reaches this (on the canonical environment reward); null: use the whole budget'),
  })
  .describe('compute budget; the engine counts it itself and stops at the cap');

export const JobSpecSchema = z
  .strictObject({
    task: z.string().min(1).max(64).describe('id of the task this job is for'),
    environment: EnvironmentSection,
    reward: RewardSection,
    dataset: DatasetSection.default({ demonstrations: null }),
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
/** Names of the inner algorithms. */
export type AlgorithmName = JobSpec['algorithm']['name'];
export const ALGORITHMS: readonly AlgorithmName[] = ['ppo', 'ars'];

/** The job spec's JSON Schema (draft 2020-12), as an LLM's structured output expects it. */
export function jobSpecJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(JobSpecSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
}
