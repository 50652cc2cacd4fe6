// `adops status` reads the queue counts with plain Redis commands instead of loading BullMQ: the
// counts must be BullMQ's own, job for job, in every state status shows.
import { Worker, UnrecoverableError } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/env.js';
import { COUNTED_STATES, jobCounts, readJobCounts, REPORT_QUEUE } from '../../../src/queue/jobs.js';
import { openQueues, type Queues } from '../../../src/queue/queues.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';

let queues: Queues | undefined;
let redis: Redis | undefined;
let worker: Worker | undefined;
let workerRedis: Redis | undefined;
afterEach(async () => {
  await worker?.close();
  await queues?.close();
  redis?.disconnect();
  workerRedis?.disconnect();
  worker = queues = redis = workerRedis = undefined;
});

const pull = (day: string) => ({ report: 'daily_campaign', periodStart: day, periodEnd: day });

describe('readJobCounts', () => {
  it('gives the counts BullMQ gives, in every state status shows, for every queue', async () => {
    const prefix = testPrefix();
    const config = loadConfig({ REDIS_URL, ADOPS_QUEUE_PREFIX: prefix });
    queues = await openQueues(config);
    redis = new Redis(REDIS_URL);
    const empty = await readJobCounts(redis, prefix);
    expect(empty).toEqual(await jobCounts(queues, ...COUNTED_STATES));
    expect(Object.values(empty).every((c) => Object.values(c).every((n) => n === 0))).toBe(true);

    // 2 completed, 1 failed, then 3 waiting, 1 prioritized and 2 delayed left behind.
    for (const day of ['2025-01-01', '2025-01-02', '2025-01-03'])
      await queues.pulls.add('pull', pull(day), { jobId: day, attempts: 1 });
    let done = 0;
    const finished = new Promise<void>((resolve) => {
      worker = new Worker(
        REPORT_QUEUE,
        async (job) => {
          if (job.id === '2025-01-03') throw new UnrecoverableError('no');
          return 'ok';
        },
        { connection: (workerRedis = new Redis(REDIS_URL, { maxRetriesPerRequest: null })), prefix },
      );
      const count = () => {
        if (++done === 3) resolve();
      };
      worker.on('completed', count);
      worker.on('failed', count);
    });
    await finished;
    await worker?.close();
    worker = undefined;
    for (const day of ['2025-02-01', '2025-02-02', '2025-02-03'])
      await queues.pulls.add('pull', pull(day), { jobId: day });
    await queues.pulls.add('pull', pull('2025-03-01'), { jobId: 'p', priority: 5 });
    await queues.pulls.add('pull', pull('2025-04-01'), { jobId: 'd1', delay: 60_000 });
    await queues.syncs.add('sync', {}, { jobId: 'd2', delay: 60_000 });

    const plain = await readJobCounts(redis, prefix);
    expect(plain).toEqual(await jobCounts(queues, ...COUNTED_STATES));
    expect(plain[REPORT_QUEUE]).toEqual({
      waiting: 3,
      active: 0,
      delayed: 1,
      failed: 1,
      completed: 2,
      prioritized: 1,
    });
  });
});
