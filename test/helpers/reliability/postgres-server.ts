// A private Postgres cluster for the restart case: the shared server serves every other test file,
// so only a cluster of our own may be stopped and started again. initdb and postgres refuse to
// run as root: as root (our CI image), every command runs as the `postgres` system user.
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-server.js';

export interface PrivatePostgres {
  /** The `postgres` database of the cluster, as its superuser (trust auth). */
  readonly url: string;
  /** `pg_ctl stop -m fast`: every session ends, as a restart or a `systemctl stop` ends them. */
  halt(): void;
  /** Starts the cluster again on the same port; returns once it accepts connections. */
  start(): void;
  /** Stops it at once and removes its folder. Safe to call twice. */
  stop(): void;
}

const SUPERUSER = 'postgres';

/**
 * The bin folder of the newest Postgres installed under /usr/lib/postgresql; throws (never skips)
 * when there is none, so a machine without it fails the test that needs it.
 */
function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  if (versions[0] === undefined) throw new Error(`no Postgres server under ${root}: install postgresql`);
  return join(root, versions[0], 'bin');
}

/** initdb (trust auth) into a fresh folder under the OS temp dir, then starts it on a free port. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'adops-pg-'));
  const data = join(dir, 'data');
  if (root) {
    const uid = Number(execFileSync('id', ['-u', SUPERUSER], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', SUPERUSER], { encoding: 'utf8' }));
    chownSync(dir, uid, gid);
  }
  const run = (tool: string, args: readonly string[]) => {
    const command = root ? ['runuser', '-u', SUPERUSER, '--', join(bin, tool)] : [join(bin, tool)];
    execFileSync(command[0] as string, [...command.slice(1), ...args], { stdio: 'pipe', timeout: 60_000 });
  };
  run('initdb', ['-D', data, '-U', SUPERUSER, '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  // The socket lives in our folder: the system's /var/run/postgresql belongs to the shared server.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = () =>
    run('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', options, '-w', '-t', '30', 'start']);
  let stopped = false;
  start();
  return {
    url: `postgres://${SUPERUSER}@127.0.0.1:${port}/postgres`,
    halt: () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    start,
    stop: () => {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // Already down: nothing to stop.
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
