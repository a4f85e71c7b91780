import type { JobRow } from '../store/store.js';

let nextId = 1;

/**
 * A finished job row as the store returns it, for tests of what the harness reads from rows:
 * a fresh id each call, task `cars-mpg`, succeeded, 1,000 examples, normalised score 0.5; `o`
 * overrides any field.
 */
export function jobRow(kind: JobRow['kind'], o: Partial<JobRow> = {}): JobRow {
  return {
    id: nextId++,
    runId: 'r',
    round: 0,
    slot: 0,
    task: 'cars-mpg',
    kind,
    agent: kind === 'proposal' ? 'test' : 'baseline',
    spec: { seed: 1 },
    trace: null,
    patch: null,
    status: 'succeeded',
    failureKind: null,
    error: null,
    envSteps: null,
    examples: 1000,
    wallSeconds: 1,
    cpuSeconds: 1,
    artifactDir: null,
    cacheHit: null,
    cacheOrigin: null,
    raw: 0,
    normalized: 0.5,
    stderr: 0.02,
    reward: null,
    advantage: null,
    groupId: null,
    finishedAt: null,
    rung: null,
    parentId: null,
    share: null,
    ...o,
  };
}
