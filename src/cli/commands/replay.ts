import type { Command } from 'commander';
import { secretsOf } from '../../config/env.js';
import { ReplayError } from '../../warehouse/errors.js';
import { createPool, warehouseOf } from '../../warehouse/pg.js';
import { postgresFailure } from './postgres-failure.js';
import { replayLoad } from '../../worker/pull.js';
import { CommandFailed, UsageError, type CliContext } from '../context.js';
import { SUMMARIES } from './summaries.js';

/** `adops replay --load-id N`: re-flatten and reload an archived response, without the API. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('replay')
    .description(SUMMARIES.replay)
    .requiredOption('--load-id <n>', 'load_id from report_loads whose raw body to replay')
    .option('--strict-reconcile', 'fail when the rows do not sum to the totals', false)
    .action(async (flags: { loadId: string; strictReconcile: boolean }) => {
      if (!/^[1-9]\d{0,15}$/.test(flags.loadId))
        throw new UsageError(
          `--load-id ${JSON.stringify(flags.loadId)} is not a load_id: expected a positive whole number`,
        );
      const config = ctx.config();
      const reports = ctx.jobs().reports;
      const logger = ctx.logger();
      const pool = createPool(config, { max: 2, logger });
      try {
        const loadId = Number(flags.loadId);
        const wh = warehouseOf(pool, config.schema, {
          copyFormat: config.copyFormat,
          logger: logger.child({ replayOf: loadId }),
        });
        const outcome = await replayLoad(wh, reports, loadId, {
          strictReconcile: flags.strictReconcile,
          secrets: secretsOf(config),
        });
        const reconciled = outcome.reconciled
          ? 'reconciled'
          : outcome.unreconciledReason === 'no totals'
            ? 'NOT reconciled: no totals'
            : `NOT reconciled (${outcome.unreconciledReason ?? 'mismatch'}): ${JSON.stringify(outcome.mismatch)}`;
        ctx.stdout.write(
          outcome.status === 'loaded'
            ? `load ${loadId} replayed as load ${outcome.loadId}: ${outcome.rows} rows, ${reconciled}\n`
            : `load ${loadId} replayed as load ${outcome.loadId}: superseded, a newer response of the period is loaded; nothing changed\n`,
        );
      } catch (error) {
        if (error instanceof ReplayError) throw new CommandFailed(error.message, { cause: error });
        const failure = postgresFailure(error);
        if (failure instanceof CommandFailed) throw failure;
        if (error instanceof Error && error.name !== 'Error')
          throw new CommandFailed(error.message, { cause: error });
        throw error;
      } finally {
        await pool.end();
      }
    });
}
