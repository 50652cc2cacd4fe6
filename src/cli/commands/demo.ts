import { InvalidArgumentError, type Command } from 'commander';
import { QUEUE_PREFIX, SCHEMA_NAME, SYSTEM_SCHEMA, SYSTEM_SCHEMA_PROBLEM } from '../../config/env.js';
import { createLogger } from '../../log/logger.js';
import { runDemo } from '../../demo/run.js';
import { DEMO_PREFIX, DEMO_SCHEMA, DemoRefused } from '../../demo/target.js';
import { CommandFailed, UsageError, type CliContext } from '../context.js';
import { intOption } from '../options.js';
import { SUMMARIES } from './summaries.js';
import { postgresFailure } from './postgres-failure.js';

/** `adops demo`: the whole pipeline on the embedded emulator. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('demo')
    .description(SUMMARIES.demo)
    .option('--days <n>', 'days to backfill, ending yesterday', intOption(1, 90), 7)
    .option('--cells-per-day <n>', 'traffic cells per emulated day', intOption(1, 1_000_000), 2000)
    .option('--concurrency <n>', 'pulls processed at once', intOption(1, 64), 8)
    .option('--schema <name>', "the demo's own schema (never ADOPS_SCHEMA's data)", schemaName, DEMO_SCHEMA)
    .option('--queue-prefix <prefix>', "the demo's own queue prefix", queuePrefix, DEMO_PREFIX)
    .addHelpText(
      'after',
      '\nNeeds Postgres (DATABASE_URL or PG* variables) and Redis (REDIS_URL); ADOPS_BASE_URL and the API key are ' +
        `not used.\nTables go to the schema ${DEMO_SCHEMA} and jobs to the queue prefix ${DEMO_PREFIX}, whatever ` +
        'ADOPS_SCHEMA and ADOPS_QUEUE_PREFIX say. A schema holding tables the demo did not create is refused ' +
        '(exit 2), and so is the production queue prefix. Running it again reloads the same days in place.',
    )
    .action(async (opts: DemoFlags) => {
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
        schema: opts.schema,
        queuePrefix: opts.queuePrefix,
      }).catch((error: unknown) => {
        if (error instanceof DemoRefused) throw new UsageError(error.message, { cause: error });
        throw postgresFailure(error);
      });
      ctx.stdout.write(`\ndemo finished in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
      if (result.failed > 0)
        throw new CommandFailed(`${result.failed} of ${result.pulls} pulls failed (listed above)`);
    });
}

interface DemoFlags {
  readonly days: number;
  readonly cellsPerDay: number;
  readonly concurrency: number;
  readonly schema: string;
  readonly queuePrefix: string;
}

function schemaName(value: string): string {
  if (!SCHEMA_NAME.test(value))
    throw new InvalidArgumentError('expected a lower-case SQL identifier: letters, digits, underscore');
  if (SYSTEM_SCHEMA.test(value)) throw new InvalidArgumentError(`expected ${SYSTEM_SCHEMA_PROBLEM}`);
  return value;
}

function queuePrefix(value: string): string {
  if (!QUEUE_PREFIX.test(value))
    throw new InvalidArgumentError('expected letters, digits and _ . : - (up to 100)');
  return value;
}
