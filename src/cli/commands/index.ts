// The commands of `adops`. Each is loaded only when it runs (or its own --help is asked), so a
// command pays for the packages it uses and `adops --help` for none of them.
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { SUMMARIES, type CommandName } from './summaries.js';

/** Adds one command (its flags, help and action) to the program. */
export type RegisterCommand = (program: Command, ctx: CliContext) => void;

/** A command module: what it exports for the program to register it. */
export interface CommandModule {
  readonly register: RegisterCommand;
}

/** Every command of `adops`, in the order `--help` lists them (the design's order). */
export const COMMANDS: Readonly<Record<CommandName, () => Promise<CommandModule>>> = {
  migrate: () => import('./migrate.js'),
  worker: () => import('./worker.js'),
  schedule: () => import('./schedule.js'),
  backfill: () => import('./backfill.js'),
  heal: () => import('./heal.js'),
  pull: () => import('./pull.js'),
  sync: () => import('./sync.js'),
  status: () => import('./status.js'),
  doctor: () => import('./doctor.js'),
  evolve: () => import('./evolve.js'),
  replay: () => import('./replay.js'),
  emulator: () => import('./emulator.js'),
  dashboard: () => import('./dashboard.js'),
  demo: () => import('./demo.js'),
};

/** True when `name` is a command of `adops`. */
export function isCommandName(name: string | undefined): name is CommandName {
  return name !== undefined && Object.hasOwn(SUMMARIES, name);
}

/**
 * The command that `args` (the arguments after the script) run or ask help for: the first word
 * that is not an option, or the word after `help`. Undefined for `adops`, `adops --help` and
 * unknown words (commander reports those).
 */
export function commandOf(args: readonly string[]): CommandName | undefined {
  const words = args.filter((a) => !a.startsWith('-'));
  const word = words[0] === 'help' ? words[1] : words[0];
  return isCommandName(word) ? word : undefined;
}

/**
 * Registers every command on `program`: the one `args` names in full (its module and the context
 * loaded now), the others as their name and summary, enough for the program's help and for
 * commander to reject typos.
 */
export async function registerCommands(
  program: Command,
  args: readonly string[],
  context: () => Promise<CliContext>,
): Promise<void> {
  const chosen = commandOf(args);
  const [module, ctx] = chosen === undefined ? [] : await Promise.all([COMMANDS[chosen](), context()]);
  for (const name of Object.keys(COMMANDS) as CommandName[]) {
    if (name === chosen && module !== undefined && ctx !== undefined) module.register(program, ctx);
    else program.command(name).description(SUMMARIES[name]);
  }
}
