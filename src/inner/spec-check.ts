import type { TaskBrief } from '../spec/brief.js';
import { type InertContext, isInert, withoutInert } from '../spec/inert.js';
import type { JobSpec } from '../spec/schema.js';
import { SpecError, type SpecIssue, parseSpec } from '../spec/validate.js';
import { computeIssues } from './compute-issues.js';
import { environmentFor } from './envs/source.js';
import { checkExpression } from './expr/expression.js';

/** Names the reward expression may use for a brief, in the engine's order. */
export function rewardVariableNames(brief: TaskBrief): string[] {
  return brief.rewardVariables.map((v) => v.name);
}

/**
 * Checks a schema-valid spec against the task's brief: task id, parameters and their
 * declared ranges, wrappers, algorithm, budget cap, demonstrations and the reward
 * expression; then, when all of that fits, the job's estimated memory and work against the
 * task's caps (see compute-estimate.ts and compute-issues.ts). Returns every issue found (empty when the spec fits).
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
    if (!brief.environment.wrappers.includes(w)) {
      const offered = brief.environment.wrappers.join(', ') || 'none';
      issues.push({ path: 'environment.wrappers', value: w, message: `wrapper not offered by this task (offered: ${offered})` });
    }
  }
  if (!brief.algorithms.includes(spec.algorithm.name)) {
    issues.push({ path: 'algorithm.name', value: spec.algorithm.name, message: `not allowed for this task (allowed: ${brief.algorithms.join(', ')})` });
  }
  if (brief.kind === 'control') issues.push(...controlIssues(spec, brief));
  else issues.push(...supervisedIssues(spec, brief));
  if (issues.length === 0) issues.push(...safeComputeIssues(spec, brief));
  return issues;
}

/** computeIssues, with a failure to estimate (e.g. a user task naming an unknown environment) as an issue. */
function safeComputeIssues(spec: JobSpec, brief: TaskBrief): SpecIssue[] {
  try {
    return computeIssues(spec, brief);
  } catch (err) {
    return [{ path: 'task', value: spec.task, message: `cannot estimate the job's compute: ${(err as Error).message}` }];
  }
}

/** The issues of a control job's spec: budget, demonstrations, no data sources, the reward expression. */
function controlIssues(spec: JobSpec, brief: TaskBrief): SpecIssue[] {
  const issues: SpecIssue[] = [];
  const steps = spec.budget.envSteps;
  if (steps === undefined) issues.push({ path: 'budget.envSteps', value: undefined, message: 'required for a control task' });
  else if (steps > brief.budget.maxEnvSteps) {
    issues.push({ path: 'budget.envSteps', value: steps, message: `exceeds the task's cap of ${brief.budget.maxEnvSteps}` });
  } else if (steps < spec.environment.numEnvs && !isInert(spec, inertContext(brief), 'environment.numEnvs')) {
    // One vector step moves every environment at once; the engine refuses a vector larger than the budget (train.ts makeEnv).
    const n = spec.environment.numEnvs;
    const advice = 'give at least that many or fewer environments';
    const message = `is below environment.numEnvs (${n}): one step of the vector of environments takes ${n} env steps; ${advice}`;
    issues.push({ path: 'budget.envSteps', value: steps, message });
  }
  const demo = spec.dataset.demonstrations;
  if (demo !== null && !brief.demonstrations.some((s) => s.id === demo)) {
    const catalog = brief.demonstrations.map((s) => s.id).join(', ') || 'none offered';
    issues.push({ path: 'dataset.demonstrations', value: demo, message: `not in the task's catalog (${catalog})` });
  } else if (demo !== null && spec.algorithm.name !== 'ppo') {
    issues.push({ path: 'dataset.demonstrations', value: demo, message: `behaviour-cloning warm starts are implemented for ppo, not ${spec.algorithm.name}` });
  }
  if (spec.dataset.sources.length) {
    issues.push({ path: 'dataset.sources', value: spec.dataset.sources, message: 'control tasks take no dataset sources (use dataset.demonstrations)' });
  }
  if (spec.reward.objective !== undefined) {
    issues.push({ path: 'reward.objective', value: spec.reward.objective, message: 'control tasks train on reward.expression, not a supervised objective' });
  }
  const expr = spec.reward.expression;
  if (expr === undefined) issues.push({ path: 'reward.expression', value: undefined, message: 'required for a control task' });
  else {
    const exprError = checkExpression(expr, rewardVariableNames(brief));
    if (exprError) issues.push({ path: 'reward.expression', value: expr, message: exprError });
  }
  return issues;
}

