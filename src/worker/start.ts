// `adops worker` in-process: the shared runtime, each account's API client and limiter, one BullMQ
// worker per job kind, metrics and health. Stateless: run as many as the API allows.
import type { Pool } from 'pg';
import {
  type AccountConfig,
  type Config,
  accountConfig,
  requireApiKey,
  requireBaseUrl,
  secretsOf,
} from '../platform/config/env.js';
import { createApiClientFromConfig, type ApiClientOptions } from '../api/client.js';
import { BODY_MB } from '../api/body.js';
import { type JobSet, fixedJobs, reportLookup, type LiveJobs } from '../platform/config/jobs.js';
import type { Logger } from '../platform/log/logger.js';
import {
  assessHealth,
  startingHealth,
  tryStartMetricsServer,
  type Health,
  type MetricsServer,
} from './health-server.js';
import {
  createWorkerMetrics,
  metricsObserver,
  type WorkerMetrics,
  readFreshness,
  registerPacingGauge,
  registerReportGauges,
} from './metrics.js';
import { JOB_BACKOFF, WEBHOOK_BACKOFF, type BackoffPolicy } from '../platform/retry/classify.js';
import type { RedisClient } from '../platform/queue/connection.js';
import type { AnyWorker } from '../platform/queue/backend.js';
import { jobCounts } from '../platform/queue/jobs.js';
import type { Queues } from '../platform/queue/queues.js';
import { DEFAULT_GAP_CAP } from '../schedule/scheduler.js';
import { campaignsBehind } from '../schema/pacing.js';
import { NO_WEBHOOKS, webhookNotifier } from '../webhooks/events.js';
import type { FetcherFor, ReportFetcher } from '../pull/run.js';
import { startPullWorker, type PullAccount, type WorkerObserver } from './pull-worker.js';
import {
  openRuntime,
  type StallOptions,
  type WorkerRuntime,
  stopWorkers,
  within,
  createAccountGuard,
  type AccountGuard,
  pauseLogger,
} from './runtime.js';
import { defaultEntitySync, startSyncWorker, type EntitySync } from './sync-worker.js';
import { startTickWorker } from './tick-worker.js';
import { FRESHNESS_EVERY_MS, startWebhookWorker } from './webhook-worker.js';
import { limiterKey, type RequestLimiter } from '../limits/limiter.js';
import { DEFAULT_ACCOUNT, type Account } from '../platform/config/accounts.js';

export interface WorkerDeps {
  readonly config: Config;
  readonly jobs: JobSet;
  /** The definitions as they change while the worker runs (`adops worker` follows its folder); default `jobs`. */
  readonly liveJobs?: LiveJobs;
  readonly pool: Pool;
  readonly logger: Logger;
  readonly concurrency?: number; // Pulls processed at once by this process (default 2).
  /** On Redis, a connection to share (worker-style, maxRetriesPerRequest null); the caller closes it. */
  readonly connection?: RedisClient;
  /** The API client to use instead of one built from config (tests, the demo's emulator). */
  readonly fetcher?: ReportFetcher;
  readonly stall?: StallOptions;
  /** Metrics and health server; default: config.metricsPort, off when 0. */
  readonly metrics?: { port: number; host?: string } | false;
  readonly gapCap?: number; // Gap repairs one scheduler tick enqueues at most (default 60).
  readonly now?: () => Date; // The clock of pulls and ticks: which period is today (tests fix it).
  readonly backoff?: BackoffPolicy;
  /** Health turns 503 when jobs wait but none started or finished for this long (default 5 min). */
  readonly stuckAfterMs?: number;
  /** Runs ENTITY_QUEUE syncs (default runEntitySync); with an injected `fetcher` and none, syncs are not consumed. */
  readonly entitySync?: EntitySync;
  /** Webhook delivery and freshness evaluation, when config.webhook is set (tests shorten them). */
  readonly webhooks?: {
    readonly backoff?: BackoffPolicy;
    readonly freshnessEveryMs?: number;
    readonly timeoutMs?: number;
  };
}

