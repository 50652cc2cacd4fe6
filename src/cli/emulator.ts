// The commands around the emulator: `adops emulator` (the local API emulator until a signal) and
// `adops demo` (the whole pipeline on the embedded emulators).
import { InvalidArgumentError, Option, type Command } from 'commander';
import { QUEUE_PREFIX, SCHEMA_NAME, SYSTEM_SCHEMA, SYSTEM_SCHEMA_PROBLEM } from '../platform/config/env.js';
import { DEMO_PREFIX, DEMO_SCHEMA, runDemo, type DemoOptions } from './demo.js';

import {
  describeQuirks,
  ECHO_FORMS,
  loadKeysFile,
  optionsOfFlags,
  parseEchoPlaces,
  parseLatency,
  parseQuirkList,
  PROFILE_NAMES,
  REPORT_PARAMS_FORMS,
  startEmulator,
  type EmulatorOptions,
  type FaultAndQuirkFlags,
  type RequestLogEntry,
} from '../emulator/index.js';
import { createLogger } from '../platform/log/logger.js';
import {
  CommandFailed,
  intOption,
  parsedBy,
  postgresFailure,
  SUMMARIES,
  untilSignal,
  usageError,
  type CliContext,
} from './context.js';

type EmulatorFlags = FaultAndQuirkFlags &
  Required<Pick<EmulatorOptions, 'port' | 'host' | 'seed' | 'cellsPerDay' | 'demoKey'>> &
  Pick<EmulatorOptions, 'keys'> & {
    readonly lateDays: number;
    readonly campaigns?: number;
    readonly now?: Date;
  };

const fraction = (text: string) => {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new InvalidArgumentError('a fraction from 0 to 1');
  return n;
};
const latency = parsedBy(parseLatency);
const quirkList = parsedBy(parseQuirkList);
const echoPlaces = parsedBy(parseEchoPlaces);
const seconds = (text: string) => {
  const n = Number(text);
  if (!/^-?\d+$/.test(text.trim()) || Math.abs(n) > 86_400)
    throw new InvalidArgumentError(
      'whole seconds from -86400 to 86400 (negative: the server clock is behind)',
    );
  return n;
};
/** An option taking one of `choices`. */
const choice = (flags: string, description: string, choices: readonly string[]) =>
  new Option(flags, description).choices(choices);
const instant = (text: string) => {
  const t = Date.parse(text);
  if (!Number.isFinite(t)) throw new InvalidArgumentError('an ISO date-time, e.g. 2025-06-10T12:00:00Z');
  return new Date(t);
};

/** `adops emulator`: runs the API emulator until SIGINT/SIGTERM; the first stdout line is its base URL. */
export function registerEmulator(program: Command, ctx: CliContext): void {
  program
    .command('emulator')
    .description(SUMMARIES.emulator)
    .option('--port <port>', 'port to listen on (0 = a free port)', intOption(0, 65_535), 0)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--seed <n>', 'seed of the catalogue and report data', intOption(0, 2 ** 32 - 1), 1)
    .option('--cells-per-day <n>', 'traffic cells per day', intOption(0, 5_000_000), 2000)
    .option('--late-days <n>', 'late-data window in days (0 = every past day final)', intOption(0, 60), 3)
    .option('--campaigns <n>', 'campaigns in the seeded catalogue', intOption(1, 2000))
    .option('--fail-rate <r>', 'fraction of requests answered 500', fraction)
    .option('--rate-limit-rate <r>', 'fraction of requests answered 429', fraction)
    .option('--retry-after <s>', 'Retry-After seconds of those 429s', intOption(0, 3600))
    .option('--drop-rate <r>', 'fraction of connections dropped without an answer', fraction)
    .option('--malformed-rate <r>', 'fraction answered 200 with malformed JSON', fraction)
    .option('--truncate-rate <r>', 'fraction answered 200 with a body cut off mid-way', fraction)
    .option('--latency-ms <a[-b]>', 'added latency: fixed or a uniform range', latency)
    .option('--fault-paths <list>', 'comma-separated path prefixes faults apply to (default /v2)')
    .option('--fault-seed <n>', 'seed of the fault sequence', intOption(0, 2 ** 32 - 1))
    .option(
      '--keys <file>',
      'JSON file of extra keys: [{"key", "scopes", "methods", "ips"}]',
      parsedBy(loadKeysFile),
    )
    .option('--no-demo-key', 'do not accept the full-access key "demo-key"')
    .option('--now <iso>', 'freeze the emulator clock at this instant (late data is relative to it)', instant)
    .option('--storm-rate <r>', 'fraction of requests that start a storm of consecutive 429s', fraction)
    .option('--storm-length <n>', 'consecutive 429s in one storm (default 5)', intOption(1, 10_000))
    .option('--drop-mid-body-rate <r>', 'fraction of connections cut after part of the body', fraction)
    .option('--drip-rate <r>', 'fraction of bodies sent half at once, then a byte at a time', fraction)
    .option(
      '--drip-interval-ms <ms>',
      'milliseconds between the dripped bytes (default 2000)',
      intOption(1, 600_000),
    )
    .option('--html-share <r>', 'with html-errors, share of injected 5xx sent as HTML 502 pages', fraction)
    .addOption(
      choice('--profile <name>', 'a preset of quirks and faults (flags override it)', PROFILE_NAMES).default(
        'faithful',
      ),
    )
    .option(
      '--quirks <list>',
      'boolean quirks to turn on, comma separated (no-NAME turns one off): string-values, empty-as-array, ' +
        'sort-keys, html-errors, gzip, rate-limit-headers, strict',
      quirkList,
    )
    .addOption(
      choice(
        '--report-params <form>',
        'the only GET /reports parameter form understood',
        REPORT_PARAMS_FORMS,
      ),
    )
    .addOption(choice('--auth-form <form>', 'the only auth header accepted', ['any', 'bearer', 'x-api-key']))
    .addOption(choice('--totals <mode>', 'report totals', ['normal', 'missing', 'empty-array']))
    .addOption(choice('--report-shape <shape>', 'report items', ['nested', 'rows']))
    .option(
      '--strict',
      'enforce rules the spec does not state: limit <= 1000, 366 days, 2-letter countries, 404 first',
    )
    .addOption(choice('--unknown-fields <mode>', 'unknown body fields: dropped or 400', ['drop', 'reject']))
    .option('--clock-skew <seconds>', 'seconds added to the Date header', seconds)
    .option(
      '--echo-key <places>',
      "repeat the caller's API key back, comma separated: body, error, html, header, or all",
      echoPlaces,
    )
    .addOption(choice('--echo-key-as <form>', 'how the echoed key is written (default json)', ECHO_FORMS))
    .option(
      '--max-days-per-request <n>',
      'answer a report range longer than N days with a 400 naming the limit (0 = none)',
      intOption(0, 366),
    )
    .option(
      '--ms-per-1000-rows <ms>',
      'answer a report this much later per 1,000 rows it sends',
      intOption(0, 60_000),
    )
    .addHelpText(
      'after',
      '\nPrints its base URL (ending in /v2) as the first line of stdout, logs to stderr, and runs until ' +
        'SIGINT or SIGTERM. Control endpoints: GET /_control/stats, PUT /_control/faults, GET and PUT ' +
        '/_control/quirks, PUT /_control/clock, POST /_control/override. See docs/emulator.md.',
    )
    .action((flags: EmulatorFlags) => run(ctx, flags));
}

