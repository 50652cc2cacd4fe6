// The `adops` program: every command listed, the one asked for loaded in full, and main(), which
// turns what a command throws into one line on stderr and an exit code (0, 1 or 2).
import { Command, CommanderError } from 'commander';
import type { Config } from '../platform/config/env.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, packageRoot } from '../platform/config/files.js';
import { describeRedisTarget } from '../platform/config/connections.js';
import { isRedisConnectionLoss, outageReason } from '../platform/retry/classify.js';
import { redactSecrets } from '../platform/log/redact.js';
import { terminalSafe } from '../status/format.js';
import { CommandFailed, createContext, SUMMARIES, type CliContext, type CommandName } from './context.js';

/** Runs the CLI and resolves to its exit code (0, 1 or 2); `env` is where the process environment enters. */
export async function main(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
  stdout: CliContext['stdout'] = process.stdout,
  stderr: CliContext['stderr'] = process.stderr,
): Promise<number> {
  // The reader of stdout going away (`adops status | head`) is its choice, not a failure: end quietly.
  if (stdout === process.stdout)
    stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(process.exitCode ?? 0);
    });
  // The key from ADOPS_API_KEY_FILE joins once the command has loaded its config.
  const secrets = [env.ADOPS_API_KEY, env.ADOPS_WEBHOOK_SECRET].filter((s): s is string => s !== undefined);
  // Messages can quote the API: escape control characters so a hostile server cannot drive the terminal.
  const say = (text: string) =>
    stderr.write(`${redactSecrets(text, secrets).split('\n').map(terminalSafe).join('\n')}\n`);
  let config: Config | undefined;
  try {
    const program = new Command('adops')
      .description('Pull ad server reports and catalogue into Postgres, on schedule, idempotently.')
      .version(packageVersion(), '-V, --version', 'print the version')
      .showHelpAfterError('(run with --help for usage)')
      .exitOverride()
      .configureOutput({ writeOut: (s) => stdout.write(s), writeErr: (s) => stderr.write(s) });
    await registerCommands(program, argv.slice(2), () =>
      createContext(env, stdout, stderr, (c, s) => {
        config = c;
        secrets.push(...s);
      }),
    );
    await program.parseAsync([...argv]);
    return 0;
  } catch (error) {
    // commander already printed the message (or the help)
    if (error instanceof CommanderError)
      return ['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(error.code) ? 0 : 2;
    if (error instanceof ConfigError || error instanceof CommandFailed) {
      say(`adops: ${error.message}`);
      return error instanceof CommandFailed ? error.exitCode : 2;
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

/** The version of the installed package (its package.json, wherever it was installed). */
function packageVersion(): string {
  const manifest: unknown = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8'));
  const ok = typeof manifest === 'object' && manifest !== null && 'version' in manifest;
  return ok && typeof manifest.version === 'string' ? manifest.version : 'unknown';
}

type RegisterCommand = (program: Command, ctx: CliContext) => void;

/** Every command, in `--help`'s order, each module loaded only when its command runs or shows its help. */
export const COMMANDS: Readonly<Record<CommandName, () => Promise<RegisterCommand>>> = {
  migrate: async () => (await import('./warehouse.js')).registerMigrate,
  worker: async () => (await import('./worker.js')).registerWorker,
  schedule: async () => (await import('./backfill.js')).registerSchedule,
  backfill: async () => (await import('./backfill.js')).registerBackfill,
  heal: async () => (await import('./backfill.js')).registerHeal,
  pull: async () => (await import('./pull.js')).registerPull,
  sync: async () => (await import('./sync.js')).registerSync,
  status: async () => (await import('./status.js')).registerStatus,
  doctor: async () => (await import('./status.js')).registerDoctor,
  evolve: async () => (await import('./warehouse.js')).registerEvolve,
  replay: async () => (await import('./warehouse.js')).registerReplay,
  loads: async () => (await import('./loads.js')).registerLoads,
  emulator: async () => (await import('./emulator.js')).registerEmulator,
  dashboard: async () => (await import('./worker.js')).registerDashboard,
  accounts: async () => (await import('./accounts.js')).registerAccounts,
  demo: async () => (await import('./emulator.js')).registerDemo,
};

/** The command `args` run or ask help for; undefined for none and unknown words (commander reports those). */
export function commandOf(args: readonly string[]): CommandName | undefined {
  const words = args.filter((a) => !a.startsWith('-'));
  const word = words[0] === 'help' ? words[1] : words[0];
  return word !== undefined && isCommand(word) ? word : undefined;
}

function isCommand(word: string): word is CommandName {
  return Object.hasOwn(SUMMARIES, word);
}

/** Registers the command `args` names in full, the others by name and summary (for help and typos). */
export async function registerCommands(
  program: Command,
  args: readonly string[],
  context: () => Promise<CliContext>,
): Promise<void> {
  const chosen = commandOf(args);
  const [register, ctx] = chosen === undefined ? [] : await Promise.all([COMMANDS[chosen](), context()]);
  for (const name of Object.keys(COMMANDS).filter(isCommand)) {
    if (name === chosen && register !== undefined && ctx !== undefined) register(program, ctx);
    else program.command(name).description(SUMMARIES[name]);
  }
}
