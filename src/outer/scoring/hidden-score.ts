/**
 * Hidden scoring (harness side only). The functions here run the evaluation in the calling
 * thread; the outer loop and `rrl job run` never call them directly but through `Scorer`
 * (scorer-pool.ts), which runs them in a worker thread of their own (worker-entry.ts) with a
 * time and heap limit. This is the only module that imports the hidden evaluation
 * (tasks/hidden.ts); the check of an exported model (onnx-equality.ts) reads its hidden rows and
 * episodes through it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PolicyFile } from '../../inner/policy.js';
import type { ModelFile } from '../../inner/model.js';
import { getHiddenEvaluation, getSupervisedEvaluation, jobData } from '../../tasks/hidden.js';
import type { Evaluation } from '../../tasks/hidden-types.js';
import type { Dataset, SupervisedData } from '../../spec/data.js';

import type { Score } from '../../spec/score.js';
// The artifact's file names from spec/, which holds no training code: a scorer thread loads no tfjs.
import { ARTIFACT_FILES } from '../../spec/artifact.js';

/** The hidden evaluation's number for one artifact (spec/score.ts). */
export type { Score } from '../../spec/score.js';

/** Maps a raw score onto the task's anchors: random → 0, reference → 1. */
export function normalizeScore(taskId: string, raw: number): number {
  const a = getHiddenEvaluation(taskId).anchors();
  return (raw - a.random) / (a.reference - a.random);
}

function toScore(taskId: string, e: Evaluation): Score {
  if (!Number.isFinite(e.raw)) throw new Error(`the hidden evaluation gave a non-finite score (${e.raw})`);
  const a = getHiddenEvaluation(taskId).anchors();
  const span = Math.abs(a.reference - a.random);
  return { raw: e.raw, normalized: normalizeScore(taskId, e.raw), stderr: e.stderr === null || !Number.isFinite(e.stderr) ? null : e.stderr / span };
}

/** Scores a policy or model on its task's hidden evaluation (harness side only, in this thread). */
export function scorePolicy(taskId: string, trained: PolicyFile | ModelFile): Score {
  return toScore(taskId, getHiddenEvaluation(taskId).score(trained));
}

/** Reads an artifact's policy.json or model.json; a missing, unreadable or shapeless file is an error naming it. */
function readTrained(dir: string): PolicyFile | ModelFile {
  const file = existsSync(join(dir, ARTIFACT_FILES.policy)) ? ARTIFACT_FILES.policy : ARTIFACT_FILES.model;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new Error(e.code === 'ENOENT' ? `the artifact has neither ${ARTIFACT_FILES.policy} nor ${ARTIFACT_FILES.model}` : `${file}: ${e.message}`);
  }
  const p = parsed as Partial<Record<string, unknown>> | null;
  if (!p || typeof p !== 'object' || Array.isArray(p)) throw new Error(`${file}: expected a JSON object`);
  if (!Array.isArray(p.layers)) throw new Error(`${file}: "layers" must be an array of dense layers`);
  for (const [i, l] of (p.layers as unknown[]).entries()) {
    const layer = l as Partial<Record<string, unknown>> | null;
    if (!layer || !Number.isInteger(layer.in) || !Number.isInteger(layer.out) || !Array.isArray(layer.weights) || !Array.isArray(layer.bias)) {
      throw new Error(`${file}: layers[${i}] must have integer "in" and "out" and arrays "weights" and "bias"`);
    }
    if (![...(layer.weights as unknown[]), ...(layer.bias as unknown[])].every((v) => typeof v === 'number' && Number.isFinite(v))) {
      throw new Error(`${file}: layers[${i}] holds a weight or bias that is not a finite number`);
    }
  }
  if (file === ARTIFACT_FILES.policy && (!p.actionSpace || typeof p.actionSpace !== 'object')) throw new Error(`${file}: "actionSpace" is missing`);
  if (file === ARTIFACT_FILES.model && !Array.isArray(p.features)) throw new Error(`${file}: "features" must be an array`);
  return parsed as PolicyFile | ModelFile;
}

/**
 * Scores the policy (control) or model (supervised) stored in an artifact directory, in this
 * thread; an evaluation command gets `timeoutMs`. Throws on an unreadable or ill-shaped artifact.
 */
export function scoreArtifact(taskId: string, dir: string, timeoutMs?: number): Score {
  const h = getHiddenEvaluation(taskId);
  if (h.scoreDir) return toScore(taskId, h.scoreDir(dir, timeoutMs));
  return scorePolicy(taskId, readTrained(dir));
}

/** The data the harness hands a job of this task (supervised sources; nothing for control). */
export function dataForJob(taskId: string, spec: unknown): SupervisedData | undefined {
  return jobData(taskId, spec as { dataset?: { sources?: { id: string }[]; demonstrations?: string | null } });
}

/** A supervised task's hidden test rows (harness side only: the check of an exported model runs on them). */
export function hiddenTestRows(taskId: string): Dataset {
  return getSupervisedEvaluation(taskId).heldOut().test;
}

/** Plays an actor on a built-in control task's hidden episodes (harness side only: the check of an exported policy). */
export { playHiddenEpisodes } from '../../tasks/hidden.js';
