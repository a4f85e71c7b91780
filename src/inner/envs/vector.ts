import { Rng, mixSeed } from '../../util/rng.js';
import type { Env, PhysParams } from './types.js';

/**
 * The reset seed of env `i` of a training vector seeded with `seed`. Bit 31 is always clear:
 * held-out evaluation seeds have it set (tasks/secret.ts), so training never meets one.
 */
export function trainingResetSeed(seed: number, i: number): number {
  return (mixSeed(seed, i) & 0x7fffffff) >>> 0;
}

/** A parameter fixed to a value or drawn uniformly from [lo, hi] at every episode start. */
export type ParamSetting = number | [number, number];

/** Finished episodes, measured on the environment's own reward. */
export interface EpisodeStat {
  ret: number;
  length: number;
}

/**
 * Synchronous vector of environments with same-step autoreset (as SB3 / CleanRL use):
 * when an episode ends the returned observation already belongs to the next episode,
 * and `nextObs` keeps the final observation of the one that ended.
 */
export class VecEnv {
  readonly num: number;
  readonly obsDim: number;
  /** Current observations (num × obsDim), after autoreset. */
  readonly obs: Float64Array;
  /** Observations right after the last step, before autoreset (num × obsDim). */
  readonly nextObs: Float64Array;
  readonly rewards: Float64Array;
  readonly terminated: Uint8Array;
  readonly truncated: Uint8Array;
  /** Step index within the current episode after the last step (1 on an episode's first step). */
  readonly episodeStep: Int32Array;
  /** Episodes finished since the last `drainEpisodes`. */
  private finished: EpisodeStat[] = [];
  private readonly envs: Env[];
  private readonly rngs: Rng[];
  private readonly returns: Float64Array;
  private readonly settings: Record<string, ParamSetting>;

  /** Builds `num` environments; env i is reset with `trainingResetSeed(seed, i)`, then continues its own stream. */
  constructor(make: () => Env, num: number, seed: number, settings: Record<string, ParamSetting> = {}) {
    this.num = num;
    this.envs = Array.from({ length: num }, make);
    this.obsDim = this.envs[0].info.observationNames.length;
    this.obs = new Float64Array(num * this.obsDim);
    this.nextObs = new Float64Array(num * this.obsDim);
    this.rewards = new Float64Array(num);
    this.terminated = new Uint8Array(num);
    this.truncated = new Uint8Array(num);
    this.episodeStep = new Int32Array(num);
    this.returns = new Float64Array(num);
    this.rngs = Array.from({ length: num }, (_, i) => new Rng(mixSeed(seed, i, 0x5eed)));
    this.settings = settings;
    for (let i = 0; i < num; i++) this.resetOne(i, trainingResetSeed(seed, i));
    this.nextObs.set(this.obs);
  }

  private drawParams(i: number): PhysParams {
    const out: PhysParams = {};
    for (const [name, s] of Object.entries(this.settings)) {
      out[name] = typeof s === 'number' ? s : this.rngs[i].uniform(s[0], s[1]);
    }
    return out;
  }

  private resetOne(i: number, seed?: number): void {
    const { obs } = this.envs[i].reset({ seed, params: this.drawParams(i) });
    this.obs.set(obs, i * this.obsDim);
    this.returns[i] = 0;
  }

  /** Steps every environment with its action; finished episodes restart at once. */
  step(actions: ArrayLike<number>, actionDim = 1): void {
    const d = this.obsDim;
    for (let i = 0; i < this.num; i++) {
      if (this.terminated[i] || this.truncated[i]) this.episodeStep[i] = 0;
      const a = actionDim === 1 ? actions[i] : Array.prototype.slice.call(actions, i * actionDim, (i + 1) * actionDim);
      const r = this.envs[i].step(a as number | number[]);
      this.nextObs.set(r.obs, i * d);
      this.rewards[i] = r.reward;
      this.terminated[i] = r.terminated ? 1 : 0;
      this.truncated[i] = r.truncated ? 1 : 0;
      this.returns[i] += r.reward;
      this.episodeStep[i] += 1;
      if (r.terminated || r.truncated) {
        this.finished.push({ ret: this.returns[i], length: this.episodeStep[i] });
        this.resetOne(i);
      } else {
        this.obs.set(r.obs, i * d);
      }
    }
  }

  /** Returns and forgets the episodes finished since the last call. */
  drainEpisodes(): EpisodeStat[] {
    const out = this.finished;
    this.finished = [];
    return out;
  }
}
