// `adops status` shows the queue counts BullMQ gives, in every state it shows, on either backend.
import { UnrecoverableError } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { openQueueBackend } from '../../../src/platform/queue/backend.js';
import { REPORT_QUEUE, TICK_QUEUE, type PullJobData } from '../../../src/platform/queue/jobs.js';
import { runCli } from '../../helpers/run-cli.js';
import { createHarness, type Harness } from '../../helpers/pipeline.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const pull = (day: string) => ({ report: 'daily_campaign', periodStart: day, periodEnd: day });

describe('adops status --json', () => {
  it('gives the queue counts BullMQ gives: waiting, delayed, failed and completed', async () => {
    h = await createHarness();
    const { pulls } = h.queues;
    await pulls.add('pull', pull('2026-01-01'));
    await pulls.add('pull', pull('2026-01-02'), { priority: 5 });
    await pulls.add('pull', pull('2026-01-03'), { delay: 60_000 });
    await pulls.add('pull', pull('2026-01-04'));
    await pulls.add('pull', pull('2026-01-05'));
    // A worker's own connection: on Redis, BullMQ wants it without a retry limit.
    const store = await openQueueBackend(h.config, 'worker');
    const worker = store.worker<PullJobData>(
      REPORT_QUEUE,
      async (job) => {
        if (job.data.periodStart === '2026-01-04') throw new UnrecoverableError('bad');
        return 'ok';
      },
      { autorun: false },
    );
    // Jobs run until two have ended (which of them is BullMQ's choice): some fail, some complete.
    const done = new Promise<void>((resolve) => {
      let n = 0;
      const count = () => void (++n === 2 && resolve());
      worker.on('completed', count);
      worker.on('failed', count);
    });
    void worker.run();
    await done;
    await worker.close();
    await store.close();
    const bull = await pulls.getJobCounts(
      'waiting',
      'prioritized',
      'active',
      'delayed',
      'failed',
      'completed',
    );
    const run = await runCli(['status', '--json', '--days', '1'], h.env);
    const status = JSON.parse(run.stdout) as { queues: Record<string, Record<string, number>> };
    expect(status.queues[REPORT_QUEUE]).toEqual({
      waiting: (bull.waiting ?? 0) + (bull.prioritized ?? 0),
      active: bull.active,
      delayed: 1,
      failed: bull.failed,
      completed: bull.completed,
      // Its failed pull's period never loaded: still a failure.
      failedHealed: 0,
    });
    expect((bull.failed ?? 0) + (bull.completed ?? 0)).toBeGreaterThanOrEqual(2);
    expect(status.queues[TICK_QUEUE]).toEqual({ waiting: 0, active: 0, delayed: 0, failed: 0, completed: 0 });
  });
});
