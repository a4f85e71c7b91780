/**
 * Worker-thread entry of the scorer (harness side only): scores one artifact on its task's
 * hidden evaluation under the secret the harness passes. Job code never runs in this thread.
 */
import { useEvalSecret } from '../tasks/secret.js';
import { type Score, scoreArtifact } from './score.js';
import { registerTaskDir } from '../tasks/file/register.js';
import { type FamilyDraw, registerFamilyTasks } from '../tasks/families/index.js';

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
}

/** Scores the artifact in `req.dir`; throws (and the pool reports) on any scorer error. */
export default async function scoreInWorker(req: ScoreRequest): Promise<Score> {
  useEvalSecret(req.secret);
  for (const dir of req.taskDirs ?? []) await registerTaskDir(dir);
  for (const f of req.families ?? []) registerFamilyTasks(f.family, f.count, f.seed);
  return scoreArtifact(req.taskId, req.dir, req.timeoutMs);
}
