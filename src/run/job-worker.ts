/**
 * Worker-thread entry for one training job. It receives only the spec, the task's
 * public brief and the artifact directory; nothing of the hidden evaluation. The pool runs
 * it through `pool-entry.ts`: its environment holds no secrets (`jobEnvironment`), and a
 * job whose tfjs WebAssembly heap runs out ends this worker (it is replaced, never reused).
 */
import type { JobRequest } from './executor.js';
import { type Artifact, runJob } from '../inner/train.js';

/** Runs the job in this worker and returns the artifact summary. */
export default async function runJobInWorker(req: JobRequest): Promise<Artifact> {
  return runJob(req.spec, req.brief, { outDir: req.outDir, data: req.data });
}
