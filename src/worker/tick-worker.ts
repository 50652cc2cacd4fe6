// The worker of scheduler ticks: each tick enqueues its report's window and gap repairs, then runs
// the nightly housekeeping (pruning archived bodies past their retention).
import type { Job } from 'bullmq';
import { secretsOf } from '../platform/config/env.js';
import type { ReportLookup } from '../platform/config/jobs.js';
import { TICK_QUEUE, type TickJobData } from '../platform/queue/jobs.js';
import type { WorkerOf } from '../platform/queue/backend.js';
import { runTick, type TickDeps } from '../schedule/scheduler.js';
import { loadStates } from '../pull/history.js';
import { withClient } from '../platform/pg/handle.js';
import { pruneRaw } from '../pull/archive.js';
import { maintainPartitions } from '../schema/partitions.js';
import { withRedactedErrors } from '../platform/log/redact.js';
import type { WorkerRuntime } from './runtime.js';

/** The TICK_QUEUE worker; a partition or housekeeping failure is only logged (a load makes its partition). */
export function startTickWorker(
  rt: WorkerRuntime,
  o: { reports: ReportLookup; gapCap: number; now?: () => Date },
): WorkerOf<TickJobData> {
  const { config, logger } = rt;
  const deps: TickDeps = {
    reports: o.reports,
    pulls: rt.queues.pulls,
    states: (report, from, to, account) => loadStates(rt.wh, report, from, to, account),
    accounts: config.accounts,
    healDays: config.healDays,
    gapCap: o.gapCap,
    ...(o.now === undefined ? {} : { now: o.now }),
  };
  const partitions = async (name: string) => {
    const report = o.reports.get(name);
    if (report === undefined) return;
    const upkeep = await withClient(rt.pool, (client) => maintainPartitions(client, rt.wh, [report]));
    if (upkeep.made.length > 0) logger.info({ made: upkeep.made }, 'partitions made ahead');
    for (const d of upkeep.dropped)
      logger.info(
        { report: d.report, partition: d.partition, from: d.from, to: d.to },
        'partition dropped by retention',
      );
  };
  const processor = async (job: Job<TickJobData, unknown, string>) => {
    rt.touch();
    await partitions(String(job.data.report)).catch((error: unknown) =>
      logger.warn({ err: error }, 'could not make partitions or apply retention'),
    );
    const result = await runTick(deps, job);
    await pruneRaw(rt.wh, config.rawRetentionDays).then(
      (pruned) =>
        pruned > 0 && logger.info({ pruned }, 'pruned archived response bodies past their retention'),
      (error: unknown) => logger.warn({ err: error }, 'could not prune archived response bodies'),
    );
    const { report, scheduledFor, added } = result;
    const [window, gaps] = [result.window.length, result.gaps.length];
    logger.info({ report, scheduledFor, window, gaps, added }, 'scheduler tick enqueued pulls');
    return { ...result, window, gaps };
  };
  return rt.backend.worker(TICK_QUEUE, withRedactedErrors(secretsOf(config), processor), {
    ...rt.bull,
    concurrency: 1,
  });
}
