// Where the CPU went during a scenario: the machine's busy time (/proc/stat) and given processes'.
import { readFileSync } from 'node:fs';

/** USER_HZ of /proc/stat and /proc/<pid>/stat on Linux (getconf CLK_TCK). */
export const TICKS_PER_SECOND = 100;

/** Busy and total jiffies of the whole machine, all CPUs together. */
export function machineTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.reduce((a, b) => a + b, 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0); // idle + iowait
  return { busy: total - idle, total };
}

/** user + system CPU seconds of a process so far (0 once it is gone). */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the ")" closing the command name: utime is the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Share of all CPUs busy between two machineTicks() readings, 0..1. */
export function busyShare(a: { busy: number; total: number }, b: { busy: number; total: number }): number {
  const total = b.total - a.total;
  return total > 0 ? (b.busy - a.busy) / total : 0;
}
