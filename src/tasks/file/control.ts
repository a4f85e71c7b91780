/**
 * Control task files: a Gymnasium id turned into a task through the Python bridge. The bridge
 * is asked once, when the file loads, for the environment's spaces, time limit and reward
 * threshold (`describeGymnasium`); the task itself is `gymnasiumTask` (tasks/gymnasium/define.ts),
 * whose hidden evaluation runs in a bridge the scorer starts.
 */
import { describeGymnasium } from '../../inner/envs/gym-bridge.js';
import type { VariableInfo } from '../../spec/brief.js';
import { type GymnasiumTaskOptions, cleanRlBaseline, gymnasiumTask } from '../gymnasium/define.js';
import type { ExtraTask } from '../extra.js';
import { type ControlTaskLoader, TaskFieldError, setControlTaskLoader } from './load.js';
import type { ControlTaskFile } from './schema.js';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The observation's names and meanings from the file's `variables`, when they name every value. */
function observationFrom(variables: Record<string, string>, obsDim: number): VariableInfo[] | undefined {
  const entries = Object.entries(variables);
  if (entries.length !== obsDim) {
    if (entries.length) throw new TaskFieldError(`variables: ${entries.length} given for ${obsDim} observation values; name every value, in order, or none`);
    return undefined;
  }
  for (const [name] of entries)
    if (!NAME.test(name) || ['r', 't', 'done'].includes(name))
      throw new TaskFieldError(`variables: "${name.slice(0, 40)}" is not a variable name (a letter or _, then letters, digits or _; not r, t or done)`);
  return entries.map(([name, description]) => ({ name, description }));
}

/** Loads a control task file (the loader `load.ts` calls). */
export const loadGymnasiumTaskFile: ControlTaskLoader = async (task: ControlTaskFile, file: string): Promise<ExtraTask> => {
  const env = task.environment;
  const hello = describeGymnasium(env.gymnasium, env.kwargs, { allowImport: env.allowImport });
  const maxEpisodeSteps = env.maxEpisodeSteps ?? hello.maxEpisodeSteps;
  if (!maxEpisodeSteps) throw new TaskFieldError(`environment.maxEpisodeSteps: ${env.gymnasium} has no time limit of its own; set one`);
  const a = hello.actionSpace;
  if (task.baseline.algorithm !== 'ppo')
    throw new TaskFieldError(`baseline.algorithm: only ppo has a default baseline for Gymnasium tasks (got ${task.baseline.algorithm})`);
  const maxEnvSteps = task.caps.maxEnvSteps ?? 100_000;
  const actionSpace = a.type === 'discrete' ? { type: 'discrete' as const, n: a.n } : { type: 'box' as const, low: a.low, high: a.high };
  const options: GymnasiumTaskOptions = {
    id: task.id,
    envId: env.gymnasium,
    allowImport: env.allowImport,
    envKwargs: env.kwargs,
    obsDim: hello.obsDim,
    actionSpace,
    maxEpisodeSteps,
    title: task.title,
    description: task.description,
    family: task.family,
    split: task.experiments === 'none' ? 'example' : task.experiments,
    observation: observationFrom(task.variables, hello.obsDim),
    anchors: { reference: task.anchors.reference, random: task.anchors.trivial, how: task.anchors.how },
    rewardThreshold: hello.rewardThreshold,
    caps: { maxEnvSteps, maxWallSeconds: task.caps.maxWallSeconds },
    episodes: task.split.episodes,
    baseline: cleanRlBaseline(task.id, actionSpace, Math.min(task.baseline.envSteps ?? Math.floor(maxEnvSteps / 2), maxEnvSteps)),
  };
  return { kind: 'control', def: gymnasiumTask(options), origin: file, madeFrom: { options } };
};

setControlTaskLoader(loadGymnasiumTaskFile);