/** A request logger on stderr; the emulator must run even where ADOPS_* variables are invalid. */
function requestLogger(ctx: CliContext): (entry: RequestLogEntry) => void {
  try {
    const logger = ctx.logger().child({ component: 'emulator' });
    return (entry) => logger.debug(entry, 'request');
  } catch {
    return () => undefined;
  }
}

async function run(ctx: CliContext, flags: EmulatorFlags): Promise<void> {
  const now = flags.now;
  let chosen: ReturnType<typeof optionsOfFlags>;
  try {
    chosen = optionsOfFlags(flags);
  } catch (error) {
    throw usageError(error instanceof Error ? error.message : String(error), error);
  }
  const emulator = await startEmulator({
    port: flags.port,
    host: flags.host,
    seed: flags.seed,
    cellsPerDay: flags.cellsPerDay,
    lateDataDays: flags.lateDays,
    keys: flags.keys ?? [],
    demoKey: flags.demoKey,
    profile: flags.profile,
    faults: chosen.faults,
    quirks: chosen.quirks,
    onRequest: requestLogger(ctx),
    ...(flags.campaigns === undefined ? {} : { catalogue: { campaigns: flags.campaigns } }),
    ...(now === undefined ? {} : { now: () => now }),
  });
  ctx.stdout.write(`${emulator.url}\n`);
  ctx.stderr.write(
    `adops emulator: listening on ${emulator.url} (seed ${flags.seed}${flags.demoKey ? ', key "demo-key"' : ''}; ` +
      `profile ${flags.profile}; quirks: ${describeQuirks(chosen.resolved)}); ` +
      `control at ${emulator.origin}/_control/stats; Ctrl-C stops\n`,
  );
  await untilSignal();
  await emulator.close();
}

export function registerDemo(program: Command, ctx: CliContext): void {
  program
    .command('demo')
    .description(SUMMARIES.demo)
    .option('--days <n>', 'days to backfill, ending yesterday', intOption(1, 90), 7)
    .option('--cells-per-day <n>', 'traffic cells per emulated day', intOption(1, 1_000_000), 2000)
    .option('--concurrency <n>', 'pulls processed at once', intOption(1, 64), 8)
    .option('--schema <name>', "the demo's own schema (never ADOPS_SCHEMA's data)", schemaName, DEMO_SCHEMA)
    .option('--queue-prefix <prefix>', "the demo's own queue prefix", queuePrefix, DEMO_PREFIX)
    .addOption(
      new Option('--queue <where>', 'where its queues live: postgres (no Redis needed) or redis')
        .choices(['postgres', 'redis'])
        .default('postgres'),
    )
    .addHelpText(
      'after',
      '\nNeeds Postgres only (DATABASE_URL or PG* variables), and Redis (REDIS_URL) with --queue redis; ADOPS_BASE_URL and the API key are ' +
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
        ...opts,
      }).catch((error: unknown) => {
        throw postgresFailure(error);
      });
      ctx.stdout.write(`\ndemo finished in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
      if (result.failed > 0)
        throw new CommandFailed(`${result.failed} of ${result.pulls} pulls failed (listed above)`);
    });
}

type DemoFlags = Required<
  Pick<DemoOptions, 'days' | 'cellsPerDay' | 'concurrency' | 'schema' | 'queuePrefix' | 'queue'>
>;

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