export interface RunningWorker {
  readonly metrics: WorkerMetrics;
  readonly metricsPort: number | undefined;
  /** Drains for up to `timeoutMs` (default config), aborts requests, closes all; a second call with 0 cuts it short. */
  close(timeoutMs?: number): Promise<void>;
}

/** Starts the workers of one process. Resolves once they are connected and consuming. */
export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  // The settings first: a missing one is told at once, not after a wait for the queue's store.
  if (deps.fetcher === undefined)
    for (const account of deps.config.accounts) {
      requireBaseUrl(accountConfig(deps.config, account));
      requireApiKey(accountConfig(deps.config, account));
    }
  // /metrics and /health answer from the start: 503 "starting" while the queue's store is awaited.
  const early = await serveEarly(deps);
  let rt: WorkerRuntime;
  try {
    rt = await openRuntime({ ...deps, onConnectError: (error) => early.connecting(error) });
  } catch (error) {
    await within(early.server?.close() ?? Promise.resolve(), 5_000);
    throw error;
  }
  const opened: Array<() => Promise<unknown>> = [() => early.server?.close() ?? Promise.resolve()];
  try {
    return await startOn(rt, deps, opened, early);
  } catch (error) {
    // Close what opened, or it would keep reconnecting, and the process alive, after the error is printed.
    for (const close of opened.reverse()) await within(close(), 5_000);
    await rt.close();
    throw error;
  }
}

/** The workers on an open runtime; each part that needs closing is pushed onto `opened` as it opens. */
async function startOn(
  rt: WorkerRuntime,
  deps: WorkerDeps,
  opened: Array<() => Promise<unknown>>,
  early: EarlyServer,
): Promise<RunningWorker> {
  const { config, logger } = deps;
  const { metrics, server } = early;
  early.queues = rt.queues;
  const definitions = deps.liveJobs ?? fixedJobs(deps.jobs);
  const reports = reportLookup(definitions);
  registerReportGauges(metrics.registry, () =>
    readFreshness(rt.wh, definitions.current(), config.healDays, new Date(), config.accounts),
  );
  registerPacingGauge(metrics.registry, () => campaignsBehind(rt.wh));
  const observer = metricsObserver(metrics);
  const concurrency = deps.concurrency ?? 2;
  // Each account's own API client and limiter (one account: the runtime's limiter, as before).
  const accounts = deps.fetcher === undefined ? openWorkerAccounts(rt, observer, concurrency) : undefined;
  if (accounts !== undefined) opened.push(() => accounts.close());
  const fetcher: ReportFetcher | FetcherFor = deps.fetcher ?? accounts?.fetcherFor ?? (() => undefined);
  const clock = deps.now === undefined ? {} : { now: deps.now };
  const isolation =
    accounts !== undefined && config.accounts.length > 1
      ? { guard: accounts.guard, accounts: accounts.accounts, accountsFile: config.accountsFile }
      : undefined;
  const catalogue =
    deps.entitySync !== undefined
      ? { sync: deps.entitySync, close: async () => undefined }
      : accounts !== undefined
        ? defaultEntitySync(rt, observer, accounts.accounts)
        : undefined;
  if (catalogue !== undefined) opened.push(() => catalogue.close());
  const webhook = rt.config.webhook;
  const webhooks =
    webhook === undefined
      ? undefined
      : await startWebhookWorker(rt, {
          webhook,
          definitions: () => definitions.current(),
          backoff: deps.webhooks?.backoff ?? WEBHOOK_BACKOFF,
          freshnessEveryMs: deps.webhooks?.freshnessEveryMs ?? FRESHNESS_EVERY_MS,
          ...(deps.webhooks?.timeoutMs === undefined ? {} : { timeoutMs: deps.webhooks.timeoutMs }),
        });
  if (webhooks !== undefined)
    opened.push(
      () => webhooks.worker.close(true),
      () => webhooks.closeAgent(),
    );
  const workers: AnyWorker[] = [
    startPullWorker(rt, {
      reports,
      fetcher,
      concurrency,
      ...(isolation === undefined ? {} : { isolation }),
      backoff: deps.backoff ?? JOB_BACKOFF,
      observer,
      notify: webhooks === undefined ? NO_WEBHOOKS : webhookNotifier(rt.queues.webhooks, logger),
      ...clock,
    }),
    startTickWorker(rt, { reports, gapCap: deps.gapCap ?? DEFAULT_GAP_CAP, ...clock }),
    ...(catalogue === undefined ? [] : [startSyncWorker(rt, catalogue.sync)]),
    ...(webhooks === undefined ? [] : [webhooks.worker]),
  ];
  opened.push(() => Promise.all(workers.map((w) => w.close(true))));
  await watch(rt, workers);
  early.health = workerHealth(rt, workers, deps);
  logger.info({ concurrency, prefix: config.queue.prefix, metricsPort: server?.port }, 'worker started');
  const closeAll = closer(rt, workers, [
    () => server?.close() ?? Promise.resolve(),
    // The catalogue's clients before the limiters they share with the pulls.
    () => catalogue?.close() ?? Promise.resolve(),
    () => (accounts !== undefined ? accounts.close() : (deps.fetcher?.close?.() ?? Promise.resolve())),
    () => webhooks?.closeAgent() ?? Promise.resolve(),
  ]);
  return { metrics, metricsPort: server?.port, close: closeAll };
}

