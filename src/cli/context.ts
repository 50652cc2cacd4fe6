import type { Config } from '../config/env.js';
import type { JobSet } from '../config/jobs.js';
import type { Logger } from '../log/logger.js';

/** What every command receives: the environment (read here only), output streams, lazy config. */
export interface CliContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** The validated config; throws ConfigError (exit 2) on a bad variable. */
  config(): Config;
  /** The validated job definitions of config().jobsDir; throws ConfigError (exit 2). */
  jobs(): JobSet;
  /** The process logger (stderr, API key and webhook secret redacted). */
  logger(): Logger;
}

/** Thrown by a command whose work failed: the message is printed, the exit code is 1. */
export class CommandFailed extends Error {
  override readonly name = 'CommandFailed';
}

/** Thrown for bad usage the option parser could not catch: printed, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * The context of a command that runs. It loads the config, job and logging modules (zod, yaml,
 * cron-parser, pino) here, so `adops --help` never pays for them. `onSecrets` hears the strings to
 * redact (the API key, from whichever variable) once the config is loaded; `onConfig` hears the
 * config itself (for the messages main() words).
 */
export async function createContext(
  env: Readonly<Record<string, string | undefined>>,
  stdout: CliContext['stdout'] = process.stdout,
  stderr: CliContext['stderr'] = process.stderr,
  onSecrets: (secrets: readonly string[]) => void = () => undefined,
  onConfig: (config: Config) => void = () => undefined,
): Promise<CliContext> {
  const [{ loadConfig, secretsOf }, { loadJobs }, { createLogger }, { checkAccountReports }] =
    await Promise.all([
      import('../config/env.js'),
      import('../config/jobs.js'),
      import('../log/logger.js'),
      import('../config/accounts.js'),
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
        onSecrets(secretsOf(config));
        onConfig(config);
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
      if (logger === undefined) {
        const c = ctx.config();
        logger = createLogger({
          level: c.logLevel,
          secrets: secretsOf(c),
          destination: stderr,
        });
      }
      return logger;
    },
  };
  return ctx;
}
