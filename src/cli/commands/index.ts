import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { register as emulator } from './emulator.js';
import { register as demo } from './demo.js';
import { register as migrate } from './migrate.js';
import { register as pull } from './pull.js';
import { register as replay } from './replay.js';
import { register as dashboard } from './dashboard.js';
import { register as doctor } from './doctor.js';
import { register as sync } from './sync.js';
import { register as worker } from './worker.js';
import { register as schedule } from './schedule.js';
import { register as backfill } from './backfill.js';
import { register as heal } from './heal.js';
import { register as status } from './status.js';

/** Adds one command (its flags, help and action) to the program. */
export type RegisterCommand = (program: Command, ctx: CliContext) => void;

/** Every command of `adops`, in the order `--help` lists them (the design's order). */
export const COMMANDS: readonly RegisterCommand[] = [
  migrate,
  worker,
  schedule,
  backfill,
  heal,
  pull,
  sync,
  status,
  doctor,
  replay,
  emulator,
  dashboard,
  demo,
];