/** Logs the workers' trouble, feeds the health check's activity clock, and waits until they consume. */
async function watch(rt: WorkerRuntime, workers: readonly AnyWorker[]): Promise<void> {
  for (const w of workers) {
    w.on('error', (error) =>
      rt.logger.warn({ err: error, queue: w.name }, 'worker error (BullMQ reconnects)'),
    );
    w.on('stalled', (jobId) => rt.logger.warn({ jobId, queue: w.name }, 'job stalled; it is taken up again'));
    w.on('active', rt.touch);
    w.on('drained', rt.touch);
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));
}

/** The metrics of a starting worker and its server; queues (counted by /metrics) and health are set once they exist. */
interface EarlyServer {
  readonly metrics: WorkerMetrics;
  server: MetricsServer | undefined;
  queues: Queues | undefined;
  health: () => Promise<Health>;
  /** A failed connection attempt to the queue's store while starting (/health shows it). */
  connecting(error: Error): void;
}

/** Serves /metrics and /health (503 "starting" until the workers consume) before anything connects. */
async function serveEarly(deps: WorkerDeps): Promise<EarlyServer> {
  const { config } = deps;
  let lastError: string | undefined;
  const early: EarlyServer = {
    metrics: createWorkerMetrics(async () => (early.queues === undefined ? {} : jobCounts(early.queues))),
    server: undefined,
    queues: undefined,
    health: async () => startingHealth(config.queue.backend, lastError),
    connecting: (error) => {
      lastError = error.message;
    },
  };
  const where = deps.metrics ?? (config.metricsPort > 0 ? { port: config.metricsPort } : false);
  if (where === false) return early;
  early.server = await tryStartMetricsServer(
    early.metrics.registry,
    () => early.health(),
    where.port,
    where.host ?? config.metricsHost,
    deps.logger,
  );
  return early;
}

/** /health of a running worker: the queue's store, the workers, and whether jobs wait while none run. */
function workerHealth(
  rt: WorkerRuntime,
  workers: readonly AnyWorker[],
  deps: WorkerDeps,
): () => Promise<Health> {
  const stuckAfterMs = deps.stuckAfterMs ?? 5 * 60_000;
  return async () => {
    const store = rt.backend.status();
    const counts =
      store === 'ready'
        ? await rt.queues.pulls.getJobCounts('waiting', 'active').catch(() => undefined)
        : undefined;
    return assessHealth({
      backend: rt.backend.kind,
      store,
      running: workers.every((w) => w.isRunning()),
      waiting: counts?.waiting,
      active: counts?.active,
      idleMs: rt.idleMs(),
      stuckAfterMs,
    });
  };
}

