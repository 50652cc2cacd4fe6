// `adops worker` in-process: BullMQ workers for pulls, scheduler ticks and catalogue syncs, with
// metrics, a health check and a graceful close. Stateless: run as many as the API allows.
import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import type { Config } from '../config/env.js';
import type { JobSet } from '../config/jobs.js';
import { runEntitySync } from '../entities/sync.js';
import type { Logger } from '../log/logger.js';
import { DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.js';
import { closeConnection, workerConnection } from './connection.js';
import { createWorkerApi, pullDeps, type ReportFetcher } from './io.js';
import { loadStates } from './load-states.js';
import { attemptRecorder, createWorkerMetrics, type WorkerMetrics } from './metrics.js';
import { ENTITY_QUEUE, REPORT_QUEUE, TICK_QUEUE } from './names.js';
import type { PullJobData, TickJobData } from './payload.js';
import { pruneRaw } from '../warehouse/raw.js';
import { pullBackoff, pullProcessor, syncProcessor, tickProcessor } from './processors.js';
import type { PullDeps } from './pull.js';
import { openQueues, type Queues } from './queues.js';
import { createRequestLimiter, limiterKey } from './ratelimit.js';
import { assessHealth, startMetricsServer, type MetricsServer } from './server.js';
import { stopWorkers, within } from './shutdown.js';
import { DEFAULT_GAP_CAP, type TickDeps } from './tick.js';

export interface WorkerDeps {
  readonly config: Config;
  readonly jobs: JobSet;
  readonly pool: Pool;
  readonly logger: Logger;
  /** Pulls processed at once by this process (default 2). */
  readonly concurrency?: number;
  /** A Redis connection to share (worker-style, maxRetriesPerRequest null); the caller closes it. */
  readonly connection?: Redis;
  /** The API client to use instead of one built from config (tests, the demo's emulator). */
  readonly fetcher?: ReportFetcher;
  /** Stall detection: a SIGKILLed worker's job is taken up again after about lockDurationMs. */
  readonly stall?: { lockDurationMs?: number; stalledIntervalMs?: number; maxStalledCount?: number };
  /** Metrics and health server; default: config.metricsPort, off when 0. */
  readonly metrics?: { port: number; host?: string } | false;
  /** Gap repairs one scheduler tick enqueues at most (default 60). */
  readonly gapCap?: number;
  readonly backoff?: BackoffPolicy;
  /** Health turns 503 when jobs wait but none started or finished for this long (default 5 min). */
  readonly stuckAfterMs?: number;
  /**
   * Runs a catalogue sync for ENTITY_QUEUE jobs; by default runEntitySync over the worker's API
   * client. With an injected `fetcher` and no entitySync, this worker does not consume syncs.
   */
  readonly entitySync?: () => Promise<unknown>;
}

export interface RunningWorker {
  readonly metrics: WorkerMetrics;
  /** The metrics server's port, when it runs. */
  readonly metricsPort: number | undefined;
  /**
   * Stops taking jobs and waits up to `timeoutMs` (default config.queue.shutdownTimeoutSeconds)
   * for running ones; then aborts their API requests (the pulls go back to the queue), and as a
   * last resort abandons them to the stall check of other workers. Then closes everything this
   * worker opened. A second call with 0 cuts the wait short.
   */
  close(timeoutMs?: number): Promise<void>;
}

/** Starts the workers of one process. Resolves once they are connected and consuming. */
export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const { config, logger } = deps;
  const redis = deps.connection ?? workerConnection(config);
  const queues: Queues = await openQueues(config, redis);
  const reports = deps.jobs.reports;
  const depth = async () => {
    const [pulls, ticks, syncs] = await Promise.all([
      queues.pulls.getJobCounts(),
      queues.ticks.getJobCounts(),
      queues.syncs.getJobCounts(),
    ]);
    return { [REPORT_QUEUE]: pulls, [TICK_QUEUE]: ticks, [ENTITY_QUEUE]: syncs };
  };
  const metrics = createWorkerMetrics(depth);
  const limiter = createRequestLimiter(
    redis,
    limiterKey(config.queue.prefix),
    config.queue.rateLimitPerSecond,
    (error) => logger.warn({ err: error }, 'shared rate limit unavailable; request sent anyway'),
  );
  const api =
    deps.fetcher === undefined
      ? createWorkerApi(config, logger, {
          beforeRequest: async () => {
            await limiter.acquire();
          },
          onAttempt: attemptRecorder(metrics),
        })
      : undefined;
  const fetcher: ReportFetcher = deps.fetcher ?? (api as { fetcher: ReportFetcher }).fetcher;
  // Aborted when a shutdown's deadline passes: running requests end at once and their pulls go
  // back to the queue for another worker, instead of holding the process until their timeouts.
  const shutdown = new AbortController();
  const io: PullDeps = pullDeps(reports, fetcher, deps.pool, config.schema, shutdown.signal);
  let lastActivity = Date.now();
  const touch = () => {
    lastActivity = Date.now();
  };
  const common = {
    connection: redis,
    prefix: config.queue.prefix,
    lockDuration: deps.stall?.lockDurationMs ?? 30_000,
    stalledInterval: deps.stall?.stalledIntervalMs ?? 30_000,
    // A job killed with its worker is retried this many times before it is failed for good.
    maxStalledCount: deps.stall?.maxStalledCount ?? 3,
  };

  const pullWorker = new Worker<PullJobData, unknown, string>(
    REPORT_QUEUE,
    pullProcessor({ io, pulls: queues.pulls, metrics, logger, touch }),
    {
      ...common,
      concurrency: deps.concurrency ?? 2,
      // BullMQ honours queue.rateLimit() (our 429 pause) only on workers with a limiter. Pulls per
      // second can never exceed requests per second, so this cap never binds before the request
      // limit (ratelimit.ts) does.
      limiter: { max: config.queue.rateLimitPerSecond, duration: 1_000 },
      settings: { backoffStrategy: pullBackoff(deps.backoff ?? DEFAULT_BACKOFF) },
    },
  );
  const tickDeps: TickDeps = {
    reports: new Map(reports.map((r) => [r.name, r])),
    pulls: queues.pulls,
    states: (report, from, to) => loadStates(deps.pool, config.schema, report, from, to),
    healDays: config.healDays,
    gapCap: deps.gapCap ?? DEFAULT_GAP_CAP,
  };
  const tickWorker = new Worker<TickJobData, unknown, string>(
    TICK_QUEUE,
    tickProcessor(tickDeps, logger, touch, () => pruneRaw(deps.pool, config.schema, config.rawRetentionDays)),
    {
      ...common,
      concurrency: 1,
    },
  );
  const client = api?.client;
  const entitySync =
    deps.entitySync ??
    (client === undefined
      ? undefined
      : () => runEntitySync({ pool: deps.pool, schema: config.schema, api: client, logger }));
  const syncWorker =
    entitySync === undefined
      ? undefined
      : new Worker(ENTITY_QUEUE, syncProcessor(entitySync, queues.syncs, logger, touch), {
          ...common,
          concurrency: 1,
          // A limiter that never binds: it only makes BullMQ honour a 429 pause.
          limiter: { max: 1_000, duration: 1_000 },
        });

  const workers = [pullWorker, tickWorker, ...(syncWorker ? [syncWorker] : [])];
  for (const w of workers) {
    w.on('error', (error) => logger.warn({ err: error, queue: w.name }, 'worker error (BullMQ reconnects)'));
    w.on('stalled', (jobId) => logger.warn({ jobId, queue: w.name }, 'job stalled; it is taken up again'));
    w.on('active', touch);
    w.on('drained', touch);
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));

  const stuckAfter = deps.stuckAfterMs ?? 5 * 60_000;
  const health = async () => {
    const ready = redis.status === 'ready';
    const counts = ready
      ? await queues.pulls.getJobCounts('waiting', 'active').catch(() => undefined)
      : undefined;
    return assessHealth({
      redis: redis.status,
      running: workers.every((w) => w.isRunning()),
      waiting: counts?.waiting,
      active: counts?.active,
      idleMs: Date.now() - lastActivity,
      stuckAfterMs: stuckAfter,
    });
  };
  const metricsOpt = deps.metrics ?? (config.metricsPort > 0 ? { port: config.metricsPort } : false);
  let server: MetricsServer | undefined;
  try {
    server =
      metricsOpt === false
        ? undefined
        : await startMetricsServer(metrics.registry, health, metricsOpt.port, metricsOpt.host);
  } catch (error) {
    await Promise.allSettled(workers.map((w) => w.close(true)));
    await queues.close();
    if (deps.connection === undefined) await closeConnection(redis);
    throw error;
  }
  logger.info(
    { concurrency: deps.concurrency ?? 2, prefix: config.queue.prefix, metricsPort: server?.port },
    'worker started',
  );

  let closing: Promise<void> | undefined;
  let giveUp: (() => void) | undefined;
  const close = (timeoutMs = config.queue.shutdownTimeoutSeconds * 1000): Promise<void> => {
    // A second call with deadline 0 (a second SIGTERM) cuts the wait short.
    if (closing !== undefined) {
      if (timeoutMs === 0) giveUp?.();
      return closing;
    }
    closing = (async () => {
      logger.info({ timeoutMs }, 'worker stopping: no new jobs; waiting for running ones');
      const graceful = await stopWorkers(
        workers,
        timeoutMs,
        () => shutdown.abort(),
        logger,
        (g) => (giveUp = g),
      );
      // Each step is bounded: with Redis or the API unreachable, a close must still end.
      await within(server?.close() ?? Promise.resolve(), 5_000);
      await within(queues.close(), 5_000);
      await within(fetcher.close?.() ?? Promise.resolve(), 5_000);
      if (deps.connection === undefined) await closeConnection(redis);
      logger.info({ graceful }, 'worker stopped');
    })();
    return closing;
  };
  return { metrics, metricsPort: server?.port, close };
}