/** The issues of a supervised job's spec: budget, sources, objective, the weight expression. */
function supervisedIssues(spec: JobSpec, brief: TaskBrief): SpecIssue[] {
  const issues: SpecIssue[] = [];
  const info = brief.supervised;
  if (!info) return [{ path: 'task', value: spec.task, message: 'the brief of this supervised task has no dataset description' }];
  const examples = spec.budget.examples;
  const cap = brief.budget.maxExamples ?? 0;
  if (examples === undefined) issues.push({ path: 'budget.examples', value: undefined, message: 'required for a supervised task' });
  else if (examples > cap) issues.push({ path: 'budget.examples', value: examples, message: `exceeds the task's cap of ${cap}` });
  const catalog = info.sources.map((s) => s.id).join(', ');
  if (spec.dataset.demonstrations !== null) {
    issues.push({ path: 'dataset.demonstrations', value: spec.dataset.demonstrations, message: 'supervised tasks take dataset.sources, not demonstrations' });
  }
  if (!spec.dataset.sources.length) issues.push({ path: 'dataset.sources', value: [], message: `choose at least one source from the catalog (${catalog})` });
  spec.dataset.sources.forEach((src, i) => {
    if (!info.sources.some((s) => s.id === src.id)) {
      issues.push({ path: `dataset.sources[${i}].id`, value: src.id, message: `not in the task's catalog (${catalog})` });
    }
  });
  if (spec.dataset.sources.length && spec.dataset.sources.every((s) => s.weight === 0)) {
    issues.push({ path: 'dataset.sources', value: spec.dataset.sources, message: 'at least one mixture weight must be positive' });
  }
  const objective = spec.reward.objective;
  const classify = info.target.type === 'classification';
  const fitting = classify ? 'cross-entropy or focal' : 'mse or huber';
  if (objective === undefined) issues.push({ path: 'reward.objective', value: undefined, message: `required for a supervised task (${fitting})` });
  else if (classify !== (objective === 'cross-entropy' || objective === 'focal')) {
    issues.push({ path: 'reward.objective', value: objective, message: `does not fit a ${info.target.type} target (use ${fitting})` });
  }
  if (spec.reward.expression !== undefined) {
    const message = 'supervised tasks use reward.objective (and reward.weight), not a per-step reward expression';
    issues.push({ path: 'reward.expression', value: spec.reward.expression, message });
  }
  if (spec.reward.weight !== null) {
    const err = checkExpression(spec.reward.weight, rewardVariableNames(brief), { label: 'weight expression' });
    if (err) issues.push({ path: 'reward.weight', value: spec.reward.weight, message: err });
  }
  return issues;
}

/**
 * What decides which fields a job of this brief ignores (spec/inert.ts). A control task whose
 * environment cannot be made here counts as continuous (nothing is dropped for discreteness);
 * validation reports that environment through the compute estimate.
 */
export function inertContext(brief: TaskBrief): InertContext {
  if (brief.kind === 'supervised') return { kind: 'supervised', discreteActions: false };
  try {
    return { kind: 'control', discreteActions: environmentFor(brief).info.actionSpace.type === 'discrete' };
  } catch {
    return { kind: 'control', discreteActions: false };
  }
}

/**
 * Parses raw JSON into a spec that fits both the schema and the brief; never throws. The spec
 * returned is canonical: the fields this job type ignores are reset to their defaults
 * (spec/inert.ts), so a spec that differs from another only there is the same job (the same cache
 * key, the same artifact, `unchanged` against its baseline). Issues are found on the spec as written.
 */
export function validateSpec(input: unknown, brief: TaskBrief): { ok: true; spec: JobSpec } | { ok: false; error: SpecError } {
  const parsed = parseSpec(input);
  if (!parsed.ok) return parsed;
  const issues = briefIssues(parsed.spec, brief);
  if (issues.length) return { ok: false, error: new SpecError(issues) };
  return { ok: true, spec: withoutInert(parsed.spec, brief, inertContext(brief)) };
}

/** Like validateSpec, but the spec as written (inert fields kept): for tests that show the engine ignores them. */
export function validateSpecAsWritten(input: unknown, brief: TaskBrief): { ok: true; spec: JobSpec } | { ok: false; error: SpecError } {
  const parsed = parseSpec(input);
  if (!parsed.ok) return parsed;
  const issues = briefIssues(parsed.spec, brief);
  return issues.length ? { ok: false, error: new SpecError(issues) } : parsed;
}
