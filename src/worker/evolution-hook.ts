// After each load, a report whose definition loads into a building version (report evolution) is
// checked for completeness, and its stable views switch to the new version once it covers every
// period the old one had. A failed check is logged, never fails the pull that triggered it.
import type { Pool } from 'pg';
import type { ReportJob } from '../config/jobs.js';
import type { Logger } from '../log/logger.js';
import type { Notify } from '../webhooks/events.js';
import { swapWhenCovered } from '../warehouse/schema/evolution.js';
import { buildingVersion, sameDimensions } from '../warehouse/schema/versions.js';
import { enqueuePulls } from '../queue/enqueue.js';
import type { PullQueue } from '../queue/queues.js';
import type { Period } from '../dates/periods.js';
import { warehouseOf } from '../warehouse/pg.js';

/**
 * A function to call after each load of `report` and `period`; resolves when any swap is done. A
 * load of the old shape (a pull that read its definition just before the change) is pulled again
 * in the new shape, so the new version still comes to cover it.
 */
export function evolutionHook(
  pool: Pool,
  schema: string,
  logger: Logger,
  notify: Notify,
  pulls: PullQueue,
): (report: ReportJob, period: Period, account?: string) => Promise<void> {
  return async (report, period, account) => {
    try {
      // One query per load; a report that is not evolving ends here.
      const next = await buildingVersion(warehouseOf(pool, schema), report.name);
      if (next === undefined) return;
      if (!sameDimensions(next.dimensions, report.dimensions)) {
        await enqueuePulls(pulls, [
          {
            report: report.name,
            period,
            version: next.version,
            ...(account === undefined ? {} : { account }),
          },
        ]);
        return;
      }
      const swapped = await swapWhenCovered(warehouseOf(pool, schema), report);
      if (swapped === undefined) return;
      logger.info(swapped, `report ${report.name} now serves version ${swapped.to} (was ${swapped.from})`);
      notify({
        type: 'evolution.swapped',
        report: swapped.report,
        from_version: swapped.from,
        to_version: swapped.to,
      });
    } catch (error) {
      logger.warn({ err: error, report: report.name }, 'could not switch the report to its new version');
    }
  };
}
