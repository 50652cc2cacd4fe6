// `adops worker` in-process: BullMQ workers for pulls, scheduler ticks and catalogue syncs, with
// metrics, a health check and a graceful close. Stateless: run as many as the API allows.
import { UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import type { Config } from '../config/env.js';
import type { JobSet } from '../config/jobs.js';
import type { Logger } from '../log/logger.js';
import { BACKOFF_TYPE, DEFAULT_BACKOFF, retryDelayMs, type BackoffPolicy } from './backoff.js';
import { closeConnection, workerConnection } from './connection.js';
import { createWorkerApi, pullDeps, type ReportFetcher } from './io.js';
import { runEntitySync } from '../entities/sync.js';
import { loadStates } from './load-states.js';
import { classifyPullError } from './errors.js';
import { createWorkerMetrics, type WorkerMetrics } from './metrics.js';
import { ENTITY_QUEUE, REPORT_QUEUE, TICK_QUEUE } from './names.js';
import { asPullData, type PullJobData, type TickJobData } from './payload.js';
import { runPull, type PullDeps } from './pull.js';
import { openQueues, type Queues } from './queues.js';
import { createRequestLimiter, limiterKey } from './ratelimit.js';
import { assessHealth, startMetricsServer, type MetricsServer } from './server.js';
import { DEFAULT_GAP_CAP, runTick } from './tick.js';

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
   * for running ones; after that they are abandoned to the stall check, which hands them to
   * another worker. Then closes everything this worker opened.
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
  // The status of each path's previous attempt, to label retries by what caused them.
  const previousStatus = new Map<string, string>();
  const api =
    deps.fetcher === undefined
      ? createWorkerApi(config, logger, {
          beforeRequest: async () => {
            await limiter.acquire();
          },
          onAttempt: ({ status, attempt, path }) => {
            const label = status === undefined ? 'error' : String(status);
            metrics.apiRequests.inc({ status: label });
            if (attempt > 1) metrics.apiRetries.inc({ status: previousStatus.get(path) ?? 'unknown' });
            if (status !== undefined && status < 300) previousStatus.delete(path);
            else previousStatus.set(path, label);
          },
        })
      : undefined;
  const fetcher: ReportFetcher = deps.fetcher ?? (api as { fetcher: ReportFetcher }).fetcher;
  // Aborted when a shutdown's deadline passes: running requests end at once and their pulls go
  // back to the queue for another worker, instead of holding the process until their timeouts.
  const shutdown = new AbortController();
  const io: PullDeps = pullDeps(reports, fetcher, deps.pool, config.schema, shutdown.signal);
  const policy = deps.backoff ?? DEFAULT_BACKOFF;
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
    async (job: Job<PullJobData, unknown, string>, token?: string) => {
      touch();
      const data = asPullData(job.data);
      if (data === undefined)
        throw new UnrecoverableError(`job ${job.id} has no report and period: ${JSON.stringify(job.data)}`);
      const log = logger.child({
        jobId: job.id,
        report: data.report,
        period: `${data.periodStart}..${data.periodEnd}`,
      });
      const started = performance.now();
      const outcome = await runPull(io, data, job.id, log);
      const report = data.report;
      if (outcome.ok) {
        const { loaded, fetched } = outcome;
        metrics.pulls.inc({ report, outcome: loaded.status });
        metrics.rowsLoaded.inc({ report }, loaded.status === 'loaded' ? loaded.rows : 0);
        metrics.fetchSeconds.observe({ report }, fetched.durationMs / 1000);
        metrics.loadSeconds.observe({ report }, loaded.loadMs / 1000);
        metrics.pullSeconds.observe({ report }, (performance.now() - started) / 1000);
        log.info(
          { loadId: loaded.loadId, status: loaded.status, rows: loaded.rows, reconciled: loaded.reconciled },
          'pull loaded',
        );
        touch();
        return {
          loadId: loaded.loadId,
          status: loaded.status,
          rows: loaded.rows,
          reconciled: loaded.reconciled,
        };
      }
      const { failure } = outcome;
      if (failure.kind === 'rate-limited') {
        metrics.pulls.inc({ report, outcome: 'rate_limited' });
        log.warn({ retryAfterMs: failure.retryAfterMs }, 'API rate limit: pausing the pull queue');
        // Pauses every worker of the queue; the job goes back to wait without spending an attempt.
        await queues.pulls.rateLimit(Math.max(1, failure.retryAfterMs));
        throw Worker.RateLimitError();
      }
      if (failure.kind === 'aborted') {
        log.warn('pull cut short by shutdown: back to the queue, no attempt spent');
        await job.moveToWait(token);
        throw new WaitingError();
      }
      const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (failure.kind === 'fatal' || last) {
        metrics.pulls.inc({ report, outcome: 'failed' });
        log.error({ reason: failure.reason, attempt: job.attemptsMade + 1 }, 'pull failed');
        if (failure.kind === 'fatal') throw new UnrecoverableError(failure.reason);
        throw new Error(failure.reason);
      }
      metrics.pulls.inc({ report, outcome: 'retry' });
      log.warn({ reason: failure.reason, attempt: job.attemptsMade + 1 }, 'pull failed; it will be retried');
      throw new PullRetry(failure.reason, retryAfterOf(outcome.error));
    },
    {
      ...common,
      concurrency: deps.concurrency ?? 2,
      // BullMQ honours queue.rateLimit() (our 429 pause) only on workers with a limiter. Pulls per
      // second can never exceed requests per second, so this cap never binds before the request
      // limit (ratelimit.ts) does.
      limiter: { max: config.queue.rateLimitPerSecond, duration: 1_000 },
      settings: {
        backoffStrategy: (attemptsMade: number, type?: string, error?: Error) =>
          type === BACKOFF_TYPE
            ? retryDelayMs(attemptsMade, policy, Math.random, (error as PullRetry | undefined)?.retryAfterMs)
            : retryDelayMs(attemptsMade, policy),
      },
    },
  );

  const tickWorker = new Worker<TickJobData, unknown, string>(
    TICK_QUEUE,
    async (job) => {
      touch();
      const result = await runTick(
        {
          reports: new Map(reports.map((r) => [r.name, r])),
          pulls: queues.pulls,
          states: (report, from, to) => loadStates(deps.pool, config.schema, report, from, to),
          healDays: config.healDays,
          gapCap: deps.gapCap ?? DEFAULT_GAP_CAP,
        },
        job,
      );
      logger.info(
        {
          report: result.report,
          scheduledFor: result.scheduledFor,
          window: result.window.length,
          gaps: result.gaps.length,
          added: result.added,
        },
        'scheduler tick enqueued pulls',
      );
      return { ...result, window: result.window.length, gaps: result.gaps.length };
    },
    { ...common, concurrency: 1 },
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
      : new Worker(
          ENTITY_QUEUE,
          async () => {
            touch();
            try {
              return await entitySync();
            } catch (error) {
              // Same allowlist as pulls: a 401 or a bad catalogue is not retried.
              const failure = classifyPullError(error);
              if (failure.kind === 'rate-limited') {
                await queues.syncs.rateLimit(Math.max(1, failure.retryAfterMs));
                throw Worker.RateLimitError();
              }
              logger.error({ reason: failure.reason }, 'entity sync failed');
              if (failure.kind === 'fatal') throw new UnrecoverableError(failure.reason);
              throw error;
            } finally {
              touch();
            }
          },
          // A limiter that never binds: it only makes BullMQ honour the 429 pause above.
          { ...common, concurrency: 1, limiter: { max: 1_000, duration: 1_000 } },
        );

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
    // A second call with a shorter deadline (a second SIGTERM) cuts the wait short.
    if (closing !== undefined) {
      if (timeoutMs === 0) giveUp?.();
      return closing;
    }
    closing = (async () => {
      logger.info({ timeoutMs }, 'worker stopping: no new jobs; waiting for running ones');
      const graceful = Promise.all(workers.map((w) => w.close()));
      const finished = await Promise.race([
        graceful.then(() => true),
        new Promise<false>((r) => {
          giveUp = () => r(false);
          setTimeout(giveUp, timeoutMs).unref();
        }),
      ]);
      let drained = finished;
      if (!finished) {
        logger.warn('shutdown deadline: aborting running API requests; their pulls go back to the queue');
        shutdown.abort();
        drained = await Promise.race([
          graceful.then(() => true),
          new Promise<false>((r) => setTimeout(() => r(false), 5_000).unref()),
        ]);
      }
      if (!drained) {
        logger.warn('running jobs still busy: abandoning them to the stall check of other workers');
        await Promise.race([
          Promise.allSettled(workers.map((w) => w.close(true))),
          new Promise((r) => setTimeout(r, 5_000).unref()),
        ]);
      }
      // Each step is bounded: with Redis or the API unreachable, a close must still end.
      const bounded = (p: Promise<unknown> | undefined) =>
        Promise.race([
          Promise.resolve(p).catch(() => undefined),
          new Promise((r) => setTimeout(r, 5_000).unref()),
        ]);
      await bounded(server?.close());
      await bounded(queues.close());
      await bounded(fetcher.close?.());
      if (deps.connection === undefined) await closeConnection(redis);
      logger.info({ graceful: finished }, 'worker stopped');
    })();
    return closing;
  };
  return { metrics, metricsPort: server?.port, close };
}

/** A retryable pull failure; carries the API's Retry-After into the backoff strategy. */
class PullRetry extends Error {
  override readonly name = 'PullRetry';
  constructor(
    message: string,
    readonly retryAfterMs: number | undefined,
  ) {
    super(message);
  }
}

function retryAfterOf(error: unknown): number | undefined {
  const ms = (error as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof ms === 'number' ? ms : undefined;
}