/** The worker's close: a drain with a deadline, then every part closed, each step bounded. */
function closer(
  rt: WorkerRuntime,
  workers: readonly AnyWorker[],
  parts: ReadonlyArray<() => Promise<unknown>>,
): (timeoutMs?: number) => Promise<void> {
  let closing: Promise<void> | undefined;
  let giveUp: (() => void) | undefined;
  return (timeoutMs = rt.config.queue.shutdownTimeoutSeconds * 1000) => {
    // A second call with deadline 0 (a second SIGTERM) cuts the wait short.
    if (closing !== undefined) {
      if (timeoutMs === 0) giveUp?.();
      return closing;
    }
    closing = (async () => {
      rt.logger.info({ timeoutMs }, 'worker stopping: no new jobs; waiting for running ones');
      const graceful = await stopWorkers(
        workers,
        timeoutMs,
        () => rt.shutdown.abort(),
        rt.logger,
        (g) => (giveUp = g),
      );
      // With Redis or the API unreachable, a close must still end.
      for (const part of parts) await within(part(), 5_000);
      await rt.close();
      rt.logger.info({ graceful }, 'worker stopped');
    })();
    return closing;
  };
}

/** The request limiter of `account`: the runtime's for the default account, else its own key and rate. */
function limiterOf(rt: WorkerRuntime, account: Account, guard: AccountGuard): RequestLimiter {
  if (account.name === DEFAULT_ACCOUNT && account.rateLimitPerSecond === rt.config.queue.rateLimitPerSecond)
    return rt.limiter;
  const logPause = pauseLogger(rt.logger, account.name);
  return rt.openLimiter(limiterKey(rt.config.queue.prefix, account.name), account.rateLimitPerSecond, {
    onError: (error) =>
      rt.logger.warn(
        { err: error, account: account.name },
        'shared rate limit unavailable; request sent anyway',
      ),
    subscribe: true,
    // A 429 met by any process holds this account's pulls here too, outside the worker's slots.
    onPause: (ms) => {
      logPause(ms);
      guard.paused(account.name, ms);
    },
    maxPauseMs: rt.config.http.retryAfterCapMs,
    stop: rt.shutdown.signal,
  });
}

/** An API client and limiter per account, and the guard that holds an account's pulls while paused, down or busy. */
function openWorkerAccounts(rt: WorkerRuntime, observer: WorkerObserver, concurrency: number) {
  const guard = createAccountGuard(rt.config.accounts.length, concurrency);
  const fetchers = new Map<string, ReportFetcher>();
  const accounts = new Map<string, PullAccount>();
  const limiters: RequestLimiter[] = [];
  for (const account of rt.config.accounts) {
    const limiter = limiterOf(rt, account, guard);
    if (limiter !== rt.limiter) limiters.push(limiter);
    const { fetcher } = createWorkerApi(
      accountConfig(rt.config, account),
      rt.logger.child({ account: account.name }),
      {
        beforeRequest: async () => void (await limiter.acquire()),
        onAttempt: (a) => {
          observer.attempt({ status: a.status, attempt: a.attempt, path: a.path });
          // Usage headers saying the budget is spent: this account waits for its window, before any 429.
          if (a.exhaustedForMs === undefined) return;
          guard.paused(account.name, a.exhaustedForMs);
          void limiter.pause(a.exhaustedForMs);
        },
        // Every secret of the worker is redacted from the bodies it stores, not only this account's key.
        secrets: secretsOf(rt.config),
      },
    );
    fetchers.set(account.name, fetcher);
    accounts.set(account.name, { limiter, reports: account.reports });
  }
  return {
    fetcherFor: (name: string) => fetchers.get(name),
    accounts,
    guard,
    close: async () => {
      for (const f of fetchers.values()) await f.close?.();
      for (const l of limiters) await l.close();
    },
  };
}

/** A worker's API client: a 429 throws at once (the worker pauses for Retry-After, no request sleeps); bodies
 * from ADOPS_STREAM_BODY_MB on load as they stream in. `extra`: the rate limit's hooks and `secrets`. */
export function createWorkerApi(
  config: AccountConfig,
  logger: Logger,
  extra: Partial<ApiClientOptions> = {},
) {
  const client = createApiClientFromConfig(config, logger, { on429: 'throw', ...extra });
  const streamFromBytes = config.http.streamBodyMb * BODY_MB;
  const fetcher: ReportFetcher = {
    fetchReport: (query, signal) => client.fetchReport(query, { signal, streamFromBytes }),
    close: () => client.close(),
  };
  return { client, fetcher };
}
