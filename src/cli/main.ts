import { Command, CommanderError } from 'commander';
import type { Config } from '../config/env.js';
import { ConfigError } from '../config/files.js';
import { describeRedisTarget } from '../config/connections.js';
import { isRedisConnectionLoss, outageReason } from '../retry/classify.js';
import { redactSecrets } from '../log/redact.js';
import { terminalSafe } from '../observe/format.js';
import { CommandFailed, createContext, UsageError, type CliContext } from './context.js';
import { registerCommands } from './commands/index.js';

/**
 * Builds the `adops` program for `args` (the arguments after the script): the command they name
 * is loaded in full with its context, the others only listed. `onSecrets` hears the API key once
 * the command's config is loaded.
 */
export async function buildProgram(
  args: readonly string[],
  env: CliContext['env'],
  stdout: CliContext['stdout'],
  stderr: CliContext['stderr'],
  onSecrets?: (secrets: readonly string[]) => void,
  onConfig?: (config: Config) => void,
): Promise<Command> {
  const program = new Command('adops')
    .description('Pull ad server reports and catalogue into Postgres, on schedule, idempotently.')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => stdout.write(s),
      writeErr: (s) => stderr.write(s),
    });
  await registerCommands(program, args, () => createContext(env, stdout, stderr, onSecrets, onConfig));
  return program;
}

/**
 * Ends the process quietly when the reader of stdout goes away (`adops status | head`): an EPIPE
 * is the reader's choice, not a failure worth a stack trace.
 */
function endOnClosedPipe(stdout: CliContext['stdout']): void {
  stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

/**
 * Runs the CLI and resolves to its exit code: 0 success, 1 the work failed, 2 bad usage or
 * configuration. `env` is the only place the process environment enters the program.
 */
export async function main(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
  stdout: CliContext['stdout'] = process.stdout,
  stderr: CliContext['stderr'] = process.stderr,
): Promise<number> {
  if (stdout === process.stdout) endOnClosedPipe(stdout);
  // The key from ADOPS_API_KEY_FILE joins once the command has loaded its config.
  const secrets = [env.ADOPS_API_KEY, env.ADOPS_WEBHOOK_SECRET].filter((s): s is string => s !== undefined);
  // Messages can quote the API (an error body, a bad value): escape their control characters, line
  // by line, so a hostile server cannot drive the user's terminal through them.
  const say = (text: string) =>
    stderr.write(`${redactSecrets(text, secrets).split('\n').map(terminalSafe).join('\n')}\n`);
  let config: Config | undefined;
  try {
    const program = await buildProgram(
      argv.slice(2),
      env,
      stdout,
      stderr,
      (s) => secrets.push(...s),
      (c) => (config = c),
    );
    await program.parseAsync([...argv]);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.help' ||
        error.code === 'commander.version'
      )
        return 0;
      return 2; // commander already printed the message
    }
    if (error instanceof ConfigError || error instanceof UsageError) {
      say(`adops: ${error.message}`);
      return 2;
    }
    if (error instanceof CommandFailed) {
      say(`adops: ${error.message}`);
      return 1;
    }
    // Redis going away mid-command, where the command has no word of its own for it: one line.
    if (isRedisConnectionLoss(error)) {
      const where = config === undefined ? '' : ` at ${describeRedisTarget(config.redis)}`;
      say(
        `adops: lost Redis${where} (${outageReason(error)}) before the command finished: ` +
          'check that Redis is running, then run the command again',
      );
      return 1;
    }
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    say(`adops: ${message}`);
    return 1;
  }
}
