import type { TaskBrief } from '../spec/brief.js';
import type { JobSpec } from '../spec/schema.js';
import { SpecError, type SpecIssue, parseSpec } from '../spec/validate.js';
import { checkExpression } from './expr.js';

/** Names the reward expression may use for a brief, in the engine's order. */
export function rewardVariableNames(brief: TaskBrief): string[] {
  return brief.rewardVariables.map((v) => v.name);
}

/**
 * Checks a schema-valid spec against the task's brief: task id, parameters and their
 * declared ranges, wrappers, algorithm, budget cap, demonstrations and the reward
 * expression. Returns every issue found (empty when the spec fits).
 */
export function briefIssues(spec: JobSpec, brief: TaskBrief): SpecIssue[] {
  const issues: SpecIssue[] = [];
  if (spec.task !== brief.id) issues.push({ path: 'task', value: spec.task, message: `this brief is for task "${brief.id}"` });
  for (const [name, setting] of Object.entries(spec.environment.params)) {
    const p = brief.environment.params.find((q) => q.name === name);
    const path = `environment.params.${name}`;
    if (!p) {
      const known = brief.environment.params.map((q) => q.name).join(', ') || 'none';
      issues.push({ path, value: setting, message: `unknown parameter; tunable here: ${known}` });
      continue;
    }
    const [lo, hi] = typeof setting === 'number' ? [setting, setting] : setting;
    if (lo > hi) issues.push({ path, value: setting, message: 'range must be [low, high] with low <= high' });
    if (lo < p.min || hi > p.max) issues.push({ path, value: setting, message: `outside the declared range [${p.min}, ${p.max}]` });
  }
  for (const w of spec.environment.wrappers) {
    if (!brief.environment.wrappers.includes(w)) issues.push({ path: 'environment.wrappers', value: w, message: `wrapper not offered by this task (offered: ${brief.environment.wrappers.join(', ') || 'none'})` });
  }
  if (!brief.algorithms.includes(spec.algorithm.name)) {
    issues.push({ path: 'algorithm.name', value: spec.algorithm.name, message: `not allowed for this task (allowed: ${brief.algorithms.join(', ')})` });
  }
  if (spec.budget.envSteps > brief.budget.maxEnvSteps) {
    issues.push({ path: 'budget.envSteps', value: spec.budget.envSteps, message: `exceeds the task's cap of ${brief.budget.maxEnvSteps}` });
  }
  const demo = spec.dataset.demonstrations;
  if (demo !== null && !brief.demonstrations.some((s) => s.id === demo)) {
    issues.push({ path: 'dataset.demonstrations', value: demo, message: `not in the task's catalog (${brief.demonstrations.map((s) => s.id).join(', ') || 'none offered'})` });
  }
  const exprError = checkExpression(spec.reward.expression, rewardVariableNames(brief));
  if (exprError) issues.push({ path: 'reward.expression', value: spec.reward.expression, message: exprError });
  return issues;
}

/** Parses raw JSON into a spec that fits both the schema and the brief; never throws. */
export function validateSpec(input: unknown, brief: TaskBrief): { ok: true; spec: JobSpec } | { ok: false; error: SpecError } {
  const parsed = parseSpec(input);
  if (!parsed.ok) return parsed;
  const issues = briefIssues(parsed.spec, brief);
  if (issues.length) return { ok: false, error: new SpecError(issues) };
  return parsed;
}
