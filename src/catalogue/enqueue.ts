// A catalogue sync on ENTITY_QUEUE, once per account, and the wait of `adops sync --wait` for it.
import { TerminalError } from '../platform/retry/errors.js';
import { randomBytes } from 'node:crypto';
import { DEFAULT_ACCOUNT } from '../platform/config/accounts.js';
import { SYNC_JOB } from '../platform/queue/jobs.js';
import type { SyncQueue } from '../platform/queue/queues.js';
import type { EntitySyncResult } from './sync.js';
import { asSyncProgress, type SyncProgress } from './checkpoint.js';
import { pause, throughOutage, WAIT_OUTAGE_MS, type OutageOptions } from '../platform/queue/connection.js';

/** Deduplication key of entity syncs: one waiting or running sync per queue prefix is enough. */
const SYNC_DEDUP_ID = 'entity-sync';

/** The job that will do a requested sync; not `added` when one was already waiting or running. */
export type EnqueuedSync = { readonly jobId: string; readonly added: boolean };

/** Requests an entity sync; one already waiting or running absorbs it, and its id is returned. */
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

export class SyncWaitError extends TerminalError {
  override readonly name = 'SyncWaitError';
}

/** Give up (SyncWaitError) after `timeoutMs`; the job read every `pollMs` (500); see throughOutage. */
export interface SyncWaitOptions extends Partial<OutageOptions> {
  readonly timeoutMs: number;
  readonly onProgress?: (progress: SyncProgress) => void;
  readonly pollMs?: number;
}

/** Waits for sync job `jobId` and returns its result, reading the job (reads survive a failover). */
export async function waitForEntitySync(
  queue: SyncQueue,
  jobId: string,
  options: SyncWaitOptions,
): Promise<EntitySyncResult> {
  const deadline = Date.now() + options.timeoutMs;
  const outage = { ...options, outageMs: options.outageMs ?? WAIT_OUTAGE_MS };
  // The state before the job: one read first then found completed may lack its return value.
  const read = async () => {
    const state = await queue.getJobState(jobId);
    return { job: await queue.getJob(jobId), state };
  };
  const fail = (why: string) => new SyncWaitError(`entity sync job ${jobId} ${why}`);
  for (;;) {
    const seen = await throughOutage(read, outage);
    const job = seen?.job;
    if (job === undefined) throw fail('is gone (removed from the queue); run adops sync again');
    if (seen?.state === 'completed') return job.returnvalue as EntitySyncResult;
    if (seen?.state === 'failed')
      throw fail(
        `failed: ${job.failedReason}; see the worker log for details; fix the cause and run adops sync again`,
      );
    const progress = asSyncProgress(job.progress);
    if (progress !== undefined) options.onProgress?.(progress);
    if (Date.now() >= deadline)
      throw fail(
        `did not finish within ${Math.round(options.timeoutMs / 1000)} s: is an adops worker running? (adops worker)`,
      );
    await pause(Math.min(options.pollMs ?? 500, Math.max(0, deadline - Date.now())), undefined);
  }
}
