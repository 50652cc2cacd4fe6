// The step `adops migrate` runs after the SQL files (see src/warehouse/setup.ts): report_<name>
// tables from the definitions, then the BI views over them. Kept here so the test template is
// migrated exactly as the command migrates.
import type { ClientBase } from 'pg';
import type { ReportJob } from '../../src/config/jobs.js';
import { ensureViews } from '../../src/warehouse/entities/views.js';
import { ensureReportTables } from '../../src/warehouse/report-tables.js';

export function afterMigrationsFor(
  schema: string,
  reports: readonly ReportJob[],
): ((client: ClientBase) => Promise<void>) | undefined {
  return async (client) => {
    await ensureReportTables(client, schema, reports);
    await ensureViews(client, schema, reports);
  };
}
