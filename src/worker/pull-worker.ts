// The worker of report pulls: one pull per job, each kind of failure mapped onto BullMQ (retry with
// backoff, fail for good, pause the queue for a 429, or back to wait on shutdown).
import { DelayedError, UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import type { RequestGate } from '../limits/limiter.js';
import { secretsOf } from '../platform/config/env.js';
import type { ReportJob, ReportLookup } from '../platform/config/jobs.js';
import { BACKOFF_TYPE, backoffDelay, type BackoffPolicy } from '../platform/retry/classify.js';
import {
  REPORT_QUEUE,
  asPullData,
  pullAccount,
  pullPeriod,
  type PullJobData,
} from '../platform/queue/jobs.js';
import type { WorkerOf } from '../platform/queue/backend.js';
import { isAccountTrouble, type AccountGuard, type WorkerRuntime } from './runtime.js';
import type { Notify } from '../webhooks/events.js';
import { pullDeps, runPull, type FetcherFor, type PullDeps, type ReportFetcher } from '../pull/run.js';
import type { metricsObserver } from './metrics.js';
import { evolutionHook } from '../evolution/evolution.js';
import { withRedactedErrors } from '../platform/log/redact.js';
import { AdopsError, TransientError } from '../platform/retry/errors.js';
import type { Period } from '../flatten/types.js';
import type { LoadOutcome } from '../pull/load.js';

/** The listener of a worker's events (pulls, API attempts): the metrics, or a test's own. */
export type WorkerObserver = ReturnType<typeof metricsObserver>;

/** The summary a completed pull job returns (its BullMQ returnvalue). */
export type PullResult = Pick<LoadOutcome, 'loadId' | 'status' | 'rows' | 'reconciled'>; // rows: all periods'

export interface PullWorkerOptions {
  /** The definitions as they are when a pull runs (a worker follows its jobs folder). */
  readonly reports: ReportLookup;
  readonly fetcher: ReportFetcher | FetcherFor; // one for every pull, or each account's own
  /** Each account's request limiter (its 429 holds only its own requests) and reports, and the guard that
   * holds a troubled account's pulls out of the slots. Absent: one account, whose 429 pauses the queue. */
  readonly isolation?: PullIsolation;
  readonly concurrency: number; // pulls processed at once by this process
  readonly backoff: BackoffPolicy;
  readonly observer: WorkerObserver;
  /** Hands `period.failed` to the webhooks; returns at once (NO_WEBHOOKS when they are off). */
  readonly notify: Notify;
  readonly now?: () => Date; // see PullDeps
}

/** What the pull worker knows of one account. */
export interface PullAccount {
  readonly limiter: RequestGate; // its shared request limit: a 429 of the account pauses it, and only it
  readonly reports: readonly string[] | undefined; // reports it runs; undefined: all
}

/** The per-account parts of a multi-account pull worker. */
export interface PullIsolation {
  readonly guard: AccountGuard;
  readonly accounts: ReadonlyMap<string, PullAccount>;
  readonly accountsFile?: string | undefined; // ADOPS_ACCOUNTS_FILE, named in a held account's log line
}

export function startPullWorker(rt: WorkerRuntime, o: PullWorkerOptions): WorkerOf<PullJobData> {
  const secrets = secretsOf(rt.config);
  const accounts = o.isolation?.accounts;
  const accountRuns: PullDeps['accountRuns'] = (account, report) => {
    const a = accounts?.get(account);
    if (a === undefined) return 'unknown account';
    return a.reports === undefined || a.reports.includes(report) ? 'yes' : 'not run';
  };
  const io: PullDeps = {
    ...pullDeps(o.reports, o.fetcher, rt.wh, { secrets }, rt.shutdown.signal),
    ...(accounts === undefined ? {} : { accountRuns }),
    ...(o.now === undefined ? {} : { now: o.now }),
  };
  // What follows a load of a report with a building table version: the composition's, not the pull's.
  const afterLoad = evolutionHook(rt.wh, rt.logger, o.notify, rt.queues.pulls);
  return rt.backend.worker(REPORT_QUEUE, withRedactedErrors(secrets, pullProcessor(rt, io, o, afterLoad)), {
    ...rt.bull,
    concurrency: o.concurrency,
    // BullMQ honours queue.rateLimit() (our 429 pause) only on workers with a limiter. Its cap is queue-wide,
    // every account's requests/s together, never exceeded; the limits (src/limits/limiter.ts) bind first.
    limiter: { max: pullsPerSecondCap(rt.config), duration: 1_000 },
    settings: { backoffStrategy: pullBackoff(o.backoff) },
  });
}

/** The pull queue's cap on pulls per second: every account's rate limit together (at least ADOPS_RATE_LIMIT). */
export function pullsPerSecondCap(config: Pick<WorkerRuntime['config'], 'queue' | 'accounts'>): number {
  const sum = config.accounts.reduce((n, a) => n + a.rateLimitPerSecond, 0);
  return Math.max(config.queue.rateLimitPerSecond, sum);
}

function pullProcessor(
  rt: WorkerRuntime,
  io: PullDeps,
  { observer, notify, isolation }: PullWorkerOptions,
  afterLoad: (report: ReportJob, period: Period, account: string) => Promise<void>,
) {
  return async (job: Job<PullJobData, unknown, string>, token?: string): Promise<PullResult> => {
    rt.touch();
    const data = asPullData(job.data);
    if (data === undefined)
      throw new UnrecoverableError(`job ${job.id} has no report and period: ${JSON.stringify(job.data)}`);
    const { report } = data;
    const account = pullAccount(data);
    const range = pullPeriod(data);
    const log = rt.logger.child({ jobId: job.id, account, report, period: `${range.start}..${range.end}` });
    const guard = isolation?.guard;
    // An account paused, down or holding its share of the slots: delayed at once, never keeping a slot.
    const hold = guard?.enter(account) ?? 0;
    if (hold > 0) {
      await job.moveToDelayed(Date.now() + hold, token);
      throw new DelayedError();
    }
    const started = performance.now();
    let outcome: Awaited<ReturnType<typeof runPull>>;
    try {
      outcome = await runPull(io, data, job.id, log);
    } finally {
      guard?.leave(account);
    }
    if (!outcome.ok && isAccountTrouble(outcome.error)) {
      const heldMs = guard?.failed(account) ?? 0;
      const where = isolation?.accountsFile ?? 'ADOPS_ACCOUNTS_FILE';
      if (heldMs > 0)
        log.warn(
          { heldMs },
          `account ${account} held back ${heldMs / 1000} s: its server did not answer, failed (5xx) or refused ` +
            `its key (401/403); its pulls wait (the hold doubles to 60 s while this goes on) and the other ` +
            `accounts' go on. Check base_url, api_key_file (or api_key_env) and auth of account ${account} in ` +
            `${where}; \`adops doctor --account ${account}\` probes that server with them`,
        );
    }
    if (outcome.ok) {
      guard?.succeeded(account);
      const { loaded, fetchMs, requests, splits } = outcome;
      const definition = io.reports.get(report);
      if (loaded.evolving && definition !== undefined)
        for (const p of loaded.periods) await afterLoad(definition, p.period, account);
      const { loadId, status, rows, reconciled, loadMs, periods } = loaded;
      const totalMs = performance.now() - started;
      observer.pull(report, { outcome: status, rows, fetchMs, loadMs, totalMs, periods, requests, splits });
      const result = { loadId, status, rows, reconciled };
      const counts = { periods: periods.length, requests, splits };
      log.info(
        { ...result, ...counts, fetchMs: Math.round(fetchMs), loadMs: Math.round(loadMs) },
        'pull loaded',
      );
      rt.touch();
      return result;
    }
    const { failure } = outcome;
    if (failure.kind === 'rate-limited') {
      observer.pull(report, { outcome: 'rate_limited' });
      const ms = Math.max(1, failure.retryAfterMs);
      if (isolation !== undefined) {
        log.warn({ retryAfterMs: ms }, 'API rate limit: pausing this account');
        // Only this account's requests and pulls wait; the job goes back without spending an attempt.
        await isolation.accounts.get(account)?.limiter.pause(ms);
        isolation.guard.paused(account, ms);
        await job.moveToDelayed(Date.now() + ms, token);
        throw new DelayedError();
      }
      log.warn({ retryAfterMs: failure.retryAfterMs }, 'API rate limit: pausing the pull queue');
      // Holds every request of every worker (a sync's too), then the queue; no attempt spent.
      await rt.limiter.pause(ms);
      await rt.queues.pulls.rateLimit(ms);
      throw Worker.RateLimitError();
    }
    if (failure.kind === 'aborted') {
      log.warn('pull cut short by shutdown: back to the queue, no attempt spent');
      await job.moveToWait(token);
      throw new WaitingError();
    }
    const { reason } = failure;
    const attempt = job.attemptsMade + 1;
    const failed = outcome.periods ?? [range];
    if (failure.kind === 'fatal' || attempt >= (job.opts.attempts ?? 1)) {
      observer.pull(report, { outcome: 'failed', periods: failed.length });
      log.error({ reason, attempt }, 'pull failed');
      // The one place that knows the failure is final; the events are queued, never awaited. A provisional
      // pull's failure is no period's: the next refresh, or the pull after the period's end, loads it.
      if (data.provisional !== true)
        for (const p of failed)
          notify({
            type: 'period.failed',
            ...(account === 'default' ? {} : { account }),
            report,
            period_start: p.start,
            period_end: p.end,
            reason,
            attempts: attempt,
            load_id: outcome.loadId ?? null,
          });
      throw failure.kind === 'fatal' ? new UnrecoverableError(reason) : new Error(reason);
    }
    observer.pull(report, { outcome: 'retry', periods: failed.length });
    log.warn({ reason, attempt }, 'pull failed; it will be retried');
    // Carries the API's Retry-After into the backoff strategy.
    const retryAfterMs = outcome.error instanceof AdopsError ? outcome.error.retryAfterMs : undefined;
    throw new TransientError(reason, retryAfterMs === undefined ? {} : { retryAfterMs });
  };
}

/** BullMQ's settings.backoffStrategy for pulls: jittered exponential, at least the Retry-After. */
export function pullBackoff(policy: BackoffPolicy) {
  return (attemptsMade: number, type?: string, error?: Error): number => {
    const retryAfterMs = error instanceof AdopsError ? error.retryAfterMs : undefined;
    return type === BACKOFF_TYPE
      ? backoffDelay(attemptsMade, policy, Math.random, retryAfterMs)
      : backoffDelay(attemptsMade, policy);
  };
}
