import { randomBytes } from 'node:crypto';
import type { QueueEvents } from 'bullmq';
import { DEFAULT_ACCOUNT } from '../config/accounts.js';
import { SYNC_JOB } from './names.js';
import type { SyncQueue } from './queues.js';
import type { EntitySyncResult } from '../entities/sync.js';

/** Deduplication key of entity syncs: one waiting or running sync per queue prefix is enough. */
export const SYNC_DEDUP_ID = 'entity-sync';

/** The job that will do a requested sync. */
export interface EnqueuedSync {
  readonly jobId: string;
  /** False when a sync was already waiting or running: `jobId` is that one. */
  readonly added: boolean;
}

/**
 * Requests an entity sync. A sync already waiting or running absorbs the request (a second one
 * would read the same catalogue), and its id is returned so the caller can wait for it. The job id
 * is fresh per request: a retained finished job must never swallow a new sync.
 */
export async function enqueueEntitySync(
  queue: SyncQueue,
  account: string = DEFAULT_ACCOUNT,
): Promise<EnqueuedSync> {
  // BullMQ forbids ':' and all-digit custom ids. One sync per account: each has its own catalogue.
  const own = account === DEFAULT_ACCOUNT;
  const jobId = `s-${own ? '' : `${account}-`}${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
  const job = await queue.add(SYNC_JOB, own ? {} : { account }, {
    jobId,
    deduplication: { id: own ? SYNC_DEDUP_ID : `${SYNC_DEDUP_ID}/${account}` },
  });
  const id = job.id ?? jobId;
  return { jobId: id, added: id === jobId };
}

/** Thrown when a waited-for sync failed or did not finish in time; the message says which. */
export class SyncWaitError extends Error {
  override readonly name = 'SyncWaitError';
}

/**
 * Waits for sync job `jobId` to finish and returns its result. `events` must be listening
 * (waitUntilReady) before the job was added, or a quick job's completion could be missed.
 */
export async function waitForEntitySync(
  queue: SyncQueue,
  events: QueueEvents,
  jobId: string,
  timeoutMs: number,
): Promise<EntitySyncResult> {
  const job = await queue.getJob(jobId);
  if (job === undefined)
    throw new SyncWaitError(
      `entity sync job ${jobId} is gone (removed from the queue); run adops sync again`,
    );
  try {
    return (await job.waitUntilFinished(events, timeoutMs)) as EntitySyncResult;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const hint = /timed out/.test(reason)
      ? `it did not finish within ${Math.round(timeoutMs / 1000)} s: is an adops worker running? (adops worker)`
      : 'see the worker log for details; fix the cause and run adops sync again';
    throw new SyncWaitError(`entity sync job ${jobId} failed: ${reason}; ${hint}`, { cause: error });
  }
}
