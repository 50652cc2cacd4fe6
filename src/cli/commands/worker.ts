import { InvalidArgumentError, type Command } from 'commander';
import { startWorker } from '../../worker/start.js';
import { createPool } from '../../warehouse/pg.js';
import { RedisUnavailableError } from '../../queue/connection.js';
import { CommandFailed, type CliContext } from '../context.js';
import { SUMMARIES } from './summaries.js';
import { liveJobs } from '../../config/jobs.js';
import type { Logger } from '../../log/logger.js';

interface WorkerFlags {
  readonly concurrency: number;
  readonly stallSeconds?: number;
  readonly metricsPort?: number;
}

/** `adops worker`: process pulls, scheduler ticks and entity syncs until SIGTERM or SIGINT. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('worker')
    .description(SUMMARIES.worker)
    .option('--concurrency <n>', 'pulls processed at once by this process', whole(1, 256), 2)
    .option(
      '--stall-seconds <s>',
      'seconds after which the job of a killed worker is taken up by another (default 30)',
      whole(1, 3600),
    )
    .option(
      '--metrics-port <port>',
      'port of /metrics and /health on ADOPS_METRICS_HOST (default ADOPS_METRICS_PORT; 0 = off); a busy port logs a warning and the worker runs on without them',
      whole(0, 65535),
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
      let worker;
      try {
        worker = await startWorker({
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
        });
      } catch (error) {
        await pool.end();
        if (error instanceof RedisUnavailableError) throw new CommandFailed(error.message, { cause: error });
        throw error;
      }
      const running = worker;
      let stopped = false;
      // Stop on the first signal gracefully, on a second one at once.
      await new Promise<void>((resolve) => {
        let signals = 0;
        const onSignal = (signal: NodeJS.Signals) => {
          signals++;
          logger.info({ signal }, signals === 1 ? 'stopping gracefully' : 'stopping now');
          if (signals === 1)
            exitBy(config.queue.shutdownTimeoutSeconds * 1000 + LAST_RESORT_MS, () => stopped, logger);
          const timeout = signals === 1 ? undefined : 0;
          void running.close(timeout).then(resolve, resolve);
        };
        process.on('SIGTERM', onSignal);
        process.on('SIGINT', onSignal);
      });
      stopped = true;
      await pool.end();
    });
}

/** Time a stop may take past its deadline: the abort of running requests (5 s) and the closes. */
const LAST_RESORT_MS = 10_000;

/**
 * The last resort of a stop: a process still alive `ms` after the signal exits, so `docker stop`
 * and deploys never wait for SIGKILL whatever a library left behind (the closes themselves end
 * every connection and timer; this timer, unreferenced, never keeps the process alive).
 */
function exitBy(ms: number, stopped: () => boolean, logger: Logger): void {
  setTimeout(() => {
    logger.warn(
      { stopped: stopped() },
      `the worker process was still running ${Math.round(ms / 1000)} s after the stop signal: exiting now`,
    );
    process.exit(stopped() ? 0 : 1);
  }, ms).unref();
}

function whole(min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    return Number(value);
  };
}
