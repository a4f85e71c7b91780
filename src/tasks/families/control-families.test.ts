import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAMILIES, generateFamilyTasks, registerFamilyTasks } from './index.js';
import { bandCorners } from './types.js';
import { familyControlEvaluation } from './evaluate.js';
import { pendulumScripted } from './pendulum/scripted.js';
import { mountainCarScripted } from './mountain-car/scripted.js';
import { acrobotScripted } from './acrobot/scripted.js';
import { pointMassScripted } from './point-mass/scripted.js';
import { getEnvironment } from '../../inner/envs/index.js';
import { getPublicTask } from '../briefs.js';
import { getHiddenEvaluation } from '../hidden.js';
import { heldOutSeeds } from '../secret.js';
import { validateSpec } from '../../inner/spec-check.js';
import { runJob } from '../../inner/train.js';
import { dataForJob, scoreArtifact } from '../../outer/scoring/hidden-score.js';
import { Scorer } from '../../outer/scoring/scorer-pool.js';
import type { ExtraTask } from '../extra.js';
import type { ControlTaskDef } from '../control/define.js';

// The held-out episodes and deployment physics depend on the secret: these tests use their own.
process.env.RRL_EVAL_SECRET = 'control-families-test-secret';

const CONTROL = { pendulum: 'train', 'mountain-car': 'train', acrobot: 'held-out', 'point-mass': 'held-out' } as const;
type Name = keyof typeof CONTROL;
const NAMES = Object.keys(CONTROL) as Name[];
type SimTask = Extract<ExtraTask, { kind: 'control-sim' }>;
const drawn = Object.fromEntries(NAMES.map((f) => [f, registerFamilyTasks(f, 8, 7).map(simOf)])) as Record<Name, SimTask[]>;
const tmp = mkdtempSync(join(tmpdir(), 'rrl-control-families-'));

/** The simulator definition of a generated control task (every task of these families is one). */
function simOf(t: ExtraTask): SimTask {
  assert.equal(t.kind, 'control-sim', t.def.id);
  return t as SimTask;
}

/** What the evaluation of a drawn task knows (its nominal physics, episodes, reference and deployment draw). */
const evaluationOf = (t: SimTask) => familyControlEvaluation(t);

/** The deployment band the brief states (0 when it says the deployed physics are exact). */
function statedShift(def: ControlTaskDef): number {
  const m = /±(\d+)%/.exec(def.description);
  return m ? Number(m[1]) / 100 : 0;
}

test('the control families are registered with their splits, and every task they draw carries it', () => {
  for (const f of NAMES) {
    assert.equal(FAMILIES[f].kind, 'control');
    assert.equal(FAMILIES[f].split, CONTROL[f], f);
    for (const t of drawn[f]) {
      assert.equal(t.def.split, CONTROL[f], t.def.id);
      assert.equal(getPublicTask(t.def.id).brief.split, CONTROL[f], `${t.def.id}: the brief's split`);
    }
  }
});

test('the same seed gives the same tasks and physics; another seed gives others', () => {
  const of = (ts: ExtraTask[]): string[] =>
    ts.map(simOf).map((t) => JSON.stringify([evaluationOf(t).params, t.def.maxEnvSteps, t.def.description.replace(/-fam-\d+-\d+/g, '')]));
  for (const f of NAMES) {
    assert.deepEqual(of(generateFamilyTasks(f, 5, 3)), of(generateFamilyTasks(f, 5, 3)), f);
    assert.notDeepEqual(of(generateFamilyTasks(f, 5, 3)), of(generateFamilyTasks(f, 5, 4)), f);
    assert.ok(new Set(of(drawn[f])).size === drawn[f].length, `${f}: the tasks of one seed differ`);
  }
});

test('each baseline validates against its brief and draws its physics inside the simulator ranges and budget caps', () => {
  const caps = { pendulum: [20_000, 60_000], 'mountain-car': [10_000, 50_000], acrobot: [20_000, 50_000], 'point-mass': [20_000, 60_000] };
  for (const f of NAMES) {
    for (const t of drawn[f]) {
      const { brief, baseline } = getPublicTask(t.def.id);
      const r = validateSpec(baseline, brief);
      assert.ok(r.ok, `${t.def.id}: ${r.ok ? '' : r.error.message}`);
      assert.ok(t.def.maxEnvSteps >= caps[f][0] && t.def.maxEnvSteps <= caps[f][1], `${t.def.id}: cap ${t.def.maxEnvSteps}`);
      const info = getEnvironment(t.def.envId).info;
      for (const [name, v] of Object.entries(evaluationOf(t).params!)) {
        const q = info.params.find((x) => x.name === name)!;
        assert.ok(v >= q.min && v <= q.max, `${t.def.id}/${name} = ${v} in [${q.min}, ${q.max}]`);
      }
    }
  }
});

test('briefs state the nominal physics and the budget, never held-out seeds or the deployment draw', () => {
  for (const t of NAMES.flatMap((f) => drawn[f])) {
    const s = evaluationOf(t);
    const text = JSON.stringify(getPublicTask(t.def.id));
    for (const v of Object.values(s.params!)) assert.ok(text.includes(String(v)), `${t.def.id} states ${v}`);
    assert.ok(text.includes(t.def.maxEnvSteps.toLocaleString('en-US')), `${t.def.id} states its budget`);
    for (const seed of heldOutSeeds(t.def.id, t.def.evaluationEpisodes)) assert.ok(!text.includes(String(seed)), `${t.def.id} carries a held-out seed`);
    if (s.deployment) {
      for (const [name, v] of Object.entries(s.deployment('control-families-test-secret'))) {
        if (v !== s.params![name]) assert.ok(!text.includes(String(v)) && !text.includes(v.toFixed(3)), `${t.def.id} carries its deployment ${name}`);
      }
    }
  }
});

