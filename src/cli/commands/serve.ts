/** `rrl serve`: the harness as an HTTP service, where an RL framework posts completions and gets outer rewards. */
import { type Command, InvalidArgumentError } from 'commander';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REWARD_RULES } from '../../outer/reward.js';
import { makeExecutor } from '../../run/config.js';
import { RewardService, type ServeConfig } from '../../serve/service.js';
import { DEFAULT_SERVE_PORT, startServer } from '../../serve/server.js';
import { tokenFromEnv } from '../../serve/auth.js';
import { DOOR_DEFAULTS } from '../../serve/front-door.js';
import { INTAKE_DEFAULTS } from '../../serve/intake.js';
import { KEEPALIVE_SECONDS } from '../../serve/events.js';
import { storedConfig } from '../stored-run.js';
import { useTaskDir } from '../task-dir.js';
import { EXECUTOR_FLAGS, executorConfigFrom } from '../flags/executor.js';
import { int, oneOf, real } from '../flags/parse.js';
import { FAMILY_HELP, MAX_CONNECTIONS_FLAG, REWARD_FLAG, corpusFlag, familyFlags, listenFlags, taskDirFlag } from '../flags/shared.js';
import { registerCorpusSelection } from '../../tasks/corpus/register.js';
import { type FlagValues, addFlags, flagTable } from '../flags/table.js';

/** This package's version (the OpenAPI document's). */
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** `rrl serve`'s flags, in the order of its help (the executor's last). */
const SERVE_FLAGS = flagTable({
  ...listenFlags(DEFAULT_SERVE_PORT),
  run: { flag: '--run <dir>', help: 'run directory (default: runs/serve-<timestamp>)' },
  resume: { flag: '--resume', help: 'continue the serve run in --run: keep its finished jobs, run its unfinished ones again' },
  tokenEnv: { flag: '--token-env <var>', help: 'environment variable holding the bearer token every request must carry' },
  maxQueue: {
    flag: '--max-queue <n>',
    help: 'most jobs waiting or running; a request past it gets 429 with Retry-After',
    parse: int(1, 1_000_000),
    default: 256,
  },
  maxCompletionBytes: {
    flag: '--max-completion-bytes <n>',
    help: 'completion bytes accepted per 10 s, invalid ones included; past it 429 with Retry-After',
    parse: int(1, 2 ** 40),
    default: INTAKE_DEFAULTS.completionBytes,
  },
  maxConnections: MAX_CONNECTIONS_FLAG,
  bodyTimeout: {
    flag: '--body-timeout <s>',
    help: 'seconds a client has to send a whole request (the answer may take longer)',
    parse: int(1, 3600),
    default: DOOR_DEFAULTS.bodyTimeoutMs / 1000,
  },
  keepalive: {
    flag: '--keepalive <s>',
    help: 'seconds between keepalive comments on an event stream (GET /v1/requests/{id}/events)',
    parse: int(1, 3600),
    default: KEEPALIVE_SECONDS,
  },
  reward: REWARD_FLAG,
  costWeight: { flag: '--cost-weight <lambda>', help: 'weight of compute in the cost rule', parse: real(0, 10), default: 0.5 },
  scoreTimeout: {
    flag: '--score-timeout <s>',
    help: "wall-clock limit of one hidden scoring in seconds (default 120); a scoring past it is the harness's failure: its job is unscorable (reward null)",
    parse: real(0.001, 3600),
  },
  cache: {
    flag: '--cache <file>',
    help: "reuse results of identical jobs from this SQLite file (default: the run's own store)",
    negate: 'train every job even when an identical one was recorded',
  },
  taskDir: taskDirFlag(),
  ...familyFlags(
    `${FAMILY_HELP}; served beside the built-in tasks (a held-out family's tasks are split held-out)`,
    'seed of the family draws (the same seed draws the same tasks as `rrl train` and `rrl experiment transfer`)',
  ),
  corpus: corpusFlag("real-table tasks served beside the built-in ones (a validation or held-out package's tasks are split held-out)"),
  ...EXECUTOR_FLAGS,
});

