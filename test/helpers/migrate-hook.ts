// The step `adops migrate` runs after the SQL files: report_<name> tables from the definitions.
// Kept here so the test template is migrated exactly as the command migrates.
import type { ClientBase } from 'pg';
import type { ReportJob } from '../../src/config/jobs.js';

export function afterMigrationsFor(
  _schema: string,
  _reports: readonly ReportJob[],
): ((client: ClientBase) => Promise<void>) | undefined {
  return undefined;
}
