/**
 * A vector of Gymnasium environments stepped in one bridge process (`gym-bridge.ts`), as the
 * engine's wrappers and the algorithms see a `VecEnv`, and the `EnvInfo` a task's brief declares
 * for such an environment.
 */
import type { GymnasiumEnvironment } from '../../spec/brief.js';
import { GymBridge, GymBridgeError, checkDeclared } from './gym-bridge.js';
import type { EnvInfo, Space } from './types.js';
import { type EpisodeStat, type ParamSetting, trainingResetSeed } from './vector.js';
import type { VectorEnv } from './wrappers.js';

/** The `EnvInfo` of a Gymnasium environment as a task's brief declares it. */
export function gymnasiumEnvInfo(g: GymnasiumEnvironment, observationNames: string[]): EnvInfo {
  const a = g.actionSpace;
  const actionSpace: Space = a.type === 'discrete' ? { type: 'discrete', n: a.n } : { type: 'box', shape: [a.low.length], low: a.low, high: a.high };
  return {
    id: `gymnasium:${g.id}`,
    description: `Gymnasium ${g.id}, stepped in a Python bridge`,
    observationNames,
    observationSpace: { type: 'box', shape: [g.obsDim], low: new Array<number>(g.obsDim).fill(-Infinity), high: new Array<number>(g.obsDim).fill(Infinity) },
    actionSpace,
    maxEpisodeSteps: g.maxEpisodeSteps,
    params: [],
  };
}

/**
 * A vector of Gymnasium environments in one bridge, as the engine's wrappers and the algorithms
 * see a `VecEnv`: env i is first reset with `trainingResetSeed(seed, i)` (never a held-out seed),
 * same-step autoreset, finished episodes measured on the environment's own reward.
 */
export class GymVecEnv implements VectorEnv {
  readonly num: number;
  readonly obsDim: number;
  readonly obs: Float64Array;
  readonly nextObs: Float64Array;
  readonly rewards: Float64Array;
  readonly terminated: Uint8Array;
  readonly truncated: Uint8Array;
  readonly episodeStep: Int32Array;
  readonly bridge: GymBridge;
  private readonly returns: Float64Array;
  private readonly wasDone: Uint8Array;
  private finished: EpisodeStat[] = [];

  /** Starts the bridge for `g` with `num` environments seeded from `seed`. */
  constructor(
    g: GymnasiumEnvironment,
    num: number,
    seed: number,
    o: { settings?: Record<string, ParamSetting>; idleTimeoutS?: number; stepTimeoutS?: number } = {},
  ) {
    const params = Object.keys(o.settings ?? {});
    if (params.length) throw new GymBridgeError(`environment.params: the Gymnasium environment ${g.id} has no tunable parameters (got ${params.join(', ')})`);
    const seeds = Array.from({ length: num }, (_, i) => trainingResetSeed(seed, i));
    const { idleTimeoutS, stepTimeoutS } = o;
    this.bridge = new GymBridge({ envId: g.id, allowImport: g.allowImport, kwargs: g.kwargs, num, seeds, idleTimeoutS, stepTimeoutS });
    try {
      checkDeclared(g, this.bridge.hello);
    } catch (e) {
      this.bridge.close();
      throw e;
    }
    this.num = num;
    this.obsDim = this.bridge.obsDim;
    this.obs = this.bridge.obs;
    this.nextObs = this.bridge.finalObs;
    this.rewards = this.bridge.rewards;
    this.terminated = this.bridge.terminated;
    this.truncated = this.bridge.truncated;
    this.episodeStep = new Int32Array(num);
    this.returns = new Float64Array(num);
    this.wasDone = new Uint8Array(num);
  }

  /** Steps every environment; finished episodes restart at once (in the bridge). */
  step(actions: ArrayLike<number>, _actionDim = 1): void {
    const wasDone = this.wasDone;
    for (let i = 0; i < this.num; i++) wasDone[i] = this.terminated[i] | this.truncated[i];
    this.bridge.step(actions);
    for (let i = 0; i < this.num; i++) {
      if (wasDone[i]) this.episodeStep[i] = 0;
      this.episodeStep[i] += 1;
      this.returns[i] += this.rewards[i];
      if (this.terminated[i] || this.truncated[i]) {
        this.finished.push({ ret: this.returns[i], length: this.episodeStep[i] });
        this.returns[i] = 0;
      }
    }
  }

  /** Returns and forgets the episodes finished since the last call. */
  drainEpisodes(): EpisodeStat[] {
    const out = this.finished;
    this.finished = [];
    return out;
  }

  /** Ends the bridge. */
  close(): void {
    this.bridge.close();
  }
}
