import type { Pool } from 'pg';
import type { ReportJob } from '../config/jobs.js';
import { sqlDir } from '../config/paths.js';
import type { Logger } from '../log/logger.js';
import { ensureDailyViews, type DailyViewOutcome } from './entities/daily-views.js';
import { ensureViews, type ViewOutcome } from './entities/views.js';
import { migrate, type MigrateResult } from './migrate.js';
import { ensureReportTables, type EnsureResult } from './report-tables.js';

export interface SetupResult extends MigrateResult {
  readonly tables: EnsureResult;
  readonly views: readonly ViewOutcome[];
  readonly dailyViews: readonly DailyViewOutcome[];
}

/**
 * Everything `adops migrate` does, under one advisory lock: the numbered sql/ files, then a
 * report_<name> table per definition, then the BI views over those tables and their per-day
 * companions. The demo, the test
 * template and the benchmark call this too, so every database is built the same way.
 */
export async function setupWarehouse(
  pool: Pool,
  options: {
    readonly schema: string;
    readonly reports: readonly ReportJob[];
    readonly logger?: Logger;
    /** Whether a new table version switches by itself once it covers the old one (default true). */
    readonly autoSwap?: boolean;
  },
): Promise<SetupResult> {
  let tables: EnsureResult | undefined;
  let views: ViewOutcome[] = [];
  let dailyViews: DailyViewOutcome[] = [];
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
    },
  });
  if (tables === undefined) throw new Error('setupWarehouse: the report tables step did not run');
  return { ...result, tables, views, dailyViews };
}