test('the deployment physics come from the secret, within the stated band; mountain-car deploys exactly its stated physics', () => {
  let shifted = 0;
  for (const f of ['pendulum', 'acrobot', 'point-mass'] as const) {
    for (const t of drawn[f]) {
      const share = statedShift(t.def);
      const s = evaluationOf(t);
      const a = s.deployment!('secret-a');
      assert.deepEqual(a, s.deployment!('secret-a'), 'the same secret, the same physics');
      if (share === 0) {
        assert.deepEqual(a, s.params, `${t.def.id}: no shift stated, none applied`);
        continue;
      }
      shifted += 1;
      assert.notDeepEqual(a, s.deployment!('secret-b'), `${t.def.id}: another secret, other physics`);
      for (const [name, v] of Object.entries(s.params!)) {
        assert.ok(Math.abs(a[name] - v) <= share * v + 1e-9, `${t.def.id}/${name}: ${a[name]} within ±${share} of ${v}`);
      }
    }
  }
  assert.ok(shifted > 0, 'some drawn tasks have a deployment shift');
  for (const t of drawn['mountain-car']) {
    assert.equal(evaluationOf(t).deployment, undefined);
    assert.match(t.def.description, /the deployed car has exactly them/);
  }
});

test('every drawn task stays solvable across its band, and its reference (the scripted controller) beats a random policy', () => {
  for (const t of drawn.pendulum) {
    const s = evaluationOf(t);
    for (const p of bandCorners(s.params!, statedShift(t.def))) {
      assert.ok(pendulumScripted(p).feasible, `${t.def.id}: swing-up feasible at ${JSON.stringify(p)}`);
    }
    assert.equal(s.reference, Math.round(pendulumScripted(s.params!).ret));
  }
  for (const t of drawn['mountain-car']) assert.ok(mountainCarScripted(evaluationOf(t).params!).worst > -180, `${t.def.id}: the flag within 180 steps`);
  for (const t of drawn.acrobot) {
    for (const p of bandCorners(evaluationOf(t).params!, statedShift(t.def))) {
      assert.ok(acrobotScripted(p).worst > -400, `${t.def.id}: goal within 400 steps at ${JSON.stringify(p)}`);
    }
  }
  for (const t of drawn['point-mass']) {
    const s = evaluationOf(t);
    for (const p of bandCorners(s.params!, statedShift(t.def))) {
      assert.ok(pointMassScripted(p).feasible, `${t.def.id}: the puck held at the target within 5 s at ${JSON.stringify(p)}`);
    }
    assert.equal(s.reference, Math.round(pointMassScripted(s.params!).ret));
  }
  for (const f of NAMES) {
    for (const t of drawn[f].slice(0, 3)) {
      const a = getHiddenEvaluation(t.def.id).anchors();
      assert.ok(a.reference > a.random + 50, `${t.def.id}: reference ${a.reference} well above random ${a.random}`);
      assert.match(a.how, /scripted/);
    }
  }
});

test('point-mass is a kind of problem no train family has: two continuous force dimensions at once, a new target every episode, read from the observation', () => {
  for (const f of Object.values(FAMILIES).filter((x) => x.split === 'train' && x.kind === 'control')) {
    for (const t of generateFamilyTasks(f.name, 2, 1).map(simOf)) {
      const space = getEnvironment(t.def.envId).info.actionSpace;
      assert.ok(space.type === 'discrete' || space.shape[0] === 1, `${t.def.id}: one action dimension`);
    }
  }
  const t = drawn['point-mass'][0];
  const { brief } = getPublicTask(t.def.id);
  assert.deepEqual(getEnvironment(t.def.envId).info.actionSpace, { type: 'box', shape: [2], low: [-1, -1], high: [1, 1] });
  assert.match(brief.environment.actions, /^continuous: two values/);
  assert.deepEqual(
    brief.environment.observation.map((v) => v.name),
    ['x', 'y', 'x_dot', 'y_dot', 'dx', 'dy'],
  );
  // Two episodes of the same physics start the puck at different points with different targets.
  const env = getEnvironment(t.def.envId).make();
  const a = env.reset({ seed: 1, params: evaluationOf(t).params }).obs;
  const b = env.reset({ seed: 2, params: evaluationOf(t).params }).obs;
  assert.notDeepEqual([a[0] + a[4], a[1] + a[5]], [b[0] + b[4], b[1] + b[5]]);
});

// One real baseline job per family, at its full budget, trained and scored here and in a scorer thread.
const REAL: Record<Name, number> = { pendulum: 0, 'mountain-car': 0, acrobot: 0, 'point-mass': 0 };
for (const f of NAMES) {
  test(`${f} family: the baseline trains for real and scores above the random policy on the hidden evaluation`, async () => {
    const t = drawn[f][REAL[f]];
    const { brief, baseline } = getPublicTask(t.def.id);
    const a = await runJob(baseline, brief, { outDir: join(tmp, t.def.id), data: dataForJob(t.def.id, baseline) });
    assert.equal(a.status, 'succeeded');
    assert.ok(a.cost.envSteps <= t.def.maxEnvSteps);
    const here = scoreArtifact(t.def.id, a.dir);
    assert.ok(here.normalized > 0.1, `${t.def.id}: normalised ${here.normalized} (raw ${here.raw})`);
    const scorer = new Scorer({ workers: 1 });
    try {
      const there = await scorer.score(t.def.id, a.dir);
      assert.ok(there.ok, JSON.stringify(there));
      if (there.ok) assert.deepEqual(there.score, here);
    } finally {
      await scorer.close();
    }
  });
}
