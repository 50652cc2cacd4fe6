// The long-running commands: `adops worker` (pulls, scheduler ticks and entity syncs until a
// signal) and `adops dashboard` (Bull Board over the queues until a signal).
import { InvalidArgumentError, type Command } from 'commander';
import { watchAccountsFile } from '../platform/config/accounts-watch.js';
import { liveJobs } from '../platform/config/jobs.js';
import { isLoopback, startDashboard } from './dashboard.js';
import { RedisUnavailableError } from '../platform/queue/connection.js';
import { createPool } from '../platform/pg/handle.js';
import { within } from '../worker/runtime.js';
import { startWorker } from '../worker/start.js';
import { CommandFailed, intOption, rethrowAs, SUMMARIES, untilSignal, type CliContext } from './context.js';

interface WorkerFlags {
  readonly concurrency: number;
  readonly stallSeconds?: number;
  readonly metricsPort?: number;
}

export function registerWorker(program: Command, ctx: CliContext): void {
  program
    .command('worker')
    .description(SUMMARIES.worker)
    .option('--concurrency <n>', 'pulls processed at once by this process', intOption(1, 256), 2)
    .option(
      '--stall-seconds <s>',
      'seconds after which the job of a killed worker is taken up by another (default 30)',
      intOption(1, 3600),
    )
    .option(
      '--metrics-port <port>',
      'port of /metrics and /health on ADOPS_METRICS_HOST (default ADOPS_METRICS_PORT; 0 = off); a busy port logs a warning and the worker runs on without them',
      intOption(0, 65535),
    )
    .addHelpText(
      'after',
      '\nRun as many workers as the API allows: ADOPS_RATE_LIMIT caps API requests per second across ' +
        'all of them. A second SIGTERM/SIGINT stops at once (running pulls are retried elsewhere). ' +
        'Reads every ADOPS_* variable, DATABASE_URL and REDIS_URL (or REDIS_SENTINELS, REDIS_CLUSTER_NODES).',
    )
    .action(async (flags: WorkerFlags) => {
      const config = ctx.config();
      const jobs = ctx.jobs();
      const logger = ctx.logger();
      const pool = createPool(config, { max: flags.concurrency + 3, logger });
      const stallMs = flags.stallSeconds === undefined ? undefined : flags.stallSeconds * 1000;
      const port = flags.metricsPort ?? config.metricsPort;
      // Accounts are read once: an edit takes a restart (logged); watched here, catching one while starting.
      const unwatch =
        config.accountsFile === undefined
          ? undefined
          : watchAccountsFile(config.accountsFile, () =>
              logger.warn(
                { file: config.accountsFile },
                `ADOPS_ACCOUNTS_FILE changed (${config.accountsFile}): this worker keeps pulling the accounts it ` +
                  'started with; restart every worker to use the new file (an account renamed in it: stop them, ' +
                  'run adops accounts rename OLD NEW, then start them)',
              ),
            );
      const running = await startWorker({
        config,
        jobs,
        // A definition added, changed or deleted in the jobs folder is seen without a restart.
        liveJobs: liveJobs(config.jobsDir, jobs, {
          onChange: (next) =>
            logger.info({ reports: next.reports.map((r) => r.name) }, 'job definitions changed'),
          onInvalid: (error) =>
            logger.warn(`job definitions not reloaded, the previous ones stay in use: ${error.message}`),
        }),
        pool,
        logger,
        concurrency: flags.concurrency,
        metrics: port > 0 ? { port } : false,
        ...(stallMs === undefined
          ? {}
          : {
              stall: { lockDurationMs: stallMs, stalledIntervalMs: Math.max(500, Math.round(stallMs / 2)) },
            }),
      }).catch(async (error: unknown) => {
        unwatch?.();
        await pool.end();
        return rethrowAs([RedisUnavailableError])(error);
      });
      let stopped = false;
      // Stop on the first signal gracefully, on a second one at once.
      await new Promise<void>((resolve) => {
        let signals = 0;
        const onSignal = (signal: NodeJS.Signals) => {
          signals++;
          logger.info({ signal }, signals === 1 ? 'stopping gracefully' : 'stopping now');
          // Last resort: still alive this long after the signal, exit: `docker stop` never waits for SIGKILL.
          const ms = config.queue.shutdownTimeoutSeconds * 1000 + LAST_RESORT_MS;
          if (signals === 1)
            setTimeout(() => {
              logger.warn(
                { stopped },
                `the worker process was still running ${Math.round(ms / 1000)} s after the stop signal: exiting now`,
              );
              process.exit(stopped ? 0 : 1);
            }, ms).unref();
          void running.close(signals === 1 ? undefined : 0).then(resolve, resolve);
        };
        process.on('SIGTERM', onSignal);
        process.on('SIGINT', onSignal);
      });
      stopped = true;
      unwatch?.();
      await pool.end();
    });
}

