// Adding pulls to the queue, deduplicated per report and period while one is unfinished, in
// chunks drawn from the plan as they go, so an enqueue of any size holds one chunk at a time.
import { randomBytes } from 'node:crypto';
import { DEFAULT_ACCOUNT } from '../config/accounts.js';
import { PULL_JOB } from './names.js';
import type { PlannedPull } from '../plan/pulls.js';
import { pullData, pullDedupId, type PullJobData } from './payload.js';
import type { PullQueue } from './queues.js';

/** One requested pull and the job that will do it. */
export interface EnqueuedPull {
  readonly data: PullJobData;
  readonly jobId: string;
  /** False when an unfinished pull of the same report and period already existed: `jobId` is that one. */
  readonly added: boolean;
}

/** Pulls per addBulk call: one Redis round trip (a MULTI of this many scripts) each. */
export const ENQUEUE_CHUNK = 1_000;

export interface EnqueueOptions {
  readonly priority?: number;
  /** Pulls per addBulk call (default ENQUEUE_CHUNK). */
  readonly chunk?: number;
}

/**
 * Enqueues one job per pull, drawing `pulls` (an array or a generator) one chunk at a time and
 * yielding each chunk's outcome once it is in Redis. A pull whose report and period already has a
 * job waiting, delayed or running is not added again; its existing job id is given instead, so
 * callers can still wait for it. Each call gets fresh job ids, so a period loaded earlier is pulled
 * again (a retained completed job with a reused jobId would silently swallow it).
 */
export async function* enqueueChunks(
  queue: PullQueue,
  pulls: Iterable<PlannedPull>,
  options: EnqueueOptions = {},
): AsyncGenerator<EnqueuedPull[], void, undefined> {
  const size = options.chunk ?? ENQUEUE_CHUNK;
  if (!Number.isInteger(size) || size < 1)
    throw new RangeError(`chunk ${size}: expected a whole number >= 1`);
  const nonce = `${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
  let next = 0;
  let chunk: PlannedPull[] = [];
  for (const pull of pulls) {
    chunk.push(pull);
    if (chunk.length < size) continue;
    yield await addChunk(queue, chunk, nonce, next, options.priority);
    next += chunk.length;
    chunk = [];
  }
  if (chunk.length > 0) yield await addChunk(queue, chunk, nonce, next, options.priority);
}

/** enqueueChunks, collected: for plans small enough to hold (a tick, a heal, tests). */
export async function enqueuePulls(
  queue: PullQueue,
  pulls: Iterable<PlannedPull>,
  options: EnqueueOptions = {},
): Promise<EnqueuedPull[]> {
  const out: EnqueuedPull[] = [];
  for await (const chunk of enqueueChunks(queue, pulls, options)) out.push(...chunk);
  return out;
}

async function addChunk(
  queue: PullQueue,
  chunk: readonly PlannedPull[],
  nonce: string,
  first: number,
  priority: number | undefined,
): Promise<EnqueuedPull[]> {
  const requested = chunk.map((pull, j) => ({
    data: pullData(pull.report, pull.period, pull.version, pull.account),
    // BullMQ forbids ':' and all-digit custom ids. Named after the account: ids of accounts never meet.
    jobId:
      pull.account === undefined || pull.account === DEFAULT_ACCOUNT
        ? `p-${nonce}-${first + j}`
        : `p-${pull.account}-${nonce}-${first + j}`,
  }));
  const jobs = await queue.addBulk(
    requested.map(({ data, jobId }) => ({
      name: PULL_JOB,
      data,
      opts: {
        jobId,
        deduplication: { id: pullDedupId(data) },
        ...(priority === undefined ? {} : { priority }),
      },
    })),
  );
  return requested.map((r, j) => {
    const id = jobs[j]?.id ?? r.jobId;
    return { data: r.data, jobId: id, added: id === r.jobId };
  });
}
