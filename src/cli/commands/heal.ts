import { InvalidArgumentError, type Command } from 'commander';
import { enqueuePulls } from '../../queue/enqueue.js';
import { summarize } from '../../queue/enqueue.js';
import { pullLabel } from '../../plan/pulls.js';
import { selectAccounts } from '../../config/accounts.js';
import { readHealPlan } from '../../queue/enqueue.js';
import { warehouseOf, createPool } from '../../warehouse/pg.js';
import type { CliContext } from '../context.js';
import { enqueuedLine, open, redisOutageOption, waitWithProgress } from './backfill.js';
import { postgresFailure } from './postgres-failure.js';
import { SUMMARIES } from './summaries.js';

export { postgresFailure } from './postgres-failure.js';

interface HealFlags {
  readonly days?: number;
  readonly wait: boolean;
  readonly dryRun: boolean;
  readonly account?: string;
  readonly redisOutageSeconds?: number;
}

/** `adops heal`: re-plan from the warehouse what is missing or failed, and enqueue it. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('heal')
    .description(SUMMARIES.heal)
    .option('--days <n>', 'days to look back (default ADOPS_HEAL_DAYS, 30)', whole)
    .option('--wait', 'show progress until every pull finished; exit 1 listing failed periods', false)
    .option(...redisOutageOption)
    .option('--dry-run', 'print the periods it would pull; enqueue nothing', false)
    .option('--account <name>', 'only this account of ADOPS_ACCOUNTS_FILE (default: every account)')
    .addHelpText(
      'after',
      '\nPostgres (report_loads) is the record of what is loaded, so heal works after Redis lost its ' +
        'queue. Reads DATABASE_URL, ADOPS_SCHEMA, REDIS_URL and ADOPS_QUEUE_PREFIX.',
    )
    .action(async (flags: HealFlags) => {
      const config = ctx.config();
      const reports = ctx.jobs().reports;
      const accounts = selectAccounts(config.accounts, flags.account);
      const pool = createPool(config, { max: 2, logger: ctx.logger() });
      let plan;
      try {
        plan = await readHealPlan(
          warehouseOf(pool, config.schema),
          reports,
          flags.days ?? config.healDays,
          new Date(),
          accounts,
        );
      } catch (error) {
        throw postgresFailure(error);
      } finally {
        await pool.end();
      }
      if (flags.dryRun) {
        for (const p of plan) ctx.stdout.write(`${pullLabel(p)}\n`);
        ctx.stdout.write(`${plan.length} pulls would heal the last ${flags.days ?? config.healDays} days\n`);
        return;
      }
      const queues = await open(ctx);
      try {
        const result = summarize(await enqueuePulls(queues.pulls, plan));
        ctx.stdout.write(`${enqueuedLine(result)}\n`);
        if (flags.wait) await waitWithProgress(ctx, queues, result, flags.redisOutageSeconds);
      } finally {
        await queues.close();
      }
    });
}

function whole(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 3660)
    throw new InvalidArgumentError('expected a whole number of days from 1 to 3660');
  return Number(value);
}
