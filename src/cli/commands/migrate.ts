import type { Command } from 'commander';
import { sqlDir } from '../../config/paths.js';
import { SchemaDriftError } from '../../warehouse/errors.js';
import { migrate, MigrationError } from '../../warehouse/migrate.js';
import { createPool } from '../../warehouse/pool.js';
import { ensureReportTables, type EnsureResult } from '../../warehouse/report-tables.js';
import { CommandFailed, type CliContext } from '../context.js';

/** `adops migrate`: the sql/ migrations, then one report_<name> table per job definition. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description(
      'apply sql/ migrations in order, once each, under an advisory lock; create report_<name> tables',
    )
    .action(async () => {
      const config = ctx.config();
      const reports = ctx.jobs().reports;
      const logger = ctx.logger();
      // No statement timeout: a migration may rewrite a big table, and a second run waits on the lock.
      const pool = createPool(config, { max: 1, logger, statementTimeoutMs: 0 });
      let tables: EnsureResult | undefined;
      try {
        const result = await migrate(pool, {
          schema: config.schema,
          sqlDir: sqlDir(),
          logger,
          afterMigrations: async (client) => {
            tables = await ensureReportTables(client, config.schema, reports);
          },
        });
        const out = (line: string) => ctx.stdout.write(`${line}\n`);
        for (const file of result.applied) out(`applied ${file}`);
        if (result.applied.length === 0)
          out(`migrations up to date (${result.alreadyApplied} applied before)`);
        for (const t of tables?.created ?? []) out(`created ${config.schema}.${t}`);
        for (const ix of tables?.indexesAdded ?? []) out(`re-created index ${ix}`);
        for (const t of tables?.orphaned ?? [])
          out(
            `kept ${config.schema}.${t}: no job definition uses it any more (drop it yourself if unwanted)`,
          );
      } catch (error) {
        if (error instanceof MigrationError || error instanceof SchemaDriftError)
          throw new CommandFailed(error.message, { cause: error });
        const code = (error as { code?: string }).code;
        if (code !== undefined && /^(ECONNREFUSED|ENOTFOUND|ETIMEDOUT|28P01|28000|3D000)$/.test(code))
          throw new CommandFailed(
            `cannot connect to Postgres (${code}: ${(error as Error).message}); check DATABASE_URL or the PG* variables`,
            { cause: error },
          );
        throw error;
      } finally {
        await pool.end();
      }
    });
}
