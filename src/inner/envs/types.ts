/** Shared environment types, in the shape of Gymnasium's API. */

/** A space described as data (Gymnasium's `Discrete` and `Box`). */
export type Space = { type: 'discrete'; n: number } | { type: 'box'; shape: number[]; low: number[]; high: number[] };

/** A physical parameter the task may let a job set or randomise. */
export interface ParamInfo {
  name: string;
  default: number;
  /** Hard physical bounds of the simulator (the task's brief may declare narrower ones). */
  min: number;
  max: number;
  description: string;
}

/** Static description of an environment family. */
export interface EnvInfo {
  id: string;
  description: string;
  observationNames: string[];
  observationSpace: Space;
  actionSpace: Space;
  maxEpisodeSteps: number;
  params: ParamInfo[];
}

/** Physical parameters of one episode: name → value. */
export type PhysParams = Record<string, number>;

/** Result of `reset`, as in Gymnasium. */
export interface ResetResult {
  obs: Float64Array;
  info: Record<string, unknown>;
}

/** Result of `step`, as in Gymnasium. */
export interface StepResult {
  obs: Float64Array;
  reward: number;
  terminated: boolean;
  truncated: boolean;
  info: Record<string, unknown>;
}

/** A single Gymnasium-style environment. */
export interface Env {
  readonly info: EnvInfo;
  /** Starts an episode; `seed` reseeds the generator (as Gymnasium does) when given. */
  reset(options?: { seed?: number; params?: PhysParams }): ResetResult;
  /** Advances one step. The action is an index for discrete spaces, a vector for boxes. */
  step(action: number | ArrayLike<number>): StepResult;
}
