import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACT_FILES } from '../inner/train.js';
import type { PolicyFile } from '../inner/policy.js';
import type { ModelFile } from '../inner/model.js';
import { getHiddenEvaluation, jobData } from '../tasks/hidden.js';
import type { SupervisedData } from '../inner/algos/supervised.js';

/** The hidden evaluation's verdict on one artifact. */
export interface Score {
  raw: number;
  normalized: number;
}

/** Maps a raw score onto the task's anchors: random → 0, reference → 1. */
export function normalizeScore(taskId: string, raw: number): number {
  const a = getHiddenEvaluation(taskId).anchors();
  return (raw - a.random) / (a.reference - a.random);
}

/** Scores a policy or model on its task's hidden evaluation (harness side only). */
export function scorePolicy(taskId: string, trained: PolicyFile | ModelFile): Score {
  const raw = getHiddenEvaluation(taskId).score(trained);
  return { raw, normalized: normalizeScore(taskId, raw) };
}

/** Scores the policy (control) or model (supervised) stored in an artifact directory. */
export function scoreArtifact(taskId: string, dir: string): Score {
  const h = getHiddenEvaluation(taskId);
  if (h.scoreDir) {
    const raw = h.scoreDir(dir);
    return { raw, normalized: normalizeScore(taskId, raw) };
  }
  const file = existsSync(join(dir, ARTIFACT_FILES.policy)) ? ARTIFACT_FILES.policy : ARTIFACT_FILES.model;
  return scorePolicy(taskId, JSON.parse(readFileSync(join(dir, file), 'utf8')) as PolicyFile | ModelFile);
}

/** The data the harness hands a job of this task (supervised sources; nothing for control). */
export function dataForJob(taskId: string, spec: unknown): SupervisedData | undefined {
  return jobData(taskId, spec as { dataset?: { sources?: { id: string }[]; demonstrations?: string | null } });
}