/** Time a stop may take past its deadline: the abort of running requests (5 s) and the closes. */
const LAST_RESORT_MS = 10_000;

/** Time allowed for closing the server and Redis after a signal before exiting anyway. */
const CLOSE_TIMEOUT_MS = 10_000;

interface DashboardFlags {
  readonly port: number;
  readonly host: string;
  readonly allowedHost?: readonly string[];
  readonly allowWrites?: true;
}

/** `adops dashboard`: Bull Board over the queues, read-only unless --allow-writes. */
export function registerDashboard(program: Command, ctx: CliContext): void {
  program
    .command('dashboard')
    .summary('show the BullMQ queues in a web page (Bull Board), read-only unless --allow-writes')
    .description(SUMMARIES.dashboard)
    .option('--port <port>', 'TCP port to listen on (0 picks a free one)', intOption(0, 65_535), 3000)
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
        'Shows the queues report-pulls, entity-sync and report-ticks: on REDIS_URL (or REDIS_SENTINELS,',
        'REDIS_CLUSTER_NODES) under the BullMQ prefix ADOPS_QUEUE_PREFIX, or with ADOPS_QUEUE=postgres in',
        "DATABASE_URL's database (use the workers' values).",
        'The page has no login: keep it on 127.0.0.1 (reach it with ssh -L) or behind an',
        'authenticating proxy, above all with --allow-writes. Requests naming another Host (a',
        'DNS-rebinding page) are refused, and so are writes from another site: see docs/operations.md.',
      ].join('\n'),
    )
    .action((flags: DashboardFlags) => runDashboard(ctx, flags));
}

async function runDashboard(ctx: CliContext, flags: DashboardFlags): Promise<void> {
  const config = ctx.config();
  const logger = ctx.logger();
  const dashboard = await startDashboard({
    redis: config.redis,
    prefix: config.queue.prefix,
    ...(config.queue.backend === 'postgres'
      ? { postgres: { schema: config.queue.schema, databaseUrl: config.databaseUrl } }
      : {}),
    port: flags.port,
    host: flags.host,
    allowedHosts: flags.allowedHost ?? [],
    readOnly: flags.allowWrites !== true,
    logger,
  }).catch(rethrowAs([RedisUnavailableError]));
  ctx.stdout.write(`${dashboard.url}\n`);
  if (flags.allowWrites === true && !isLoopback(flags.host))
    logger.warn({ host: flags.host }, 'actions are enabled on a page anyone on the network can open');
  logger.info(
    { url: dashboard.url, readOnly: flags.allowWrites !== true, prefix: config.queue.prefix },
    'dashboard up',
  );

  const signal = await untilSignal();
  logger.info({ signal }, 'closing the dashboard');
  const closing = dashboard.close();
  if (!(await within(closing, CLOSE_TIMEOUT_MS)))
    throw new CommandFailed(`the dashboard did not close within ${CLOSE_TIMEOUT_MS / 1000}s after ${signal}`);
  await closing;
}

/** Adds one --allowed-host to those before it: a host name, as a browser's address bar has it. */
function collectHost(value: string, previous: readonly string[] = []): string[] {
  if (!/^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?\.?$/.test(value))
    throw new InvalidArgumentError('expected a host name without port or scheme, e.g. dash.example.com');
  return [...previous, value];
}
