import { InvalidArgumentError, type Command } from 'commander';
import {
  loadKeysFile,
  parseLatency,
  startEmulator,
  type EmulatorKey,
  type FaultOptions,
  type RequestLogEntry,
} from '../../emulator/index.js';
import { UsageError, type CliContext } from '../context.js';

interface EmulatorFlags {
  readonly port: number;
  readonly host: string;
  readonly seed: number;
  readonly cellsPerDay: number;
  readonly lateDays: number;
  readonly campaigns?: number;
  readonly failRate?: number;
  readonly rateLimitRate?: number;
  readonly retryAfter?: number;
  readonly dropRate?: number;
  readonly malformedRate?: number;
  readonly truncateRate?: number;
  readonly latencyMs?: number | [number, number];
  readonly faultPaths?: string;
  readonly faultSeed?: number;
  readonly keys?: string;
  readonly demoKey: boolean;
  readonly now?: Date;
}

const whole = (min: number, max: number) => (text: string) => {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max)
    throw new InvalidArgumentError(`a whole number from ${min} to ${max}`);
  return n;
};
const fraction = (text: string) => {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new InvalidArgumentError('a fraction from 0 to 1');
  return n;
};
const latency = (text: string) => {
  try {
    return parseLatency(text);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
};
const instant = (text: string) => {
  const t = Date.parse(text);
  if (!Number.isFinite(t)) throw new InvalidArgumentError('an ISO date-time, e.g. 2025-06-10T12:00:00Z');
  return new Date(t);
};

/** `adops emulator`: runs the API emulator until SIGINT/SIGTERM; the first stdout line is its base URL. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('emulator')
    .description('run the local API emulator (spec-faithful, deterministic reports, fault injection)')
    .option('--port <port>', 'port to listen on (0 = a free port)', whole(0, 65_535), 0)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--seed <n>', 'seed of the catalogue and report data', whole(0, 2 ** 32 - 1), 1)
    .option('--cells-per-day <n>', 'traffic cells per day', whole(0, 5_000_000), 2000)
    .option('--late-days <n>', 'late-data window in days (0 = every past day final)', whole(0, 60), 3)
    .option('--campaigns <n>', 'campaigns in the seeded catalogue', whole(1, 2000))
    .option('--fail-rate <r>', 'fraction of requests answered 500', fraction)
    .option('--rate-limit-rate <r>', 'fraction of requests answered 429', fraction)
    .option('--retry-after <s>', 'Retry-After seconds of those 429s', whole(0, 3600))
    .option('--drop-rate <r>', 'fraction of connections dropped without an answer', fraction)
    .option('--malformed-rate <r>', 'fraction answered 200 with malformed JSON', fraction)
    .option('--truncate-rate <r>', 'fraction answered 200 with a body cut off mid-way', fraction)
    .option('--latency-ms <a[-b]>', 'added latency: fixed or a uniform range', latency)
    .option('--fault-paths <list>', 'comma-separated path prefixes faults apply to (default /v2)')
    .option('--fault-seed <n>', 'seed of the fault sequence', whole(0, 2 ** 32 - 1))
    .option('--keys <file>', 'JSON file of extra keys: [{"key", "scopes", "methods", "ips"}]')
    .option('--no-demo-key', 'do not accept the full-access key "demo-key"')
    .option('--now <iso>', 'freeze the emulator clock at this instant (late data is relative to it)', instant)
    .addHelpText(
      'after',
      '\nPrints its base URL (ending in /v2) as the first line of stdout, logs to stderr, and runs until ' +
        'SIGINT or SIGTERM. Control endpoints: GET /_control/stats, PUT /_control/faults, PUT /_control/clock, ' +
        'POST /_control/override. See docs/emulator.md.',
    )
    .action((flags: EmulatorFlags) => run(ctx, flags));
}

function faultsOf(flags: EmulatorFlags): FaultOptions {
  const f: FaultOptions = {};
  if (flags.failRate !== undefined) f.failRate = flags.failRate;
  if (flags.rateLimitRate !== undefined) f.rateLimitRate = flags.rateLimitRate;
  if (flags.retryAfter !== undefined) f.retryAfterSeconds = flags.retryAfter;
  if (flags.dropRate !== undefined) f.dropRate = flags.dropRate;
  if (flags.malformedRate !== undefined) f.malformedRate = flags.malformedRate;
  if (flags.truncateRate !== undefined) f.truncateRate = flags.truncateRate;
  if (flags.latencyMs !== undefined) f.latencyMs = flags.latencyMs;
  if (flags.faultPaths !== undefined) f.paths = flags.faultPaths.split(',').filter((p) => p !== '');
  if (flags.faultSeed !== undefined) f.seed = flags.faultSeed;
  const sum =
    (f.failRate ?? 0) +
    (f.rateLimitRate ?? 0) +
    (f.dropRate ?? 0) +
    (f.malformedRate ?? 0) +
    (f.truncateRate ?? 0);
  if (sum > 1) throw new UsageError(`the fault rates add up to ${sum}; they must add up to at most 1`);
  return f;
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
  let keys: EmulatorKey[] = [];
  if (flags.keys !== undefined) {
    try {
      keys = loadKeysFile(flags.keys);
    } catch (error) {
      throw new UsageError(`--keys: ${(error as Error).message}`, { cause: error });
    }
  }
  const now = flags.now;
  const emulator = await startEmulator({
    port: flags.port,
    host: flags.host,
    seed: flags.seed,
    cellsPerDay: flags.cellsPerDay,
    lateDataDays: flags.lateDays,
    keys,
    demoKey: flags.demoKey,
    faults: faultsOf(flags),
    onRequest: requestLogger(ctx),
    ...(flags.campaigns === undefined ? {} : { catalogue: { campaigns: flags.campaigns } }),
    ...(now === undefined ? {} : { now: () => now }),
  });
  ctx.stdout.write(`${emulator.url}\n`);
  ctx.stderr.write(
    `adops emulator: listening on ${emulator.url} (seed ${flags.seed}${flags.demoKey ? ', key "demo-key"' : ''}); ` +
      `control at ${emulator.origin}/_control/stats; Ctrl-C stops\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await emulator.close();
}
