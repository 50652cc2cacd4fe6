// The BullMQ processors of a worker: what each job kind does and how each failure maps onto
// BullMQ (retry with backoff, fail for good, pause the queue, or go back to wait).
import { UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import type { Logger } from '../log/logger.js';
import { BACKOFF_TYPE, retryDelayMs, type BackoffPolicy } from './backoff.js';
import { classifyPullError } from './errors.js';
import type { WorkerMetrics } from './metrics.js';
import { asPullData, type PullJobData, type TickJobData } from './payload.js';
import { runPull, type PullDeps } from './pull.js';
import type { PullQueue, SyncQueue } from './queues.js';
import { runTick, type TickDeps } from './tick.js';

/** What the pull processor needs. */
export interface PullProcessorDeps {
  readonly io: PullDeps;
  readonly pulls: PullQueue;
  readonly metrics: WorkerMetrics;
  readonly logger: Logger;
  /** Called when a job starts or ends (the health check's sign of life). */
  readonly touch: () => void;
}

/** The summary a completed pull job returns (its BullMQ returnvalue). */
export interface PullResult {
  readonly loadId: number;
  readonly status: 'loaded' | 'superseded';
  readonly rows: number;
  readonly reconciled: boolean;
}

/** The processor of REPORT_QUEUE. */
export function pullProcessor(d: PullProcessorDeps) {
  return async (job: Job<PullJobData, unknown, string>, token?: string): Promise<PullResult> => {
    d.touch();
    const data = asPullData(job.data);
    if (data === undefined)
      throw new UnrecoverableError(`job ${job.id} has no report and period: ${JSON.stringify(job.data)}`);
    const log = d.logger.child({
      jobId: job.id,
      report: data.report,
      period: `${data.periodStart}..${data.periodEnd}`,
    });
    const started = performance.now();
    const outcome = await runPull(d.io, data, job.id, log);
    const report = data.report;
    const { metrics } = d;
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
      d.touch();
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
      await d.pulls.rateLimit(Math.max(1, failure.retryAfterMs));
      throw Worker.RateLimitError();
    }
    if (failure.kind === 'aborted') {
      log.warn('pull cut short by shutdown: back to the queue, no attempt spent');
      await job.moveToWait(token);
      throw new WaitingError();
    }
    const attempt = job.attemptsMade + 1;
    if (failure.kind === 'fatal' || attempt >= (job.opts.attempts ?? 1)) {
      metrics.pulls.inc({ report, outcome: 'failed' });
      log.error({ reason: failure.reason, attempt }, 'pull failed');
      if (failure.kind === 'fatal') throw new UnrecoverableError(failure.reason);
      throw new Error(failure.reason);
    }
    metrics.pulls.inc({ report, outcome: 'retry' });
    log.warn({ reason: failure.reason, attempt }, 'pull failed; it will be retried');
    throw new PullRetry(failure.reason, retryAfterOf(outcome.error));
  };
}

/** BullMQ's settings.backoffStrategy for pulls: jittered exponential, at least the Retry-After. */
export function pullBackoff(policy: BackoffPolicy) {
  return (attemptsMade: number, type?: string, error?: Error): number =>
    type === BACKOFF_TYPE
      ? retryDelayMs(attemptsMade, policy, Math.random, (error as PullRetry | undefined)?.retryAfterMs)
      : retryDelayMs(attemptsMade, policy);
}

/**
 * The processor of TICK_QUEUE: plans the window and gaps, enqueues the pulls, then runs the
 * nightly housekeeping (pruning archived bodies past their retention); housekeeping failures are
 * logged, never fail the tick.
 */
export function tickProcessor(
  deps: TickDeps,
  logger: Logger,
  touch: () => void,
  housekeeping: () => Promise<number> = async () => 0,
) {
  return async (job: Job<TickJobData, unknown, string>) => {
    touch();
    const result = await runTick(deps, job);
    await housekeeping().then(
      (pruned) =>
        pruned > 0 && logger.info({ pruned }, 'pruned archived response bodies past their retention'),
      (error: unknown) => logger.warn({ err: error }, 'could not prune archived response bodies'),
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
  };
}

/** The processor of ENTITY_QUEUE: one catalogue sync, failures mapped like a pull's. */
export function syncProcessor(
  sync: () => Promise<unknown>,
  syncs: SyncQueue,
  logger: Logger,
  touch: () => void,
) {
  return async () => {
    touch();
    try {
      return await sync();
    } catch (error) {
      // Same allowlist as pulls: a 401 or a bad catalogue is not retried.
      const failure = classifyPullError(error);
      if (failure.kind === 'rate-limited') {
        await syncs.rateLimit(Math.max(1, failure.retryAfterMs));
        throw Worker.RateLimitError();
      }
      logger.error({ reason: failure.reason }, 'entity sync failed');
      if (failure.kind === 'fatal') throw new UnrecoverableError(failure.reason);
      throw error;
    } finally {
      touch();
    }
  };
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
