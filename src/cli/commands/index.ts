import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** Adds one command (its flags, help and action) to the program. */
export type RegisterCommand = (program: Command, ctx: CliContext) => void;

/** Every command of `adops`, in the order `--help` lists them. */
export const COMMANDS: readonly RegisterCommand[] = [];
