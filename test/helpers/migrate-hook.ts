// The step `adops migrate` runs after the SQL files: report_<name> tables from the definitions.
// Kept here so the test template is migrated exactly as the command migrates.
import type { ClientBase } from 'pg';
import type { ReportJob } from '../../src/config/jobs.js';
import { ensureReportTables } from '../../src/warehouse/report-tables.js';

export function afterMigrationsFor(
  schema: string,
  reports: readonly ReportJob[],
): ((client: ClientBase) => Promise<void>) | undefined {
  return async (client) => {
    await ensureReportTables(client, schema, reports);
  };
}
