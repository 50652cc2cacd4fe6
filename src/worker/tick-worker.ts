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
import { maintainPartitions, type PartitionUpkeep } from '../schema/partitions.js';
import { withRedactedErrors } from '../platform/log/redact.js';
import type { WorkerRuntime } from './runtime.js';

/** Starts the BullMQ worker of TICK_QUEUE. */
export function startTickWorker(
  rt: WorkerRuntime,
  o: { reports: ReportLookup; gapCap: number },
): WorkerOf<TickJobData> {
  const { config, pool } = rt;
  const deps: TickDeps = {
    reports: o.reports,
    pulls: rt.queues.pulls,
    states: (report, from, to, account) => loadStates(rt.wh, report, from, to, account),
    accounts: config.accounts,
    healDays: config.healDays,
    gapCap: o.gapCap,
  };
  const housekeeping = () => pruneRaw(rt.wh, config.rawRetentionDays);
  const partitions = async (name: string) => {
    const report = o.reports.get(name);
    if (report === undefined) return undefined;
    return withClient(pool, (client) => maintainPartitions(client, rt.wh, [report]));
  };
  const processor = withRedactedErrors(secretsOf(config), tickProcessor(rt, deps, housekeeping, partitions));
  return rt.backend.worker(TICK_QUEUE, processor, {
    ...rt.bull,
    concurrency: 1,
  });
}

/**
 * The processor of TICK_QUEUE: makes the report's partitions ahead and applies its retention,
 * plans the window and gaps, enqueues the pulls, then prunes the archive; a partition or
 * housekeeping failure is logged, never fails the tick (a load makes its own month's partition).
 */
function tickProcessor(
  rt: Pick<WorkerRuntime, 'logger' | 'touch'>,
  deps: TickDeps,
  housekeeping: () => Promise<number> = async () => 0,
  partitions: (report: string) => Promise<PartitionUpkeep | undefined> = async () => undefined,
) {
  const { logger } = rt;
  return async (job: Job<TickJobData, unknown, string>) => {
    rt.touch();
    await partitions(String(job.data.report)).then(
      (upkeep) => {
        if (upkeep === undefined) return;
        if (upkeep.made.length > 0) logger.info({ made: upkeep.made }, 'partitions made ahead');
        for (const d of upkeep.dropped)
          logger.info(
            { report: d.report, partition: d.partition, from: d.from, to: d.to },
            'partition dropped by retention',
          );
      },
      (error: unknown) => logger.warn({ err: error }, 'could not make partitions or apply retention'),
    );
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
