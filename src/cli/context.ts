// What every command of `adops` shares: its lazy context, the failures main() turns into exit codes, the
// `--help` summaries, option parsers, and the warehouse and queues a command opens.
import { once } from 'node:events';
import { InvalidArgumentError } from 'commander';
import type { Config } from '../platform/config/env.js';
import type { JobSet } from '../platform/config/jobs.js';
import type { Logger } from '../platform/log/logger.js';
import type { Queues } from '../platform/queue/queues.js';
import { errorCode } from '../platform/retry/classify.js';
import { TerminalError } from '../platform/retry/errors.js';
import type { Warehouse } from '../platform/pg/handle.js';

/** What every command receives: the environment (read here only), streams, lazy config, jobs and logger. */
export interface CliContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  config(): Config;
  jobs(): JobSet;
  logger(): Logger;
}

/** Thrown by a command that cannot go on: main() prints the message and exits 1, or 2 with `usage`. */
export class CommandFailed extends TerminalError {
  override name = 'CommandFailed';
  readonly exitCode: 1 | 2;
  constructor(message: string, options: { readonly cause?: unknown; readonly usage?: boolean } = {}) {
    super(message, options);
    this.exitCode = options.usage === true ? 2 : 1;
  }
}

export function usageError(message: string, cause?: unknown): CommandFailed {
  return new CommandFailed(message, { cause, usage: true });
}

/** Rethrows an error of one of `kinds` as a CommandFailed (exit 2 with `usage`) with `prefix`; others as they are. */
export function rethrowAs(
  kinds: ReadonlyArray<abstract new (...args: never[]) => Error>,
  prefix = '',
  usage = false,
): (error: unknown) => never {
  return (error) => {
    if (error instanceof Error && kinds.some((kind) => error instanceof kind))
      throw new CommandFailed(prefix + error.message, { cause: error, usage });
    throw error;
  };
}

/** The context of a command that runs; `onConfig` hears the config once loaded, with the secrets to redact. */
export async function createContext(
  env: CliContext['env'],
  stdout: CliContext['stdout'],
  stderr: CliContext['stderr'],
  onConfig: (config: Config, secrets: readonly string[]) => void,
): Promise<CliContext> {
  const [
    { loadConfig, secretsOf },
    { loadJobs },
    { createLogger },
    { checkAccountReports },
    { unknownVariableWarnings },
  ] = await Promise.all([
    import('../platform/config/env.js'),
    import('../platform/config/jobs.js'),
    import('../platform/log/logger.js'),
    import('../platform/config/accounts.js'),
    import('../platform/config/unknown-vars.js'),
  ]);
  let config: Config | undefined;
  let jobs: JobSet | undefined;
  let logger: Logger | undefined;
  const ctx: CliContext = {
    env,
    stdout,
    stderr,
    config: () => {
      if (config === undefined) {
        config = loadConfig(env);
        // The key is known only now (ADOPS_API_KEY_FILE is read here): tell whoever prints errors.
        onConfig(config, secretsOf(config));
        // A misspelt variable is ignored, its default used: say so, once each, without stopping.
        const named = config.accounts.flatMap((a) => (a.apiKeyEnv === undefined ? [] : [a.apiKeyEnv]));
        for (const line of unknownVariableWarnings(env, named)) stderr.write(`adops: warning: ${line}\n`);
      }
      return config;
    },
    jobs: () => {
      if (jobs !== undefined) return jobs;
      const c = ctx.config();
      jobs = loadJobs(c.jobsDir);
      // An account's reports: list must name definitions that exist.
      if (c.accountsFile !== undefined)
        checkAccountReports(c.accounts, new Set(jobs.reports.map((r) => r.name)), c.accountsFile);
      return jobs;
    },
    logger: () => {
      const c = ctx.config();
      logger ??= createLogger({ level: c.logLevel, secrets: secretsOf(c), destination: stderr });
      return logger;
    },
  };
  return ctx;
}

/** A commander parser for a whole number in [min, max]: `expected a whole number of days from 1 to 366`. */
export function intOption(min: number, max: number, unit?: string): (value: string) => number {
  return (value: string) => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
      throw new InvalidArgumentError(
        `expected a whole number${unit === undefined ? '' : ` of ${unit}`} from ${min} to ${max}`,
      );
    return Number(value);
  };
}

/** A commander parser of `parse`, whose error message becomes the flag's. */
export function parsedBy<T>(parse: (text: string) => T): (text: string) => T {
  return (text) => {
    try {
      return parse(text);
    } catch (error) {
      throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
    }
  };
}

/** Resolves with the first SIGINT or SIGTERM, and stops listening for the other. */
export async function untilSignal(): Promise<NodeJS.Signals> {
  const heard = new AbortController();
  const signal = (name: NodeJS.Signals) => once(process, name, { signal: heard.signal }).then(() => name);
  return Promise.race([signal('SIGINT'), signal('SIGTERM')]).finally(() => heard.abort());
}

