/**
 * What the evaluation of a supervised task file's task knows, read from the task file itself: the
 * anchors the file gives. The share of the main file's rows held out for the hidden test set
 * (`split.testFraction`) is public, in the task's definition (`define.ts`); which rows is drawn from
 * the evaluation secret (`supervised/evaluate.ts`).
 */
import type { SupervisedEvaluationSettings } from '../supervised/evaluate.js';
import { taskFileAnchors } from './define.js';
import type { SupervisedTaskFile } from './schema.js';

/** What the evaluation of the task a supervised task file defines knows. */
export function taskFileEvaluation(task: SupervisedTaskFile): SupervisedEvaluationSettings {
  const anchors = taskFileAnchors(task);
  return anchors ? { anchors } : {};
}
