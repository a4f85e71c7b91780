/**
 * `npm run bench -- vs-torch`: PPO on CartPole at CleanRL's defaults (4 envs × 128 steps, 4 epochs,
 * 4 minibatches, 64-64 tanh, 100k env steps), the PyTorch CPU reference (a CleanRL-style script,
 * one thread) and this project alternating, 3 runs each with seeds 1–3; prints each run, the
 * medians of env steps per second and their ratio. The reference is `bench/vs-torch/ppo_cartpole.py`
 * (RRL_TORCH_REF may name another folder holding a `ppo_cartpole.py` that prints the same `SUMMARY`
 * line), RRL_TORCH_PYTHON the Python with PyTorch (default `.venv/bin/python` in the repository, then
 * `python3`). Without a Python that imports torch, the project runs alone and the bench says why.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { num, table } from '../src/cli/format.js';
import { runJob } from '../src/inner/train.js';
import { scoreArtifact } from '../src/outer/scoring/hidden-score.js';
import { getPublicTask } from '../src/tasks/briefs.js';
import { cleanRlPpoSpec } from '../src/testing/specs.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const log = (s: string): boolean => process.stderr.write(`${s}\n`);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The reference's folder and a Python that imports torch, or why there is none. */
function findReference(): { dir: string; python: string } | { skip: string } {
  const dir = process.env.RRL_TORCH_REF ?? join(ROOT, 'bench', 'vs-torch');
  if (!existsSync(join(dir, 'ppo_cartpole.py'))) return { skip: `no PyTorch reference: ppo_cartpole.py not found in ${dir} (RRL_TORCH_REF)` };
  const pythons = process.env.RRL_TORCH_PYTHON ? [process.env.RRL_TORCH_PYTHON] : [join(ROOT, '.venv', 'bin', 'python'), 'python3'];
  for (const python of pythons) {
    const r = spawnSync(python, ['-c', 'import torch, numpy; print(torch.__version__)'], { encoding: 'utf8' });
    if (r.status === 0) return { dir, python };
  }
  return { skip: `no PyTorch reference: none of ${pythons.join(', ')} imports torch and numpy (set RRL_TORCH_PYTHON; pip install torch==2.13.0 numpy)` };
}

/** One reference run: its env steps per second and greedy evaluation. */
function runTorch(ref: { dir: string; python: string }, seed: number, steps: number): { sps: number; evalReturn: number } {
  const out = mkdtempSync(join(tmpdir(), 'rrl-torch-'));
  const r = spawnSync(ref.python, ['ppo_cartpole.py', '--seed', String(seed), '--threads', '1', '--total-timesteps', String(steps), '--out-dir', out], {
    cwd: ref.dir,
    encoding: 'utf8',
    timeout: 900_000,
  });
  const line = r.stdout?.split('\n').find((l) => l.startsWith('SUMMARY '));
  if (r.status !== 0 || !line) throw new Error(`reference run failed (exit ${r.status}): ${(r.stderr ?? '').slice(-500)}`);
  const s = JSON.parse(line.slice('SUMMARY '.length)) as { steps_per_s: number; eval_mean_return: number };
  return { sps: s.steps_per_s, evalReturn: s.eval_mean_return };
}

/** One project run: env steps per second of training and the hidden evaluation's score. */
async function runProject(seed: number, steps: number): Promise<{ sps: number; hidden: number }> {
  const { brief } = getPublicTask('cartpole-balance');
  const dir = mkdtempSync(join(tmpdir(), 'rrl-vs-torch-'));
  const a = await runJob(cleanRlPpoSpec('cartpole-balance', steps, seed), brief, { outDir: dir });
  return { sps: a.cost.envSteps / a.cost.wallSeconds, hidden: scoreArtifact('cartpole-balance', dir).raw };
}

/** The side-by-side benchmark. */
export async function vsTorch(): Promise<Record<string, unknown>> {
  const steps = Number(process.env.RRL_VS_TORCH_STEPS ?? 100_000);
  const runs = Number(process.env.RRL_VS_TORCH_RUNS ?? 3);
  const ref = findReference();
  if ('skip' in ref) log(`vs-torch: ${ref.skip}; running the project alone`);
  const rows: { seed: number; torch: { sps: number; evalReturn: number } | null; project: { sps: number; hidden: number } }[] = [];
  for (let seed = 1; seed <= runs; seed++) {
    let torch = null;
    if (!('skip' in ref)) {
      log(`vs-torch: PyTorch reference, seed ${seed}`);
      torch = runTorch(ref, seed, steps);
    }
    log(`vs-torch: recursive-rl, seed ${seed}`);
    const project = await runProject(seed, steps);
    rows.push({ seed, torch, project });
  }
  const projectMedian = median(rows.map((r) => r.project.sps));
  const torchRows = rows.filter((r) => r.torch !== null);
  const torchMedian = torchRows.length ? median(torchRows.map((r) => r.torch!.sps)) : null;
  const ratio = torchMedian ? projectMedian / torchMedian : null;
  console.log(
    table(
      ['seed', 'PyTorch steps/s', 'PyTorch greedy eval', 'recursive-rl steps/s', 'recursive-rl hidden score', 'ratio'],
      [
        ...rows.map((r) => [
          String(r.seed),
          r.torch ? num(r.torch.sps, 0) : 'skipped',
          r.torch ? num(r.torch.evalReturn, 1) : '',
          num(r.project.sps, 0),
          num(r.project.hidden, 1),
          r.torch ? `${num(r.project.sps / r.torch.sps, 2)}×` : '',
        ]),
        ['median', torchMedian ? num(torchMedian, 0) : 'skipped', '', num(projectMedian, 0), '', ratio ? `${num(ratio, 2)}×` : '—'],
      ],
    ),
  );
  return { envSteps: steps, runs: rows, medians: { torch: torchMedian, project: projectMedian }, ratio, skipped: 'skip' in ref ? ref.skip : null, target: 2 };
}
