/**
 * The caps a spec's estimates break (compute-estimate.ts for training, scoring-estimate.ts for
 * scoring), as spec issues that name the field driving the cost and give the numbers.
 */
import type { TaskBrief } from '../spec/brief.js';
import { jobMemoryCapMb } from '../spec/brief.js';
import type { JobSpec } from '../spec/schema.js';
import type { SpecIssue } from '../spec/validate.js';
import { type ComputeEstimate, STEP_OVERHEAD_S, THROUGHPUT_FLOPS, WORK_MARGIN, estimateCompute, formatBytes, n0, sci } from './compute-estimate.js';
import { SCORER_LIMIT_S, SCORING_CAP_FLOPS, SCORING_MARGIN, SCORING_THROUGHPUT_FLOPS, estimateScoring } from './scoring-estimate.js';

/**
 * The caps a spec's estimate breaks: scoring above SCORING_CAP_FLOPS, memory above the brief's job
 * memory cap, or work that would need more than WORK_MARGIN × the brief's wall-clock cap at the
 * generous throughput.
 * Each issue names the field that drives the cost and gives the numbers.
 */
export function computeIssues(spec: JobSpec, brief: TaskBrief, estimate: ComputeEstimate = estimateCompute(spec, brief)): SpecIssue[] {
  const issues: SpecIssue[] = [];
  const capMb = jobMemoryCapMb(brief);
  if (estimate.memoryBytes > capMb * 2 ** 20) {
    const top = estimate.memory[0];
    issues.push({
      path: top.field,
      value: fieldValue(spec, top.field),
      message:
        `the job needs about ${formatBytes(estimate.memoryBytes)} of memory, over the task's cap of ${capMb.toLocaleString('en-US')} MB ` +
        `(${top.what}: ${formatBytes(top.bytes)})`,
    });
  }
  const wall = brief.budget.maxWallSeconds;
  if (estimate.seconds > WORK_MARGIN * wall) {
    issues.push({
      path: estimate.work.field,
      value: fieldValue(spec, estimate.work.field),
      message:
        `the job's work cannot finish within the task's wall-clock cap of ${n0(wall)} s: ${estimate.work.what}; about ${sci(estimate.flops)} FLOPs, ` +
        `which take about ${n0(estimate.seconds)} s even at ${THROUGHPUT_FLOPS / 1e9} GFLOP/s and ${STEP_OVERHEAD_S * 1000} ms a gradient step (refused ` +
        `above ${WORK_MARGIN}× the cap)`,
    });
  }
  const scoring = estimateScoring(spec, brief);
  if (scoring && scoring.flops > SCORING_CAP_FLOPS) {
    const gflop = (x: number): string => (x / 1e9).toLocaleString('en-US', { maximumFractionDigits: 1 });
    issues.push({
      path: 'model.hidden',
      value: spec.model.hidden,
      message:
        `scoring the model on the hidden evaluation needs about ${gflop(scoring.flops)} GFLOP, over the cap of ${gflop(SCORING_CAP_FLOPS)} GFLOP ` +
        `(${scoring.what}; the cap is the scorer's ${SCORER_LIMIT_S} s at an assumed ${SCORING_THROUGHPUT_FLOPS / 1e9} GFLOP/s, ` +
        `with ${SCORING_MARGIN}× margin)`,
    });
  }
  return issues;
}

/** The spec's value at a dotted path such as `algorithm.batchSize`. */
function fieldValue(spec: JobSpec, path: string): unknown {
  let v: unknown = spec;
  for (const key of path.split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
  return v;
}