/** What each command does, as `--help` lists it without loading any command. */
export const SUMMARIES = {
  migrate:
    'apply sql/ migrations in order, once each, under an advisory lock; create report_<name> tables and BI views',
  worker: 'process pulls until SIGTERM/SIGINT, then finish running pulls and stop',
  schedule:
    'upsert one job scheduler per job definition (cron in its time zone, and every `today.every` for `today:`); ' +
    'remove those of deleted definitions',
  backfill:
    'enqueue one pull per report and period from --from to --to (periods loaded before are pulled again), ' +
    "or of each report's unfinished period with --today (provisional)",
  heal: 'enqueue every period of the last N days that has no successful load or whose last attempt failed',
  pull: 'pull one report straight to stdout (no queue, no database): rows on stdout, totals on stderr',
  sync:
    'export campaigns and creatives into Postgres (tables campaigns, creatives, campaign_zones): ' +
    'enqueues a sync for the workers and prints its job id',
  status: 'per report: last loaded period, missing and failed periods, queue counts, coverage grid',
  doctor:
    'probe the configured API server (reachability, TLS, auth forms, scopes, report params, gzip, ' +
    'clock, rate-limit headers) and print the settings to use',
  evolve:
    'show each report table version and the progress of a change of dimensions; --plan, --swap, --drop-old',
  replay: 're-flatten and reload the archived response of a load (report_raw), without calling the API',
  loads:
    'recent loads, newest first: id, report, account, period, status, rows and error (the id for replay)',
  emulator: 'run the local API emulator (spec-faithful, deterministic reports, fault injection)',
  dashboard:
    'serve a web page (Bull Board) showing the BullMQ queues and their jobs; prints its URL as ' +
    'the first line of stdout and runs until Ctrl-C (SIGINT) or SIGTERM',
  accounts:
    "accounts rename FROM TO: move one account's rows, loads and catalogue to a new name in one transaction",
  demo:
    'run the whole pipeline on the embedded emulator: migrate, sync the catalogue, backfill the last days of ' +
    'every default report and today provisionally with an in-process worker, print status and three example BI queries',
} as const;

export type CommandName = keyof typeof SUMMARIES;

/** Where the queues live, for the help of every command that reaches them: on either backend. */
export const QUEUE_HELP =
  "ADOPS_QUEUE says where the queues live: on REDIS_URL (redis, the default) or in DATABASE_URL's database " +
  '(postgres, no Redis at all); ADOPS_QUEUE_PREFIX keeps deployments apart.';

/** Error codes that mean no session with Postgres (ENOENT: a socket folder that does not exist). */
const UNREACHABLE =
  /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOENT|EACCES|57P01|57P02|57P03|53300|28P01|28000|3D000)$/;

/** pg's own errors for a connection lost or never made, which carry no code. */
const LOST = /^Connection terminated( unexpectedly| due to connection timeout)$|^timeout expired$/;

/** A CommandFailed naming DATABASE_URL when Postgres cannot be reached (or refused the login), else undefined. */
export function cannotConnect(error: unknown): CommandFailed | undefined {
  const code = errorCode(error);
  const message = error instanceof Error ? error.message : '';
  if (typeof code === 'string' ? !UNREACHABLE.test(code) : !LOST.test(message)) return undefined;
  return new CommandFailed(
    `cannot connect to Postgres (${typeof code === 'string' ? `${code}: ` : ''}${message}); check DATABASE_URL or the PG* variables`,
    { cause: error },
  );
}

/** A CommandFailed naming DATABASE_URL when Postgres is unreachable or not migrated; others unchanged. */
export function postgresFailure(error: unknown): unknown {
  const unreachable = cannotConnect(error);
  if (unreachable !== undefined) return unreachable;
  const code = errorCode(error);
  if (error instanceof Error && (code === '42P01' || code === '3F000'))
    return new CommandFailed(
      `the warehouse tables are missing (${error.message}); run \`adops migrate\` first (and check ADOPS_SCHEMA)`,
      { cause: error },
    );
  return error;
}

/** Runs `work` on the configured warehouse over a pool of `max` connections, ended afterwards (postgresFailure). */
export async function withWarehouse<T>(
  ctx: CliContext,
  max: number,
  work: (wh: Warehouse) => Promise<T>,
): Promise<T> {
  const { openWarehouse } = await import('../platform/pg/handle.js');
  const wh = openWarehouse(ctx.config(), { max, logger: ctx.logger() });
  try {
    return await work(wh);
  } catch (error) {
    throw postgresFailure(error);
  } finally {
    await wh.pool.end();
  }
}

/** Runs `work` on the queues, closed afterwards; an unreachable Redis is a one-line failure ending with `hint`. */
export async function withQueues<T>(
  ctx: CliContext,
  work: (queues: Queues) => Promise<T>,
  hint = '',
): Promise<T> {
  const [{ openQueues }, { RedisUnavailableError }] = await Promise.all([
    import('../platform/queue/queues.js'),
    import('../platform/queue/connection.js'),
  ]);
  const queues = await openQueues(ctx.config()).catch((error: unknown) => {
    if (!(error instanceof RedisUnavailableError)) throw error;
    throw new CommandFailed(`${error.message}${hint}`, { cause: error });
  });
  try {
    return await work(queues);
  } finally {
    await queues.close();
  }
}
