import { InvalidArgumentError, type Command } from 'commander';
import { RedisUnavailableError } from '../../schedule/connection.js';
import { openQueues, type Queues } from '../../schedule/queues.js';
import { collectStatus } from '../../observe/status.js';
import { renderStatus } from '../../observe/status-render.js';
import { createPool } from '../../warehouse/pool.js';
import type { CliContext } from '../context.js';
import { postgresFailure } from './heal.js';
import { SUMMARIES } from './summaries.js';

interface StatusFlags {
  readonly days?: number;
  readonly json: boolean;
}

/** `adops status`: per report what is loaded, missing and failed, queue counts, a coverage grid. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('status')
    .description(SUMMARIES.status)
    .option('--days <n>', 'days shown (default ADOPS_HEAL_DAYS, 30)', whole)
    .option('--json', 'print the status as JSON for scripts', false)
    .action(async (flags: StatusFlags) => {
      const config = ctx.config();
      const jobs = ctx.jobs();
      const logger = ctx.logger();
      const pool = createPool(config, { max: 2, logger });
      let queues: Queues | undefined;
      try {
        queues = await openQueues(config);
      } catch (error) {
        // The warehouse half of the status is still worth showing without Redis.
        if (!(error instanceof RedisUnavailableError)) throw error;
        logger.warn(error.message);
      }
      try {
        const status = await collectStatus(pool, config.schema, jobs, queues, flags.days ?? config.healDays);
        ctx.stdout.write(flags.json ? `${JSON.stringify(status, null, 2)}\n` : renderStatus(status));
      } catch (error) {
        throw postgresFailure(error);
      } finally {
        await queues?.close();
        await pool.end();
      }
    });
}

function whole(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 366)
    throw new InvalidArgumentError('expected a whole number of days from 1 to 366');
  return Number(value);
}
