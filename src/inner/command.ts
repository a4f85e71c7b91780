/**
 * Training by an outside program (a task whose brief declares a `command` trainer): the
 * engine writes the validated spec, the brief and the harness's training rows into the job
 * directory, runs the program there with the task's wall-clock cap, and checks what it
 * wrote (status, cost within the budget, curve). The program never receives anything of
 * the hidden evaluation: its environment is `jobProcessEnvironment` (no secrets, a temporary
 * HOME and XDG directories of its own, removed when it ends).
 */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CommandTrainer, TaskBrief } from '../spec/brief.js';
import type { JobSpec } from '../spec/schema.js';
import { oneLine } from '../spec/bounds.js';
import type { SupervisedData } from '../spec/data.js';
import { temporaryJobHome } from './job-env.js';
import { bridgePython } from './envs/gym-bridge.js';

const PROJECT_DIR = resolve(fileURLToPath(new URL('../../..', import.meta.url)));

/** A count of work in cost.json: a finite number >= 0, else the job fails naming the field. */
function workCount(cost: Record<string, unknown>, field: 'envSteps' | 'examples' | 'cpuSeconds'): number {
  const raw = cost[field] ?? 0;
  const n = typeof raw === 'number' ? raw : Number.NaN;
  if (!Number.isFinite(n) || n < 0) {
    const shown = typeof raw === 'string' ? JSON.stringify(raw.slice(0, 40)) : typeof raw === 'number' ? String(raw) : typeof raw;
    throw new Error(`trainer: cost.json ${field} must be a finite number >= 0, got ${shown}`);
  }
  return n;
}

/**
 * The program's argv with `node` (the Node running recursive-rl), `python` (RRL_PYTHON, else the
 * repository's .venv/bin/python) and paths relative to the recursive-rl folder resolved.
 */
export function resolveCommand(argv: string[]): string[] {
  if (!argv.length) throw new Error('trainer.argv: empty; name the program to run');
  return argv.map((a, i) => {
    if (i === 0 && a === 'node') return process.execPath;
    if (i === 0 && a === 'python') return bridgePython();
    if (!isAbsolute(a) && a.includes('/') && existsSync(join(PROJECT_DIR, a))) return join(PROJECT_DIR, a);
    return a;
  });
}

/** What the program reported, checked. */
export interface CommandResult {
  envSteps: number;
  examples: number;
  updates: number;
  stopReason: string;
  trainReturn: number | null;
  wallSeconds: number;
  cpuSeconds: number;
}

function readJson(dir: string, file: string): Record<string, unknown> {
  const p = join(dir, file);
  if (!existsSync(p)) throw new Error(`the trainer wrote no ${file}`);
  try {
    return JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`the trainer's ${file} is not JSON: ${(err as Error).message}`);
  }
}

/**
 * Runs the command trainer on a validated spec in `dir`; throws with the program's own
 * error (from status.json or its last output lines) when it fails, times out or overspends.
 */
export async function runCommandTrainer(trainer: CommandTrainer, spec: JobSpec, brief: TaskBrief, dir: string, data?: SupervisedData): Promise<CommandResult> {
  const specPath = join(dir, 'spec.json');
  writeFileSync(join(dir, 'brief.json'), JSON.stringify(brief, null, 2));
  if (data) writeFileSync(join(dir, 'data.json'), JSON.stringify(data));
  const [program, ...args] = resolveCommand(trainer.argv);
  const logPath = join(dir, 'trainer.log');
  const log = createWriteStream(logPath);
  const capMs = brief.budget.maxWallSeconds * 1000;
  const t0 = performance.now();
  // A home of its own, removed when it ends: the user's HOME would lead it to the secret file.
  const home = temporaryJobHome('rrl-trainer-home-');
  const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res, rej) => {
    const child = spawn(program, [...args, specPath, dir], {
      cwd: dir,
      env: home.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: capMs,
      killSignal: 'SIGKILL',
    });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.once('error', (err) => rej(new Error(`trainer: cannot run ${program}: ${err.message}`)));
    child.once('close', (c, s) => res({ code: c, signal: s }));
  }).finally(() => home.remove());
  await new Promise<void>((r) => log.end(r));
  const wall = (performance.now() - t0) / 1000;
  const tail = (): string => readFileSync(logPath, 'utf8').trim().split('\n').slice(-3).join(' | ').slice(0, 400);
  if (signal && wall * 1000 >= capMs * 0.99) throw new Error(`trainer: the program exceeded the task's wall-clock cap of ${brief.budget.maxWallSeconds} s`);
  if (code !== 0) {
    const own = existsSync(join(dir, 'status.json')) ? readJson(dir, 'status.json').error : undefined;
    throw new Error(
      `trainer: the program exited with ${signal ?? `code ${code}`}: ` + `${own !== undefined && own !== null ? oneLine(own, 400) : tail() || 'no output'}`,
    );
  }
  const status = readJson(dir, 'status.json');
  if (status.status !== 'succeeded') throw new Error(`trainer: status.json says "${oneLine(status.status, 40)}": ${oneLine(status.error ?? '', 400)}`);
  const cost = readJson(dir, 'cost.json');
  if (cost === null || typeof cost !== 'object' || Array.isArray(cost)) throw new Error('trainer: cost.json must be one JSON object');
  const examples = workCount(cost, 'examples');
  const envSteps = workCount(cost, 'envSteps');
  const cpuSeconds = workCount(cost, 'cpuSeconds');
  const maxExamples = Math.min(spec.budget.examples ?? Infinity, brief.budget.maxExamples ?? Infinity);
  if (examples > maxExamples) throw new Error(`trainer: cost.json reports ${examples} examples, over the cap ${maxExamples}`);
  const maxSteps = Math.min(spec.budget.envSteps ?? Infinity, brief.budget.maxEnvSteps || Infinity);
  if (envSteps > maxSteps) throw new Error(`trainer: cost.json reports ${envSteps} env steps, over the cap ${maxSteps}`);
  if (!existsSync(join(dir, 'curve.jsonl'))) throw new Error('trainer: the program wrote no curve.jsonl');
  return {
    envSteps,
    examples,
    updates: Number(status.updates ?? 0),
    stopReason: String(status.stopReason ?? 'done'),
    trainReturn: typeof status.trainReturn === 'number' ? status.trainReturn : null,
    wallSeconds: wall,
    cpuSeconds,
  };
}
