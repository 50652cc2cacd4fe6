// Adding pulls to the queue, deduplicated per report and period while one is unfinished.
import { randomBytes } from 'node:crypto';
import { DEFAULT_ACCOUNT } from '../config/accounts.js';
import { PULL_JOB } from './names.js';
import type { PlannedPull } from '../plan/pull.js';
import { pullData, pullDedupId, type PullJobData } from './payload.js';
import type { PullQueue } from './queues.js';

/** One requested pull and the job that will do it. */
export interface EnqueuedPull {
  readonly data: PullJobData;
  readonly jobId: string;
  /** False when an unfinished pull of the same report and period already existed: `jobId` is that one. */
  readonly added: boolean;
}

const CHUNK = 500;

/**
 * Enqueues one job per pull. A pull whose report and period already has a job waiting, delayed
 * or running is not added again; its existing job id is returned instead, so callers can still
 * wait for it. Each request gets fresh job ids, so a period loaded earlier is pulled again (a
 * retained completed job with a reused jobId would silently swallow it).
 */
export async function enqueuePulls(
  queue: PullQueue,
  pulls: readonly PlannedPull[],
  options: { priority?: number } = {},
): Promise<EnqueuedPull[]> {
  const nonce = `${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
  const out: EnqueuedPull[] = [];
  for (let i = 0; i < pulls.length; i += CHUNK) {
    const chunk = pulls.slice(i, i + CHUNK);
    const requested = chunk.map((pull, j) => ({
      data: pullData(pull.report, pull.period, pull.version, pull.account),
      // BullMQ forbids ':' and all-digit custom ids. Named after the account: ids of accounts never meet.
      jobId:
        pull.account === undefined || pull.account === DEFAULT_ACCOUNT
          ? `p-${nonce}-${i + j}`
          : `p-${pull.account}-${nonce}-${i + j}`,
    }));
    const jobs = await queue.addBulk(
      requested.map(({ data, jobId }) => ({
        name: PULL_JOB,
        data,
        opts: {
          jobId,
          deduplication: { id: pullDedupId(data) },
          ...(options.priority === undefined ? {} : { priority: options.priority }),
        },
      })),
    );
    requested.forEach((r, j) => {
      const id = jobs[j]?.id ?? r.jobId;
      out.push({ data: r.data, jobId: id, added: id === r.jobId });
    });
  }
  return out;
}
