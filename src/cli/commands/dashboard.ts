import { InvalidArgumentError, type Command } from 'commander';
import { isLoopback } from '../../observe/dashboard.js';
import { DashboardError } from '../../observe/dashboard.js';
import { startDashboard } from '../../observe/dashboard.js';
import { RedisUnavailableError } from '../../queue/connection.js';
import { CommandFailed, UsageError, type CliContext } from '../context.js';
import { SUMMARIES } from './summaries.js';

/** Port used when --port is not given. */
export const DEFAULT_DASHBOARD_PORT = 3000;
/** Time allowed for closing the server and Redis after a signal before exiting anyway. */
const CLOSE_TIMEOUT_MS = 10_000;

interface DashboardFlags {
  readonly port: number;
  readonly host: string;
  readonly allowedHost?: readonly string[];
  readonly allowWrites?: true;
}

/** `adops dashboard`: Bull Board over the queues, read-only unless --allow-writes. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('dashboard')
    .summary('show the BullMQ queues in a web page (Bull Board), read-only unless --allow-writes')
    .description(SUMMARIES.dashboard)
    .option('--port <port>', 'TCP port to listen on (0 picks a free one)', parsePort, DEFAULT_DASHBOARD_PORT)
    .option('--host <address>', 'address to listen on; 0.0.0.0 exposes the page to the network', '127.0.0.1')
    .option(
      '--allowed-host <name>',
      'a host name the page is opened by besides its address and localhost (a DNS name, a reverse proxy); repeatable',
      collectHost,
    )
    .option('--allow-writes', 'enable retry, clean, pause, remove and add actions (read-only without it)')
    .addHelpText(
      'after',
      [
        '',
        'Shows the queues report-pulls, entity-sync and report-ticks of REDIS_URL (or REDIS_SENTINELS,',
        "REDIS_CLUSTER_NODES) under the BullMQ prefix ADOPS_QUEUE_PREFIX (use the workers' values).",
        'The page has no login: keep it on 127.0.0.1 (reach it with ssh -L) or behind an',
        'authenticating proxy, above all with --allow-writes. Requests naming another Host (a',
        'DNS-rebinding page) are refused, and so are writes from another site: see docs/dashboard.md.',
      ].join('\n'),
    )
    .action((flags: DashboardFlags) => runDashboard(ctx, flags));
}

async function runDashboard(ctx: CliContext, flags: DashboardFlags): Promise<void> {
  const config = ctx.config();
  const logger = ctx.logger();
  let dashboard;
  try {
    dashboard = await startDashboard({
      redis: config.redis,
      prefix: config.queue.prefix,
      port: flags.port,
      host: flags.host,
      allowedHosts: flags.allowedHost ?? [],
      readOnly: flags.allowWrites !== true,
      logger,
    });
  } catch (error) {
    if (error instanceof DashboardError) throw new UsageError(error.message, { cause: error });
    if (error instanceof RedisUnavailableError) throw new CommandFailed(error.message, { cause: error });
    throw error;
  }
  ctx.stdout.write(`${dashboard.url}\n`);
  if (flags.allowWrites === true && !isLoopback(flags.host)) {
    logger.warn({ host: flags.host }, 'actions are enabled on a page anyone on the network can open');
  }
  logger.info(
    { url: dashboard.url, readOnly: flags.allowWrites !== true, prefix: config.queue.prefix },
    'dashboard up',
  );

  const signal = await untilSignal();
  logger.info({ signal }, 'closing the dashboard');
  const timeout = new Promise<'timeout'>((resolve) =>
    setTimeout(resolve, CLOSE_TIMEOUT_MS, 'timeout').unref(),
  );
  if ((await Promise.race([dashboard.close().then(() => 'closed' as const), timeout])) === 'timeout') {
    throw new CommandFailed(`the dashboard did not close within ${CLOSE_TIMEOUT_MS / 1000}s after ${signal}`);
  }
}

/** Resolves with the first SIGINT or SIGTERM, and stops listening for the other. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/** Adds one --allowed-host to those before it: a host name, as a browser's address bar has it. */
function collectHost(value: string, previous: readonly string[] = []): string[] {
  if (!/^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?\.?$/.test(value))
    throw new InvalidArgumentError('expected a host name without port or scheme, e.g. dash.example.com');
  return [...previous, value];
}

function parsePort(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65_535) {
    throw new InvalidArgumentError('expected a whole number from 0 to 65535 (0 picks a free port)');
  }
  return Number(value);
}
