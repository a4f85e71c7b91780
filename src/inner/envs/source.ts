/**
 * Where a control job's environments come from: the simulators written here (by Gymnasium id),
 * or Gymnasium itself through the Python bridge when the brief declares `environment.gymnasium`.
 */
import type { TaskBrief } from '../../spec/brief.js';
import { getEnvironment } from './index.js';
import { GymVecEnv, gymnasiumEnvInfo } from './gym-vector.js';
import type { Env, EnvInfo } from './types.js';
import type { ParamSetting } from './vector.js';
import type { VectorEnv } from './wrappers.js';

/** A vector of environments that holds an outside resource (a bridge process) until closed. */
export interface ClosableVectorEnv extends VectorEnv {
  close(): void;
}

/**
 * An environment family a job trains on: `make` builds one simulator here (stacked into a
 * `VecEnv`), `vector` builds a whole vector at once (the Gymnasium bridge).
 */
export interface EnvSource {
  info: EnvInfo;
  make?: () => Env;
  vector?: (num: number, seed: number, settings: Record<string, ParamSetting>) => ClosableVectorEnv;
}

/** The environments of a control task's brief; a Gymnasium bridge lives at most the task's wall-clock cap (plus a minute) without a message. */
export function environmentFor(brief: Pick<TaskBrief, 'environment' | 'budget'>): EnvSource {
  const g = brief.environment.gymnasium;
  if (!g) return getEnvironment(brief.environment.id);
  const names = brief.environment.observation.map((v) => v.name);
  return {
    info: gymnasiumEnvInfo(g, names.length === g.obsDim ? names : Array.from({ length: g.obsDim }, (_, i) => `obs_${i}`)),
    vector: (num, seed, settings) => new GymVecEnv(g, num, seed, { settings, idleTimeoutS: brief.budget.maxWallSeconds + 60 }),
  };
}
