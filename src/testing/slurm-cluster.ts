/**
 * A throw-away single-node Slurm cluster for tests and benchmarks: munged, slurmctld and
 * slurmd (and optionally slurmrestd) from the system's packages, each with its own
 * configuration, sockets, ports and state under a temporary directory, so it never
 * touches /etc/slurm or a cluster already running on the machine. `stop()` ends every
 * daemon it started and removes the directory.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

/** The programs a cluster needs; the tests skip (loudly) when one is missing. */
export const SLURM_BINARIES = ['munged', 'slurmctld', 'slurmd', 'sbatch', 'squeue', 'scontrol', 'scancel', 'sinfo'] as const;

/** Where the daemons live on Debian (sbin is not always on a non-root PATH). */
const SEARCH_PATH = ['/usr/sbin', '/usr/bin', '/sbin', '/bin', '/usr/local/sbin', '/usr/local/bin'];

/** Full path of a program, or null when it is not installed. */
export function findBinary(name: string): string | null {
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), ...SEARCH_PATH];
  for (const d of dirs) if (existsSync(join(d, name))) return join(d, name);
  return null;
}

/** Why a cluster cannot start here (missing programs, not root), or null when it can. */
export function clusterUnavailable(options: { rest?: boolean } = {}): string | null {
  const missing = [...SLURM_BINARIES, ...(options.rest ? ['slurmrestd'] : [])].filter((b) => !findBinary(b));
  if (missing.length) return `Slurm is not installed (missing: ${missing.join(', ')}); install Debian's slurm-wlm, munge and slurmrestd`;
  if (process.getuid?.() !== 0) return 'the test cluster runs slurmctld and slurmd as root; run the tests as root';
  return null;
}

/** Options of a test cluster. */
export interface ClusterOptions {
  /** Also start slurmrestd (as the unprivileged user `restUser`, default `nobody`). */
  rest?: boolean;
  restUser?: string;
  /** Memory each allocated CPU gets by default (MB), so that jobs share the node. */
  defMemPerCpu?: number;
  /** Extra slurm.conf lines. */
  extraConf?: string[];
}

/** A running single-node cluster: the environment its clients need and its controls. */
export interface SlurmCluster {
  dir: string;
  /** The environment for Slurm clients (SLURM_CONF); merge into child processes' env. */
  env: Record<string, string>;
  node: string;
  partition: string;
  /** The job-completion log (accounting is off). */
  jobCompLog: string;
  /** slurmrestd's URL when started with `rest`. */
  restUrl?: string;
  /** Runs a Slurm client with the cluster's configuration; returns stdout. */
  run(program: string, args: string[]): string;
  /** Kills slurmd (SIGKILL), as a crashed node would. */
  killSlurmd(): Promise<void>;
  /** Starts slurmd again and returns the node to service. */
  restartSlurmd(): Promise<void>;
  /** Waits until the node is idle or mixed (ready for jobs). */
  waitReady(timeoutMs?: number): Promise<void>;
  /** Cancels every job, stops every daemon and removes the directory. */
  stop(): Promise<void>;
}

