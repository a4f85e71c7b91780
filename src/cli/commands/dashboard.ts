/** `rrl dashboard`: a read-only web UI over runs, live while `rrl train` or `rrl serve` writes them. */
import type { Command } from 'commander';
import { tokenFromEnv } from '../../serve/auth.js';
import { RunCatalog } from '../../dashboard/catalog.js';
import { DEFAULT_MAX_STREAMS, startDashboard } from '../../dashboard/server.js';
import { int } from '../flags/parse.js';
import { MAX_CONNECTIONS_FLAG, listenFlags } from '../flags/shared.js';
import { type FlagValues, addFlags, flagTable } from '../flags/table.js';

const DASHBOARD_FLAGS = flagTable({
  ...listenFlags(8378),
  tokenEnv: { flag: '--token-env <var>', help: 'environment variable holding the token every request must carry' },
  maxConnections: MAX_CONNECTIONS_FLAG,
  maxStreams: {
    flag: '--max-streams <n>',
    help: 'most live-update event streams open at once; one past it gets 503',
    parse: int(1, 10_000),
    default: DEFAULT_MAX_STREAMS,
  },
});

/** `rrl dashboard`'s action: serves the runs under `dirs` until SIGINT or SIGTERM. */
async function serveDashboard(dirs: string[], o: FlagValues<typeof DASHBOARD_FLAGS>): Promise<void> {
  const token = tokenFromEnv(o.tokenEnv, o.host);
  const catalog = new RunCatalog(dirs);
  const server = await startDashboard(catalog, { host: o.host, port: o.port, token, maxConnections: o.maxConnections, maxStreams: o.maxStreams });
  process.stderr.write(`${catalog.list().length} run(s) under ${dirs.join(', ')}; read-only\n`);
  console.log(`dashboard on ${server.url}${token ? ' (open it once with ?token=TOKEN)' : ''}`);
  await new Promise<void>((done) => {
    const stop = (): void => void server.close().finally(done);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/** Registers `rrl dashboard` on `program`. */
export function registerDashboardCommand(program: Command): void {
  const cmd = program
    .command('dashboard')
    .argument('[run-or-dir...]', 'run directories, or directories holding runs (searched 3 levels deep)', ['runs'])
    .description('a read-only web UI over runs, live while rrl train or rrl serve writes them (see docs/dashboard.md)');
  addFlags(cmd, DASHBOARD_FLAGS).action(serveDashboard);
}
