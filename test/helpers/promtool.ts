// Finds Prometheus' promtool: on PATH, else unpacked from Debian's `prometheus` package into
// .cache/promtool (apt-get download and dpkg-deb -x: no root, no service started). A machine that
// can do neither fails the test with the reason; it is never skipped.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const CACHE = join(ROOT, '.cache', 'promtool');
const UNPACKED = join(CACHE, 'root', 'usr', 'bin', 'promtool');

function onPath(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** The path of a working promtool; throws naming what to install when none can be had. */
export function promtool(): string {
  const found = onPath();
  if (found !== undefined) return found;
  if (!existsSync(UNPACKED)) {
    mkdirSync(CACHE, { recursive: true });
    try {
      if (!readdirSync(CACHE).some((f) => f.endsWith('.deb')))
        execFileSync('apt-get', ['download', 'prometheus'], { cwd: CACHE, stdio: 'pipe' });
      const deb = readdirSync(CACHE).find((f) => f.startsWith('prometheus_') && f.endsWith('.deb'));
      if (deb === undefined) throw new Error('apt-get download prometheus left no .deb');
      execFileSync('dpkg-deb', ['-x', join(CACHE, deb), join(CACHE, 'root')], { stdio: 'pipe' });
    } catch (error) {
      throw new Error(
        `promtool is not on PATH and could not be unpacked from Debian's prometheus package ` +
          `(${(error as Error).message.split('\n')[0]}): install it, e.g. apt-get install prometheus`,
      );
    }
  }
  return UNPACKED;
}