/** The OpenAPI plugins of slurmrestd that do not need accounting (slurmdbd). */
const REST_PLUGINS = 'openapi/v0.0.36,openapi/v0.0.37,openapi/v0.0.38';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A TCP port that was free a moment ago. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** The node's hardware line as slurmd reports it (`slurmd -C`), so the node is not drained. */
function nodeHardware(slurmd: string): { name: string; line: string } {
  const out = execFileSync(slurmd, ['-C'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const first = out.split('\n').find((l) => l.startsWith('NodeName='));
  if (!first) throw new Error(`slurmd -C printed no NodeName line: ${out.slice(0, 200)}`);
  const name = /NodeName=(\S+)/.exec(first)![1];
  // Leave a margin of memory so that the node is not drained for "Low RealMemory".
  const line = first.replace(/RealMemory=(\d+)/, (_, m: string) => `RealMemory=${Math.floor(Number(m) * 0.9)}`);
  return { name, line };
}

/**
 * Starts a single-node cluster under a new temporary directory and waits until its node
 * takes jobs. Throws with the daemons' logs when it does not come up.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<SlurmCluster> {
  const why = clusterUnavailable(options);
  if (why) throw new Error(why);
  const bin = (n: string): string => findBinary(n)!;
  const dir = mkdtempSync(join(tmpdir(), 'rrl-slurm-'));
  chmodSync(dir, 0o755); // slurmrestd runs unprivileged and must read slurm.conf
  const munge = join(dir, 'munge');
  mkdirSync(munge, { mode: 0o755 });
  for (const d of ['state', 'spool', 'log']) mkdirSync(join(dir, d), { mode: 0o755 });
  const keyFile = join(munge, 'munge.key');
  writeFileSync(keyFile, randomBytes(1024), { mode: 0o400 });
  const socket = join(munge, 'munge.socket');
  const jwtKey = join(dir, 'state', 'jwt.key');
  writeFileSync(jwtKey, randomBytes(32), { mode: 0o600 });
  const [ctldPort, dPort, restPort] = [await freePort(), await freePort(), await freePort()];
  const slurmd = bin('slurmd');
  const hw = nodeHardware(slurmd);
  const host = hostname().split('.')[0];
  const partition = 'rrl';
  const jobCompLog = join(dir, 'log', 'jobcomp.log');
  const conf = [
    `ClusterName=rrl${randomBytes(3).toString('hex')}`,
    `SlurmctldHost=${host}(127.0.0.1)`,
    `SlurmctldPort=${ctldPort}`,
    `SlurmdPort=${dPort}`,
    'SlurmUser=root',
    'SlurmdUser=root',
    'AuthType=auth/munge',
    'CredType=cred/munge',
    `AuthInfo=socket=${socket}`,
    ...(options.rest ? ['AuthAltTypes=auth/jwt', `AuthAltParameters=jwt_key=${jwtKey}`] : []),
    `StateSaveLocation=${join(dir, 'state')}`,
    `SlurmdSpoolDir=${join(dir, 'spool')}`,
    `SlurmctldPidFile=${join(dir, 'slurmctld.pid')}`,
    `SlurmdPidFile=${join(dir, 'slurmd.pid')}`,
    `SlurmctldLogFile=${join(dir, 'log', 'slurmctld.log')}`,
    `SlurmdLogFile=${join(dir, 'log', 'slurmd.log')}`,
    'ProctrackType=proctrack/linuxproc',
    'TaskPlugin=task/none',
    'SelectType=select/cons_tres',
    'SelectTypeParameters=CR_CPU_Memory',
    `DefMemPerCPU=${options.defMemPerCpu ?? 256}`,
    'JobCompType=jobcomp/filetxt',
    `JobCompLoc=${jobCompLog}`,
    'JobAcctGatherType=jobacct_gather/none',
    'AccountingStorageType=accounting_storage/none',
    'MpiDefault=none',
    'ReturnToService=2',
    'SchedulerParameters=sched_interval=1',
    'MinJobAge=30',
    'KillWait=2',
    'InactiveLimit=0',
    ...(options.extraConf ?? []),
    `${hw.line} NodeAddr=127.0.0.1 State=UNKNOWN`,
    `PartitionName=${partition} Nodes=${hw.name} Default=YES MaxTime=INFINITE State=UP`,
  ];
  const confFile = join(dir, 'slurm.conf');
  writeFileSync(confFile, `${conf.join('\n')}\n`, { mode: 0o644 });
  writeFileSync(join(dir, 'cgroup.conf'), 'CgroupPlugin=cgroup/v1\nCgroupAutomount=no\nIgnoreSystemd=yes\n', { mode: 0o644 });
  const env: Record<string, string> = { SLURM_CONF: confFile };
  const childEnv = { ...process.env, ...env };
  const procs: ChildProcess[] = [];
  const daemon = (program: string, args: string[], extraEnv: Record<string, string> = {}, uid?: number, gid?: number): ChildProcess => {
    const p = spawn(program, args, { env: { ...childEnv, ...extraEnv }, stdio: ['ignore', 'ignore', 'ignore'], uid, gid });
    p.on('error', () => {});
    procs.push(p);
    return p;
  };
  const logs = (): string =>
    ['slurmctld.log', 'slurmd.log', 'slurmrestd.log', 'munged.log']
      .map((f) => join(dir, 'log', f))
      .filter((f) => existsSync(f))
      .map((f) => `--- ${f}\n${readFileSync(f, 'utf8').split('\n').slice(-15).join('\n')}`)
      .join('\n');
  const run = (program: string, args: string[]): string =>
    execFileSync(bin(program), args, { env: childEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });

  let slurmdProc: ChildProcess | null = null;
  const startSlurmd = (): void => {
    slurmdProc = daemon(slurmd, ['-D', '-f', confFile, '-N', hw.name]);
  };
  const stopAll = async (): Promise<void> => {
    try {
      run('scancel', ['--full', `--partition=${partition}`]);
    } catch {
      /* the controller may be down already */
    }
    for (const p of [...procs].reverse()) {
      if (p.exitCode === null && p.signalCode === null) {
        const exited = new Promise((r) => p.once('exit', r));
        p.kill('SIGTERM');
        await Promise.race([exited, sleep(5000)]);
        if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
      }
    }
    // Job steps that outlived their slurmd (after killSlurmd) carry the cluster's SLURM_CONF.
    killStrays(dir);
  };

  try {
    daemon(bin('munged'), [
      '-F',
      '-f',
      `--socket=${socket}`,
      `--key-file=${keyFile}`,
      `--pid-file=${join(munge, 'munged.pid')}`,
      `--seed-file=${join(munge, 'munged.seed')}`,
      `--log-file=${join(dir, 'log', 'munged.log')}`,
    ]);
    for (let i = 0; i < 100 && !existsSync(socket); i++) await sleep(50);
    if (!existsSync(socket)) throw new Error('munged did not create its socket');
    daemon(bin('slurmctld'), ['-D', '-i', '-f', confFile]);
    startSlurmd();
    const cluster: SlurmCluster = {
      dir,
      env,
      node: hw.name,
      partition,
      jobCompLog,
      run,
      async killSlurmd() {
        const p = slurmdProc;
        if (!p || p.exitCode !== null) return;
        const exited = new Promise((r) => p.once('exit', r));
        p.kill('SIGKILL');
        await exited;
      },
      async restartSlurmd() {
        startSlurmd();
        for (let i = 0; i < 100; i++) {
          await sleep(200);
          try {
            run('scontrol', ['update', `nodename=${hw.name}`, 'state=resume']);
          } catch {
            /* not down, or not registered yet */
          }
          const state = nodeState();
          if (/^(idle|mixed|allocated)/.test(state)) return;
        }
        throw new Error(`slurmd did not come back\n${logs()}`);
      },
      async waitReady(timeoutMs = 60_000) {
        const t0 = Date.now();
        let state = '';
        while (Date.now() - t0 < timeoutMs) {
          try {
            state = nodeState();
            if (/^(idle|mixed)/.test(state)) return;
          } catch {
            /* the controller is still starting */
          }
          await sleep(250);
        }
        throw new Error(`the test cluster's node is not ready after ${timeoutMs} ms (state "${state}")\n${logs()}`);
      },
      async stop() {
        await stopAll();
        rmSync(dir, { recursive: true, force: true });
      },
    };
    function nodeState(): string {
      return run('sinfo', ['-h', '-N', '-n', hw.name, '-o', '%T']).trim();
    }
    await cluster.waitReady();
    if (options.rest) {
      const user = options.restUser ?? 'nobody';
      const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
      const restLog = join(dir, 'log', 'slurmrestd.log');
      writeFileSync(restLog, '');
      chmodSync(restLog, 0o666);
      const p = spawn(bin('slurmrestd'), ['-f', confFile, '-a', 'rest_auth/jwt', '-s', REST_PLUGINS, `127.0.0.1:${restPort}`], {
        env: { ...childEnv, SLURM_JWT: 'daemon', SLURMRESTD_SECURITY: 'disable_unshare_files,disable_unshare_sysv' },
        stdio: ['ignore', 'ignore', 'pipe'],
        uid,
        gid,
      });
      p.on('error', () => {});
      p.stderr?.on('data', (b: Buffer) => writeFileSync(restLog, b, { flag: 'a' }));
      procs.push(p);
      cluster.restUrl = `http://127.0.0.1:${restPort}`;
      for (let i = 0; i < 100; i++) {
        await sleep(100);
        try {
          const r = await fetch(`${cluster.restUrl}/openapi/v3`);
          if (r.status) break;
        } catch {
          /* not listening yet */
        }
      }
    }
    return cluster;
  } catch (err) {
    const msg = `${(err as Error).message}\n${logs()}`;
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`the test cluster did not start: ${msg}`);
  }
}

/** Kills processes whose environment names this cluster's configuration (orphaned job steps). */
function killStrays(dir: string): void {
  const pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  const marker = `SLURM_CONF=${join(dir, 'slurm.conf')}`;
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8');
      if (env.split('\0').includes(marker)) process.kill(Number(pid), 'SIGKILL');
    } catch {
      /* gone, or not ours to read */
    }
  }
}
