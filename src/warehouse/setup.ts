import type { Pool } from 'pg';
import type { ReportJob } from '../config/jobs.js';
import { sqlDir } from '../config/files.js';
import type { Logger } from '../log/logger.js';
import { ensureDailyViews, type DailyViewOutcome } from './catalogue/daily-views.js';
import { ensureViews, type ViewOutcome } from './catalogue/views.js';
import { migrate, type MigrateResult } from './migrate.js';
import { convertUnpartitioned, type Converted } from './partition-convert.js';
import { ensureReportTables, type EnsureResult } from './report-tables.js';
import { databaseNow, maintainPartitions, type PartitionUpkeep } from './retention.js';

export interface SetupResult extends MigrateResult {
  readonly tables: EnsureResult;
  readonly views: readonly ViewOutcome[];
  readonly dailyViews: readonly DailyViewOutcome[];
  /** Report tables of an earlier release converted to monthly partitions. */
  readonly converted: readonly Converted[];
  /** Partitions made ahead, and dropped by retention. */
  readonly partitions: PartitionUpkeep;
}

/**
 * Everything `adops migrate` does, under one advisory lock: the numbered sql/ files, then a
 * report_<name> table per definition, then the BI views over those tables and their per-day
 * companions, then the conversion of unpartitioned report tables, the partitions ahead and
 * retention's drops. The demo, the test template and the benchmark call this too, so every
 * database is built the same way.
 */
export async function setupWarehouse(
  pool: Pool,
  options: {
    readonly schema: string;
    readonly reports: readonly ReportJob[];
    readonly logger?: Logger;
    /** Whether a new table version switches by itself once it covers the old one (default true). */
    readonly autoSwap?: boolean;
    /**
     * The clock partitions and retention are judged by (tests fix it); default the database's
     * now(), never this machine's clock.
     */
    readonly now?: Date;
  },
): Promise<SetupResult> {
  let tables: EnsureResult | undefined;
  let views: ViewOutcome[] = [];
  let dailyViews: DailyViewOutcome[] = [];
  let converted: Converted[] = [];
  let partitions: PartitionUpkeep | undefined;
  const result = await migrate(pool, {
    schema: options.schema,
    sqlDir: sqlDir(),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    afterMigrations: async (client) => {
      tables = await ensureReportTables(client, options.schema, options.reports, {
        autoSwap: options.autoSwap ?? true,
      });
      views = await ensureViews(client, options.schema, options.reports);
      dailyViews = await ensureDailyViews(client, options.schema, options.reports);
      const now = options.now ?? (await databaseNow(client));
      converted = await convertUnpartitioned(client, options.schema, options.reports, now);
      partitions = await maintainPartitions(client, options.schema, options.reports, now);
    },
  });
  if (tables === undefined || partitions === undefined)
    throw new Error('setupWarehouse: the report tables step did not run');
  return { ...result, tables, views, dailyViews, converted, partitions };
}
