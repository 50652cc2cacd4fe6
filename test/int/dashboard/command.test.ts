// `adops dashboard` as users run it: the URL first on stdout, a clean exit on a signal, and
// errors a user can cause (bad port, busy port, bad host, no Redis) that say what to do.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { get } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { afterAll, describe, it } from 'vitest';
import { REPORT_QUEUE } from '../../../src/platform/queue/jobs.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';
import { cliEntry } from '../../helpers/cli.js';
import { runCli } from '../../helpers/run-cli.js';

interface QueuesBody {
  queues: { name: string; readOnlyMode: boolean; counts: Record<string, number> }[];
}

// The tests run concurrently (each mostly waits: on a child's start, on Redis's connect timeout),
// so what they leave behind is closed once, after all of them.
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

/** `adops dashboard <args>` as a child process; resolves once it printed its first stdout line. */
async function startChild(args: readonly string[]) {
  const child = spawn(process.execPath, [...cliEntry(), 'dashboard', ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      REDIS_URL,
      ADOPS_QUEUE_PREFIX: testPrefix(),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const lines: string[] = [];
  const reader = createInterface({ input: child.stdout });
  reader.on('line', (line) => lines.push(line));
  const first = await Promise.race([
    once(reader, 'line').then(([line]) => line as string),
    exited.then(([code]) => {
      throw new Error(`adops dashboard exited (${code}) before printing its URL: ${stderr}`);
    }),
  ]);
  return { child, exited, first, lines, stderr: () => stderr };
}

describe.concurrent('adops dashboard command', () => {
  it.for([
    { signal: 'SIGTERM' as const, flags: [], readOnly: true },
    { signal: 'SIGINT' as const, flags: ['--allow-writes'], readOnly: false },
  ])(
    'prints its URL first, serves the queues (read-only: $readOnly) and exits 0 on $signal',
    async ({ signal, flags, readOnly }, { expect }) => {
      const run = await startChild(['--port', '0', ...flags]);
      expect(run.first).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);

      const page = await fetch(run.first);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('adops queues');
      const body = (await (await fetch(`${run.first}api/queues`)).json()) as QueuesBody;
      const pulls = body.queues.find((q) => q.name === REPORT_QUEUE);
      expect(pulls?.readOnlyMode).toBe(readOnly);

      run.child.kill(signal);
      const [code] = await run.exited;
      expect(code).toBe(0);
      expect(run.lines).toEqual([run.first]);
      expect(run.stderr()).not.toMatch(/error/i);
    },
  );

  it('--allowed-host adds a name the page answers to; another Host is refused and logged', async ({
    expect,
  }) => {
    const run = await startChild([
      '--port',
      '0',
      '--allowed-host',
      'dash.example.com',
      '--allowed-host',
      'b.example',
    ]);
    const url = new URL(run.first);
    const status = (host: string) =>
      new Promise<number>((resolve, reject) =>
        get(
          { host: url.hostname, port: url.port, path: '/api/queues', headers: { host }, setHost: false },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        ).on('error', reject),
      );
    expect(await status('dash.example.com')).toBe(200);
    expect(await status(`b.example:${url.port}`)).toBe(200);
    expect(await status(`rebind.evil.example:${url.port}`)).toBe(403);
    run.child.kill('SIGTERM');
    const [code] = await run.exited;
    expect(code).toBe(0);
    expect(run.stderr()).toContain('dashboard refused a request: Host rebind.evil.example');
  });

  it('rejects an --allowed-host with a port or scheme with exit code 2', async ({ expect }) => {
    const run = await runCli(['dashboard', '--allowed-host', 'http://dash.example.com:3000'], { REDIS_URL });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('expected a host name without port or scheme');
  });

  it('--help names every flag with its default and exits 0', async ({ expect }) => {
    const run = await runCli(['dashboard', '--help'], {});
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/--port <port>.*\(default:\s+3000\)/s);
    expect(run.stdout).toMatch(/--host <address>.*\(default:\s+"127\.0\.0\.1"\)/s);
    expect(run.stdout).toContain('--allow-writes');
    expect(run.stdout).toContain('read-only without it');
    expect(run.stdout).toContain('--allowed-host <name>');
  });

  it('rejects a --port that is not a port with exit code 2 and the allowed range', async ({ expect }) => {
    const run = await runCli(['dashboard', '--port', '70000'], { REDIS_URL });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("'--port <port>' argument '70000' is invalid");
    expect(run.stderr).toContain('0 to 65535');
    expect(run.stdout).toBe('');
  });

  it('reports a port in use with exit code 2 and suggests another --port', async ({ expect }) => {
    const busy = createServer();
    busy.listen(0, '127.0.0.1');
    await once(busy, 'listening');
    cleanups.push(() => new Promise((resolve) => busy.close(() => resolve())));
    const { port } = busy.address() as AddressInfo;

    const run = await runCli(['dashboard', '--port', String(port)], {
      REDIS_URL,
      ADOPS_QUEUE_PREFIX: testPrefix(),
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`port ${port} is already in use: choose another with --port`);
    expect(run.stdout).toBe('');
  });

  it('reports a --host that is not this machine with exit code 2', async ({ expect }) => {
    // 192.0.2.0/24 is TEST-NET-1: never assigned to a local interface.
    const run = await runCli(['dashboard', '--port', '0', '--host', '192.0.2.1'], {
      REDIS_URL,
      ADOPS_QUEUE_PREFIX: testPrefix(),
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('192.0.2.1 is not an address of this machine: use --host 127.0.0.1');
  });

  it('reports an unreachable Redis with exit code 1, naming REDIS_URL without its password', async ({
    expect,
  }) => {
    const run = await runCli(['dashboard', '--port', '0'], {
      REDIS_URL: 'redis://admin:hunter2secret@127.0.0.1:1',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('is not reachable');
    expect(run.stderr).toContain('REDIS_URL');
    expect(run.stderr).not.toContain('hunter2secret');
    expect(run.stdout).toBe('');
  });
});
