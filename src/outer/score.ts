import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACT_FILES } from '../inner/train.js';
import type { PolicyFile } from '../inner/policy.js';
import { getHiddenEvaluation } from '../tasks/hidden.js';

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

/** Scores a policy on its task's hidden evaluation (harness side only). */
export function scorePolicy(taskId: string, policy: PolicyFile): Score {
  const raw = getHiddenEvaluation(taskId).score(policy);
  return { raw, normalized: normalizeScore(taskId, raw) };
}

/** Scores the policy stored in an artifact directory. */
export function scoreArtifact(taskId: string, dir: string): Score {
  const policy = JSON.parse(readFileSync(join(dir, ARTIFACT_FILES.policy), 'utf8')) as PolicyFile;
  return scorePolicy(taskId, policy);
}
