import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { register as emulator } from './emulator.js';
import { register as replay } from './replay.js';
import { register as migrate } from './migrate.js';

/** Adds one command (its flags, help and action) to the program. */
export type RegisterCommand = (program: Command, ctx: CliContext) => void;

/** Every command of `adops`, in the order `--help` lists them. */
export const COMMANDS: readonly RegisterCommand[] = [migrate, replay, emulator];