/** `rrl serve`'s action: opens (or resumes) the serve run and serves it until SIGINT or SIGTERM. */
async function serve(o: FlagValues<typeof SERVE_FLAGS>, cmd: Command): Promise<void> {
  const rule = oneOf('--reward', REWARD_RULES, o.reward);
  if (o.resume && !o.run) throw new InvalidArgumentError('--resume needs the run directory: --run DIR --resume');
  const token = tokenFromEnv(o.tokenEnv, o.host);
  await useTaskDir(o.taskDir);
  const dir = resolve(o.run ?? join('runs', `serve-${new Date().toISOString().replace(/[:.]/g, '-')}`));
  if (o.resume && o.family?.length) throw new InvalidArgumentError('--resume serves the family draws stored with the run; give no --family');
  // Family draws: stored with the run; RewardService.open registers them (the stored ones on resume).
  const families = (o.family ?? []).map((d) => ({ ...d, seed: o.familySeed }));
  const log = (m: string): void => void process.stderr.write(`${m}\n`);
  if (o.resume && o.corpus?.length) throw new InvalidArgumentError('--resume serves the corpus tasks stored with the run; give no --corpus');
  const corpus = o.resume ? (storedConfig(dir)?.corpus ?? []) : (o.corpus ?? []);
  // Registered before the run opens: the service lists and pins the tasks registered then.
  if (corpus.length) log(`corpus: ${(await registerCorpusSelection(corpus)).length} tasks registered`);
  let executorConfig = executorConfigFrom(o, cmd);
  const config: ServeConfig | null = o.resume
    ? null
    : {
        mode: 'serve',
        seed: 0,
        reward: { rule, lambda: o.costWeight },
        ...(families.length ? { families } : {}),
        ...(corpus.length ? { corpus } : {}),
        ...(executorConfig ? { executor: executorConfig } : {}),
      };
  if (o.resume) executorConfig = storedConfig(dir)?.executor;
  const executor = makeExecutor(executorConfig, { runDir: dir, workers: o.workers, memoryMb: o.jobMemory });
  let service: RewardService;
  try {
    service = RewardService.open(dir, config, executor, {
      maxQueue: o.maxQueue,
      completionBytes: o.maxCompletionBytes,
      cache: o.cache === false ? null : typeof o.cache === 'string' ? resolve(o.cache) : undefined,
      timeoutMs: o.jobTimeout ? o.jobTimeout * 1000 : undefined,
      scoring: o.scoreTimeout ? { timeoutMs: Math.ceil(o.scoreTimeout * 1000) } : undefined,
      log,
    });
  } catch (err) {
    await executor.close();
    throw err;
  }
  let server;
  try {
    const limits = { maxConnections: o.maxConnections, bodyTimeoutMs: o.bodyTimeout * 1000 };
    server = await startServer(service, { host: o.host, port: o.port, token, version: PACKAGE_VERSION, keepaliveSeconds: o.keepalive, ...limits });
  } catch (err) {
    await service.close();
    await executor.close();
    throw err;
  }
  log(`run directory: ${dir}; executor: ${executor.name}`);
  console.log(`listening on ${server.url}`);
  const running = server;
  await new Promise<void>((done) => {
    const stop = (): void => {
      log(`stopping: unfinished requests stay in the run; continue with \`rrl serve --run ${dir} --resume\``);
      service.stop(); // event streams say `interrupted` before the server closes them
      void running
        .close()
        .then(() => service.close())
        .then(() => executor.close())
        .finally(done);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/** Registers `rrl serve` on `program`. */
export function registerServeCommand(program: Command): void {
  const cmd = program.command('serve').description('the harness as a service: an RL framework posts completions, gets outer rewards (see docs/serve.md)');
  addFlags(cmd, SERVE_FLAGS).action(serve);
}
