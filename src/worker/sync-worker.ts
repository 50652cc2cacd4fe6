// The worker of catalogue syncs: one sync per job, its progress reported on the job, resumable
// from its checkpoint when the job is tried again.
import { DelayedError, UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import { createApiClientFromConfig, type ApiClient } from '../api/client.js';
import type { AttemptInfo } from '../api/http.js';
import type { RequestGate } from '../limits/limiter.js';
import type { AnyWorker } from '../platform/queue/backend.js';
import { accountConfig, secretsOf } from '../platform/config/env.js';
import { syncAccount, type SyncJobData, ENTITY_QUEUE } from '../platform/queue/jobs.js';
import type { SyncProgress } from '../catalogue/checkpoint.js';
import { syncClientOptions, syncRetryFromConfig } from '../catalogue/read.js';
import { runEntitySync } from '../catalogue/sync.js';
import { classifyFailure } from '../platform/retry/classify.js';
import { withRedactedErrors } from '../platform/log/redact.js';
import type { PullAccount, WorkerObserver } from './pull-worker.js';
import type { WorkerRuntime } from './runtime.js';
import { warehouseOf } from '../platform/pg/handle.js';

/** What a catalogue sync job hands the sync. */
export interface SyncRun {
  /** The job's id: its retries and its recovery after a dead worker resume the same checkpoint. */
  readonly runId: string;
  readonly account: string;
  /** False on the job's last attempt: a failure then is final, and the checkpoint can go. */
  readonly resumable: boolean;
  readonly onProgress: (progress: SyncProgress) => void;
}

export type EntitySync = (run: SyncRun) => Promise<unknown>;

/** The default sync of a worker: runEntitySync over each account's own API client, through the limiter its
 * pulls use (`accounts`, by name); `close` ends the clients, not the limiters. */
export function defaultEntitySync(
  rt: WorkerRuntime,
  observer: WorkerObserver,
  accounts: ReadonlyMap<string, PullAccount>,
): { sync: EntitySync; close(): Promise<void> } {
  const clients = new Map<string, { api: ApiClient; gate: RequestGate }>();
  const clientOf = (name: string) => {
    let c = clients.get(name);
    if (c !== undefined) return c;
    const account = rt.config.accounts.find((a) => a.name === name);
    const limiter = accounts.get(name)?.limiter;
    if (account === undefined || limiter === undefined)
      throw new UnrecoverableError(
        `entity sync for account "${name}", which is not in this worker's accounts (ADOPS_ACCOUNTS_FILE)`,
      );
    // One HTTP attempt per call: the sync's requester retries itself. At shutdown's deadline it waits again.
    const api = createApiClientFromConfig(accountConfig(rt.config, account), rt.logger, {
      ...syncClientOptions(limiter),
      signal: rt.shutdown.signal,
      onAttempt: ({ status, attempt, path }: AttemptInfo) => observer.attempt({ status, attempt, path }),
    });
    c = { api, gate: limiter };
    clients.set(name, c);
    return c;
  };
  return {
    sync: (run) => {
      const { api, gate } = clientOf(run.account);
      return runEntitySync({
        wh: warehouseOf(rt.pool, rt.config.schema),
        api,
        logger: rt.logger,
        gate,
        retry: syncRetryFromConfig(rt.config),
        secrets: secretsOf(rt.config),
        ...run,
      });
    },
    close: async () => {
      for (const c of clients.values()) await c.api.close();
    },
  };
}

export function startSyncWorker(rt: WorkerRuntime, sync: EntitySync): AnyWorker {
  return rt.backend.worker(ENTITY_QUEUE, withRedactedErrors(secretsOf(rt.config), syncProcessor(rt, sync)), {
    ...rt.bull,
    concurrency: 1,
    // A limiter that never binds: it only makes BullMQ honour a 429 pause.
    limiter: { max: 1_000, duration: 1_000 },
  });
}

/** The processor of ENTITY_QUEUE: what the sync could not ride out maps like a pull's failure (a 401 fails for
 * good, a 429 sends the job back without spending an attempt; its checkpoint keeps what it read). */
function syncProcessor(
  rt: Pick<WorkerRuntime, 'logger' | 'queues' | 'touch'> & {
    readonly config?: Pick<WorkerRuntime['config'], 'accounts'>;
  },
  sync: EntitySync,
) {
  // With several accounts, one account's 429 sends only its own sync back; it never pauses the others'.
  const several = (rt.config?.accounts.length ?? 1) > 1;
  return async (job: Job<SyncJobData, unknown, string>, token?: string) => {
    rt.touch();
    const account = syncAccount(job.data);
    if (account === undefined)
      throw new UnrecoverableError(`job ${job.id} names no valid account: ${JSON.stringify(job.data)}`);
    try {
      return await sync({
        runId: job.id ?? `s-${job.timestamp}`,
        account,
        resumable: job.attemptsMade + 1 < (job.opts.attempts ?? 1),
        onProgress: (progress) => {
          rt.touch();
          job.updateProgress({ ...progress }).catch(() => undefined);
        },
      });
    } catch (error) {
      const failure = classifyFailure(error);
      if (failure.kind === 'aborted' && token !== undefined) {
        rt.logger.warn('entity sync cut short by shutdown: back to the queue, no attempt spent');
        await job.moveToWait(token);
        throw new WaitingError();
      }
      if (failure.kind === 'rate-limited' && several) {
        await job.moveToDelayed(Date.now() + Math.max(1, failure.retryAfterMs), token);
        throw new DelayedError();
      }
      if (failure.kind === 'rate-limited') {
        await rt.queues.syncs.rateLimit(Math.max(1, failure.retryAfterMs));
        throw Worker.RateLimitError();
      }
      rt.logger.error({ reason: failure.reason }, 'entity sync failed');
      if (failure.kind === 'fatal') throw new UnrecoverableError(failure.reason);
      throw error;
    } finally {
      rt.touch();
    }
  };
}
