// Runs `adops doctor` in-process against a fresh emulator, and reads its "Set these:" lines.
import { startEmulator, type EmulatorOptions, type RunningEmulator } from '../../../src/emulator/index.js';
import { runCli, type CliRun } from '../../helpers/run-cli.js';

const started: RunningEmulator[] = [];

/** Closes every emulator the tests of a file started (call in afterEach). */
export async function closeEmulators(): Promise<void> {
  await Promise.all(started.splice(0).map((e) => e.close()));
}

/** A small emulator with these options, closed by closeEmulators(). */
export async function emulatorWith(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const emulator = await startEmulator({ seed: 3, cellsPerDay: 40, ...options });
  started.push(emulator);
  return emulator;
}

/** Starts an emulator with these options and runs `adops doctor` against it with the demo key. */
export async function doctorAgainst(
  options: EmulatorOptions,
  env: Record<string, string> = {},
  args: readonly string[] = [],
): Promise<CliRun> {
  const emulator = await emulatorWith(options);
  return runCli(['doctor', ...args], { ADOPS_BASE_URL: emulator.url, ADOPS_API_KEY: 'demo-key', ...env });
}

/** The NAME=value lines after "Set these:"; throws with the output when there are none. */
export function settings(run: CliRun): Record<string, string> {
  const lines = run.stdout.split('\n');
  const start = lines.indexOf('Set these:');
  if (start < 0) throw new Error(`no "Set these:" in:\n${run.stdout}\n${run.stderr}`);
  const out: Record<string, string> = {};
  for (const line of lines.slice(start + 1)) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line);
    if (m === null) break;
    out[m[1]!] = m[2]!;
  }
  return out;
}
