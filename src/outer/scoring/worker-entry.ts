/**
 * Worker-thread entry of the scorer (harness side only): scores one artifact on its task's
 * hidden evaluation under the secret the harness passes. Job code never runs in this thread.
 * The thread registers the user's task files on its first scoring and keeps them, and a corpus
 * task from its table when it first scores it; before each
 * scoring it compares the task's fingerprint as it loaded it with the harness's and refuses, in
 * one line naming the file, when they differ.
 */
import { useEvalSecret } from '../../tasks/secret.js';
import { type Score, scoreArtifact } from './hidden-score.js';
import { registerTaskDir } from '../../tasks/file/register.js';
import { type TaskFingerprint, describeFingerprintChange, fingerprintOf, taskFileParts, taskFingerprintDetail } from '../../tasks/fingerprint.js';
import { type FamilyDraw, registerFamilyTasks } from '../../tasks/families/index.js';
import { type CorpusDraw, registerCorpusDraws } from '../../tasks/corpus/register.js';

/** What the harness asks the scorer worker to do. */
export interface ScoreRequest {
  taskId: string;
  dir: string;
  secret: string;
  /** The scoring time limit (an evaluation command is killed at it). */
  timeoutMs: number;
  /** The task directories registered in the harness (user task files), registered here too. */
  taskDirs?: string[];
  /** The generated task families registered in the harness (`registerFamilyTasks`), drawn again here. */
  families?: FamilyDraw[];
  /** The corpus tasks registered in the harness: the one scored is built again here from its table. */
  corpus?: CorpusDraw[];
  /** The harness's fingerprint of the task: the thread scores only the same task definition and data. */
  fingerprint?: TaskFingerprint;
}

const REFUSAL = 'the scorer refuses to score it against another split; restore the file, or start a new run';

/** What changed in the task's files on disk since the harness's fingerprint, in one line; null when nothing did. */
function changeOnDisk(expected: TaskFingerprint): string | null {
  const kept = expected.parts.filter((p) => p.what === 'task file' || p.what === 'data file');
  const file = kept.find((p) => p.what === 'task file');
  if (!file?.path) return null;
  const disk = taskFileParts(file.path);
  if (JSON.stringify(disk) === JSON.stringify(kept)) return null;
  const now = fingerprintOf(expected.task, [...disk, ...expected.parts.filter((p) => !kept.includes(p))]);
  return describeFingerprintChange(expected, now, 'the harness loaded it');
}

/** Scores the artifact in `req.dir`; throws (and the pool reports) on any scorer error. */
export default async function scoreInWorker(req: ScoreRequest): Promise<Score> {
  useEvalSecret(req.secret);
  try {
    for (const dir of req.taskDirs ?? []) await registerTaskDir(dir);
  } catch (err) {
    // A task file that no longer loads: say what changed when it is this task's.
    const change = req.fingerprint ? changeOnDisk(req.fingerprint) : null;
    throw change ? new Error(`${change}; ${REFUSAL}`) : err;
  }
  for (const f of req.families ?? []) registerFamilyTasks(f.family, f.count, f.seed);
  await registerCorpusDraws(req.corpus ?? [], req.taskId);
  if (req.fingerprint) {
    const change = describeFingerprintChange(req.fingerprint, taskFingerprintDetail(req.taskId), 'the harness loaded it');
    if (change) throw new Error(`${change}; ${REFUSAL}`);
  }
  return scoreArtifact(req.taskId, req.dir, req.timeoutMs);
}
