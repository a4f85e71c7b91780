/**
 * The private side of the task registry: each task's evaluation, built from its public definition
 * and what its evaluation knows, looked up by task id in its source's evaluate file (`control/`,
 * `supervised/`, `gymnasium/`, `families/`, `file/` `evaluate.ts`). It is the only importer of
 * the evaluate files; only the harness's scorer (`outer/scoring/hidden-score.ts`) imports it, and job code in
 * workers or on cluster nodes never does (`public-side.test.ts` checks the import graph).
 */
import type { HiddenEvaluation } from './hidden-types.js';
import { SUPERVISED_EVALUATIONS, type SupervisedEvaluation, supervisedEvaluation } from './supervised/evaluate.js';
import { SUPERVISED_TASKS } from './supervised/tasks.js';
import { EXAMPLE_TASKS } from './supervised/examples.js';
import { CONTROL_TASKS } from './control/tasks.js';
import { type Actor, CONTROL_EVALUATIONS, controlEvaluation, episodeReturns, secretPhysicsEvaluation } from './control/evaluate.js';
import { heldOutSeeds } from './secret.js';
import { familyControlEvaluation, familySupervisedEvaluation } from './families/evaluate.js';
import { taskFileEvaluation } from './file/evaluate.js';
import { GYMNASIUM_TASKS } from './gymnasium/tasks.js';
import { GYMNASIUM_EVALUATIONS, gymnasiumEvaluation, gymnasiumEvaluationSettings } from './gymnasium/evaluate.js';
import { type Demonstrations, recordDemonstrations } from './control/demos.js';
import type { SupervisedData } from '../spec/data.js';
import { type ExtraTask, extraTasks } from './extra.js';

/** What the evaluation of a built-in task knows (its source's `evaluate.ts`); throws for a task without it. */
function builtIn<T>(table: Readonly<Record<string, T>>, taskId: string, where: string): T {
  const settings = table[taskId];
  if (!settings) throw new Error(`built-in task "${taskId}" has no evaluation settings (${where})`);
  return settings;
}

const SUPERVISED: SupervisedEvaluation[] = [...SUPERVISED_TASKS, ...EXAMPLE_TASKS].map((def) =>
  supervisedEvaluation(def, builtIn(SUPERVISED_EVALUATIONS, def.id, 'supervised/evaluate.ts')),
);
const CONTROL: HiddenEvaluation[] = CONTROL_TASKS.map((def) => {
  const { reference, params, referenceHow } = builtIn(CONTROL_EVALUATIONS, def.id, 'control/evaluate.ts');
  return controlEvaluation({ taskId: def.id, envId: def.envId, episodes: def.evaluationEpisodes, reference, params, referenceHow });
});
const GYMNASIUM: HiddenEvaluation[] = GYMNASIUM_TASKS.map((def) => gymnasiumEvaluation(def, builtIn(GYMNASIUM_EVALUATIONS, def.id, 'gymnasium/evaluate.ts')));
const HIDDEN: HiddenEvaluation[] = [...CONTROL, ...SUPERVISED, ...GYMNASIUM];

const EXTRA_EVAL = new WeakMap<ExtraTask, HiddenEvaluation>();

/** The hidden evaluation of a task registered at run time (extra.ts), built once per registration. */
function extraFor(taskId: string): HiddenEvaluation | undefined {
  const t = extraTasks().find((x) => x.def.id === taskId);
  if (!t) return undefined;
  let e = EXTRA_EVAL.get(t);
  if (!e) {
    if (t.kind === 'control') e = gymnasiumEvaluation(t.def, gymnasiumEvaluationSettings(t.madeFrom.options));
    else if (t.kind === 'control-sim') e = secretPhysicsEvaluation(t.def, familyControlEvaluation(t));
    else {
      const made = t.madeFrom;
      // A corpus task's evaluation knows nothing beyond its definition: computed anchors, the built-in scorer.
      const settings =
        'family' in made ? familySupervisedEvaluation({ def: t.def, madeFrom: made }) : 'taskFile' in made ? taskFileEvaluation(made.taskFile) : {};
      e = supervisedEvaluation(t.def, settings);
    }
    EXTRA_EVAL.set(t, e);
  }
  return e;
}

/** The supervised evaluation of a built-in task or of one registered at run time. */
function supervisedFor(taskId: string): SupervisedEvaluation | undefined {
  const s = SUPERVISED.find((x) => x.taskId === taskId);
  if (s) return s;
  return extraTasks().some((x) => x.def.id === taskId && x.kind === 'supervised') ? (extraFor(taskId) as SupervisedEvaluation) : undefined;
}

/** The hidden evaluation of a task. */
export function getHiddenEvaluation(taskId: string): HiddenEvaluation {
  const h = HIDDEN.find((x) => x.taskId === taskId) ?? extraFor(taskId);
  if (!h) throw new Error(`no hidden evaluation for task "${taskId}"`);
  return h;
}

/**
 * The data a job of this task may receive: for supervised tasks the rows of the sources
 * the spec names (from the training pool, never the test set); nothing for control tasks.
 */
export function jobData(taskId: string, spec: { dataset?: { sources?: { id: string }[]; demonstrations?: string | null } }): SupervisedData | undefined {
  const s = supervisedFor(taskId);
  if (s) return s.jobData((spec.dataset?.sources ?? []).map((x) => x.id));
  const demo = spec.dataset?.demonstrations;
  const def = CONTROL_TASKS.find((d) => d.id === taskId);
  const recipe = def?.demonstrations?.find((d) => d.id === demo);
  if (!def || !recipe) return undefined;
  const key = `${taskId}/${recipe.id}`;
  let demos = DEMOS.get(key);
  if (!demos) {
    demos = recordDemonstrations(def.envId, recipe, 0xd3);
    DEMOS.set(key, demos);
  }
  return { sources: {}, demonstrations: demos };
}

const DEMOS = new Map<string, Demonstrations>();

/** A supervised task's evaluation with its data access (harness and tests only). */
export function getSupervisedEvaluation(taskId: string): SupervisedEvaluation {
  const s = supervisedFor(taskId);
  if (!s) throw new Error(`no supervised task "${taskId}"`);
  return s;
}

/** Anything that picks actions for a batch of observations, as a control evaluation runs it. */
export type { Actor } from './control/evaluate.js';

/**
 * Plays `actor` on the hidden episodes of a built-in control task, as its evaluation does (harness
 * and tests only: the check of an exported policy records the observations the engine's policy meets).
 */
export function playHiddenEpisodes(taskId: string, actor: Actor): void {
  const def = CONTROL_TASKS.find((d) => d.id === taskId);
  if (!def) throw new Error(`no built-in control task "${taskId}"`);
  const { params } = builtIn(CONTROL_EVALUATIONS, taskId, 'control/evaluate.ts');
  episodeReturns(actor, def.envId, heldOutSeeds(taskId, def.evaluationEpisodes), params);
}
