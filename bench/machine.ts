// The machine a run's figures came from, recorded next to them.
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { busyShare, machineTicks } from './backfill/cpu.js';
import pg from 'pg';

export interface Machine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly node: string;
  readonly postgres: string;
  readonly redis: string;
  readonly platform: string;
  /** Share of the CPUs busy during a 2 s look before the run, and the 1-minute load average. */
  readonly busyBeforeRun: number;
  readonly loadAverage1m: number;
}

/**
 * True when something else was using the machine when the run began: its figures are suspect. The
 * load average is recorded too but not judged: it trails by a minute.
 */
export function isBusy(m: Machine): boolean {
  return m.busyBeforeRun > 0.15;
}

/** nproc, CPU model, memory, Node, Postgres and Redis versions. */
export async function describeMachine(adminUrl: string, redisVersion: string): Promise<Machine> {
  let nproc = cpus().length;
  try {
    nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim()) || nproc;
  } catch {
    // no nproc: os.cpus() is the next best count
  }
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  let postgres: string;
  try {
    postgres =
      (await c.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?';
  } finally {
    await c.end();
  }
  const before = machineTicks();
  await new Promise((r) => setTimeout(r, 2_000));
  const busyBeforeRun = busyShare(before, machineTicks());
  return {
    busyBeforeRun,
    loadAverage1m: loadavg()[0] ?? 0,
    cpus: nproc,
    cpuModel: cpus()[0]?.model ?? '?',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    postgres,
    redis: redisVersion,
    platform: `${process.platform} ${process.arch}`,
  };
}
