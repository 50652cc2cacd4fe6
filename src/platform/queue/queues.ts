// The queues, opened with the options every producer must agree on.
import type { Config } from '../config/env.js';
import { BACKOFF_TYPE } from '../retry/classify.js';
import { openQueueBackend, type QueueBackend, type QueueOf } from './backend.js';
import {
  ENTITY_QUEUE,
  REPORT_QUEUE,
  TICK_QUEUE,
  WEBHOOK_QUEUE,
  type PullJobData,
  type SyncJobData,
  type TickJobData,
} from './jobs.js';
import type { WebhookQueue } from './jobs.js';

/** Finished jobs are kept (`--wait`, status), never blocking a re-pull (dedup is by key, not jobId). */
export const KEEP_COMPLETED = { age: 24 * 3600, count: 20_000 } as const;
const KEPT = { removeOnComplete: KEEP_COMPLETED, removeOnFail: { age: 14 * 24 * 3600, count: 20_000 } };

/** Attempts of a webhook delivery, the first included: about half an hour of backoff (WEBHOOK_BACKOFF). */
export const WEBHOOK_ATTEMPTS = 10;

export type PullQueue = QueueOf<PullJobData>;
export type TickQueue = QueueOf<TickJobData>;
export type SyncQueue = QueueOf<SyncJobData>;

/** The queues over one connection, closed together. */
export interface Queues {
  readonly pulls: PullQueue;
  readonly ticks: TickQueue;
  readonly syncs: SyncQueue;
  /** Webhook deliveries and freshness evaluations; consumed only by workers with ADOPS_WEBHOOK_URL. */
  readonly webhooks: WebhookQueue;
  readonly backend: QueueBackend;
  close(): Promise<void>;
}

/** Opens the queues on a fail-fast producer store (or on `backend`, which the caller then owns). */
export async function openQueues(
  config: Pick<Config, 'redis' | 'queue' | 'databaseUrl'>,
  backend?: QueueBackend,
): Promise<Queues> {
  const store = backend ?? (await openQueueBackend(config, 'producer'));
  // A tick or sync retries after 5 s, then 10 s: a sync resumes from its checkpoint, the server may recover.
  const backoff = { type: BACKOFF_TYPE };
  const pulls: PullQueue = store.queue(REPORT_QUEUE, {
    defaultJobOptions: { ...KEPT, attempts: config.queue.pullAttempts, backoff },
  });
  const retried = { ...KEPT, attempts: 3, backoff: { type: 'exponential', delay: 5_000 } };
  const ticks: TickQueue = store.queue(TICK_QUEUE, { defaultJobOptions: retried });
  const syncs: SyncQueue = store.queue(ENTITY_QUEUE, { defaultJobOptions: retried });
  const webhooks: WebhookQueue = store.queue(WEBHOOK_QUEUE, {
    defaultJobOptions: { ...KEPT, attempts: WEBHOOK_ATTEMPTS, backoff },
  });
  for (const q of [pulls, ticks, syncs, webhooks]) q.on('error', () => undefined);
  return {
    pulls,
    ticks,
    syncs,
    webhooks,
    backend: store,
    close: async () => {
      await Promise.allSettled([pulls.close(), ticks.close(), syncs.close(), webhooks.close()]);
      if (backend === undefined) await store.close();
    },
  };
}
