/**
 * An exported model against the engine on a task's hidden evaluation (harness side: it reads the
 * hidden rows and episodes). Supervised: the ONNX graph's labels, probabilities or values on the
 * hidden test rows beside `ModelRunner`'s, so both give the same hidden score. Control: the
 * observations the engine's greedy policy meets on the hidden episodes, and the ONNX policy's
 * actions on them beside the engine's, so both walk the same episodes.
 */
import { getEnvironment } from '../../inner/envs/index.js';
import { type ModelFile, ModelRunner } from '../../inner/model.js';
import { type PolicyFile, PolicyRunner } from '../../inner/policy.js';
import { inputsFromCoded } from '../../inner/onnx/inputs.js';
import { OnnxSession } from '../../inner/onnx/session.js';
import { CONTROL_TASKS } from '../../tasks/control/tasks.js';
import { hiddenTestRows, playHiddenEpisodes } from './hidden-score.js';

/** How far the graph's outputs are from the engine's on the hidden rows. */
export interface SupervisedEquality {
  rows: number;
  /** Rows whose label (classification) differs; 0 for regression. */
  labelsDiffering: number;
  /** Largest |ONNX − engine| over the class probabilities (classification). */
  maxProbabilityDiff: number;
  /** Largest |ONNX − engine| / max(1, |engine|) over the predicted values (regression). */
  maxValueDiff: number;
}

/** The graph `bytes` of `file` against `ModelRunner` on the hidden test rows of `taskId`. */
export async function supervisedEquality(taskId: string, file: ModelFile, bytes: Uint8Array): Promise<SupervisedEquality> {
  const test = hiddenTestRows(taskId);
  const runner = new ModelRunner(file);
  const session = await OnnxSession.load(bytes);
  try {
    const out = await session.run(inputsFromCoded(file, test.x), test.x.length);
    const result: SupervisedEquality = { rows: test.x.length, labelsDiffering: 0, maxProbabilityDiff: 0, maxValueDiff: 0 };
    if (file.kind === 'classification') {
      const engine = runner.predict(test.x);
      result.labelsDiffering = engine.filter((c, i) => file.classes![c] !== out.label.values[i]).length;
      const p = runner.predictProba(test.x).flat();
      result.maxProbabilityDiff = Math.max(0, ...(out.probabilities.values as number[]).map((v, i) => Math.abs(v - p[i])));
    } else {
      const engine = runner.predict(test.x);
      result.maxValueDiff = Math.max(0, ...(out.prediction.values as number[]).map((v, i) => Math.abs(v - engine[i]) / Math.max(1, Math.abs(engine[i]))));
    }
    return result;
  } finally {
    await session.close();
  }
}

/** How the ONNX policy's actions compare with the engine's on the observations of the hidden episodes. */
export interface ControlEquality {
  observations: number;
  /** Actions that differ (discrete), or action values off by more than 1e-9 (continuous). */
  actionsDiffering: number;
}

/** The graph `bytes` of `policy` against `PolicyRunner` on the hidden episodes of a built-in control task. */
export async function controlEquality(taskId: string, policy: PolicyFile, bytes: Uint8Array): Promise<ControlEquality> {
  const def = CONTROL_TASKS.find((d) => d.id === taskId);
  if (!def) throw new Error(`no built-in control task "${taskId}"`);
  const runner = new PolicyRunner(policy);
  const seen: number[] = [];
  const acted: number[] = [];
  const recorder = {
    actionDim: runner.actionDim,
    act(obs: ArrayLike<number>, rows: number): Float64Array {
      const a = runner.act(obs, rows);
      for (let k = 0; k < rows * policy.obsDim; k++) seen.push(obs[k]);
      acted.push(...a);
      return a;
    },
  };
  playHiddenEpisodes(taskId, recorder);
  const d = getEnvironment(def.envId).info.observationNames.length;
  const rows = seen.length / d;
  const session = await OnnxSession.load(bytes);
  try {
    const out = await session.run({ observation: { type: 'double', values: Float64Array.from(seen), width: d } }, rows);
    const got = out.action.values as number[];
    const differing = got.filter((v, i) => (policy.actionSpace.type === 'discrete' ? v !== acted[i] : Math.abs(v - acted[i]) > 1e-9)).length;
    return { observations: rows, actionsDiffering: differing };
  } finally {
    await session.close();
  }
}
