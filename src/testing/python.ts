/**
 * Tests that need the Python side (the Gymnasium bridge, MuJoCo, the PyTorch trainer, pytest).
 * A fresh clone has `python3` but not the repository's virtual environment, so these tests skip
 * there, each file saying so in one line that names the command enabling them
 * (`python/setup-venv.sh`); with `RRL_REQUIRE_PYTHON=1` (CI, .ci/run) a missing Python side
 * fails the file instead.
 */
import { spawn, spawnSync } from 'node:child_process';
import { bridgePython } from '../inner/envs/gym-bridge.js';

const checked = new Map<string, string | null>();

/**
 * Why `python` (default: the bridge's, `RRL_PYTHON` else .venv/bin/python else python3) cannot
 * import every one of `modules`, in one line; null when it can. Asked once per process.
 */
export function pythonMissing(modules: string[] = ['gymnasium'], python = bridgePython()): string | null {
  const key = `${python}\0${modules.join(',')}`;
  if (checked.has(key)) return checked.get(key) ?? null;
  const r = spawnSync(python, ['-c', modules.map((m) => `import ${m}`).join('; ') || 'pass'], { encoding: 'utf8', timeout: 120_000 });
  const last = (r.stderr ?? '').trim().split('\n').pop() ?? '';
  const why = r.error
    ? `cannot run ${python} (${(r.error as NodeJS.ErrnoException).code ?? r.error.message})`
    : r.status !== 0
      ? `${python} cannot import ${modules.join(', ')} (${last || `exit ${r.status}`})`
      : null;
  checked.set(key, why);
  return why;
}

/**
 * The `skip` option for tests of `what` that need `modules` in `python`: false when they can run;
 * otherwise the reason, printed as one loud line naming `python/setup-venv.sh`. With
 * RRL_REQUIRE_PYTHON=1 it throws instead, failing the test file.
 */
export function skipWithoutPython(what: string, modules: string[] = ['gymnasium'], python = bridgePython()): string | false {
  const why = pythonMissing(modules, python);
  if (!why) return false;
  if (process.env.RRL_REQUIRE_PYTHON === '1') throw new Error(`RRL_REQUIRE_PYTHON=1 but ${what} cannot run: ${why}`);
  const reason = `${why}; run python/setup-venv.sh to enable them`;
  process.stderr.write(`!! SKIPPED ${what}: ${reason}\n`);
  return reason;
}

/**
 * Starts `python` with `args` in `cwd` (without writing bytecode); resolves with its exit status and
 * its stdout and stderr together. Killed after `timeoutMs`.
 */
export function startPython(python: string, args: string[], cwd: string, timeoutMs = 900_000): Promise<{ status: number | null; output: string }> {
  return new Promise((done, fail) => {
    const child = spawn(python, args, { cwd, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b));
    child.stderr.on('data', (b: Buffer) => (output += b));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', fail);
    child.once('close', (status) => {
      clearTimeout(timer);
      done({ status, output });
    });
  });
}
