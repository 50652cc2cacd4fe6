import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/errors.js';
import { redactSecrets } from '../log/redact.js';
import { terminalSafe } from '../report/format.js';
import { CommandFailed, createContext, UsageError, type CliContext } from './context.js';
import { COMMANDS } from './commands/index.js';

/** Builds the `adops` program with every command registered. */
export function buildProgram(ctx: CliContext): Command {
  const program = new Command('adops')
    .description('Pull ad server reports and catalogue into Postgres, on schedule, idempotently.')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => ctx.stdout.write(s),
      writeErr: (s) => ctx.stderr.write(s),
    });
  for (const register of COMMANDS) register(program, ctx);
  return program;
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
  const ctx = createContext(env, stdout, stderr);
  const program = buildProgram(ctx);
  const secrets = [env.ADOPS_API_KEY].filter((s): s is string => s !== undefined);
  // Messages can quote the API (an error body, a bad value): escape their control characters, line
  // by line, so a hostile server cannot drive the user's terminal through them.
  const say = (text: string) =>
    stderr.write(`${redactSecrets(text, secrets).split('\n').map(terminalSafe).join('\n')}\n`);
  try {
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
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    say(`adops: ${message}`);
    return 1;
  }
}
