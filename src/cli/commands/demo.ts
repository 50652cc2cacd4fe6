import type { Command } from 'commander';
import { createLogger } from '../../log/logger.js';
import { runDemo } from '../../demo/run.js';
import { CommandFailed, type CliContext } from '../context.js';
import { intOption } from '../options.js';
import { SUMMARIES } from './summaries.js';

/** `adops demo`: the whole pipeline on the embedded emulator. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('demo')
    .description(SUMMARIES.demo)
    .option('--days <n>', 'days to backfill, ending yesterday', intOption(1, 90), 7)
    .option('--cells-per-day <n>', 'traffic cells per emulated day', intOption(1, 1_000_000), 2000)
    .option('--concurrency <n>', 'pulls processed at once', intOption(1, 64), 8)
    .addHelpText(
      'after',
      '\nNeeds Postgres (DATABASE_URL or PG* variables) and Redis (REDIS_URL); ADOPS_BASE_URL and the API key are ' +
        'not used.\nTables go to ADOPS_SCHEMA (default adops); jobs use the queue prefix adops-demo unless ' +
        'ADOPS_QUEUE_PREFIX is set. Running it again reloads the same days in place.',
    )
    .action(async (opts: { days: number; cellsPerDay: number; concurrency: number }) => {
      const config = ctx.config();
      // Quiet by default so the demo's own output reads well; LOG_LEVEL still wins when set.
      const logger = createLogger({
        level: ctx.env.LOG_LEVEL === undefined || ctx.env.LOG_LEVEL === '' ? 'warn' : config.logLevel,
        secrets: [],
        destination: ctx.stderr,
      });
      const started = Date.now();
      const result = await runDemo({
        config,
        logger,
        out: (text) => ctx.stdout.write(text),
        progress: ctx.stderr,
        days: opts.days,
        cellsPerDay: opts.cellsPerDay,
        concurrency: opts.concurrency,
      });
      ctx.stdout.write(`\ndemo finished in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
      if (result.failed > 0)
        throw new CommandFailed(`${result.failed} of ${result.pulls} pulls failed (listed above)`);
    });
}
