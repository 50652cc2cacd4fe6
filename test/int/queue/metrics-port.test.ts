// Several `adops worker` processes on one host with the same metrics port: the second cannot bind
// it, says so once, and processes pulls like the first (issue 15: it used to exit with EADDRINUSE).
import { connect, createServer, type AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { spawnCli, type CliProcess } from '../../helpers/cli.js';
import { createHarness, lastDays, type Harness } from '../../helpers/pipeline.js';

let h: Harness | undefined;
const procs: CliProcess[] = [];
afterEach(async () => {
  await Promise.all(procs.splice(0).map((p) => p.kill('SIGKILL')));
  await h?.close();
  h = undefined;
});

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface LogLine {
  level: number;
  msg: string;
}

function logLines(text: string): LogLine[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

describe('two workers on one host with the same metrics port', () => {
  it('both process pulls; the second warns once naming the port and both settings; /health answers', async () => {
    // Slow report answers, so the pulls spread over both workers instead of one taking them all.
    h = await createHarness({ faults: { latencyMs: 150, paths: ['/v2/reports'] } });
    const port = await freePort();
    const env = { ...h.env, ADOPS_METRICS_PORT: String(port), LOG_LEVEL: 'info' };
    const first = spawnCli(['worker', '--concurrency', '1'], env);
    procs.push(first);
    await first.waitFor(/"msg":"worker started"/);
    const second = spawnCli(['worker', '--concurrency', '1'], env);
    procs.push(second);
    await second.waitFor(/"msg":"worker started"/);

    const { from, to } = lastDays(8);
    const { pulls } = await enqueueBackfill(h.queues.pulls, h.jobs.reports, from, to);
    const done = await waitForPulls(h.queues.pulls, pulls, { pollMs: 50 });
    expect(done.failed).toEqual([]);
    for (const worker of [first, second]) await worker.waitFor(/"msg":"pull loaded"/, 5_000);

    const warnings = logLines(second.stderr()).filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toContain(`127.0.0.1:${port}`);
    expect(warnings[0]?.msg).toContain('ADOPS_METRICS_PORT');
    expect(warnings[0]?.msg).toContain('--metrics-port');
    expect(logLines(first.stderr()).filter((l) => l.level >= 40)).toEqual([]);

    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true, running: true });
    expect(second.child.exitCode).toBeNull();
  });
});

/** Whether a TCP connection to host:port is accepted (false when refused or unreachable). */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

describe('the metrics and health server of `adops worker` without ADOPS_METRICS_HOST', () => {
  // Already true before issue 18 (ADOPS_METRICS_HOST defaulted to 127.0.0.1 since issue 15); this
  // proves it through a real worker process. Checked by setting 0.0.0.0: 127.0.0.2 then connects.
  it('listens on 127.0.0.1 only: not on 127.0.0.2, nor on any other address of the machine', async () => {
    h = await createHarness();
    const port = await freePort();
    const env: Record<string, string> = { ...h.env, ADOPS_METRICS_PORT: String(port), LOG_LEVEL: 'info' };
    delete env.ADOPS_METRICS_HOST; // the default is what is under test
    const worker = spawnCli(['worker', '--concurrency', '1'], env);
    procs.push(worker);
    await worker.waitFor(/"msg":"worker started"/);
    expect(await accepts('127.0.0.1', port)).toBe(true);
    // On Linux all of 127/8 reaches a server bound to 0.0.0.0, but not one bound to 127.0.0.1.
    const others = [
      '127.0.0.2',
      ...Object.values(networkInterfaces())
        .flat()
        .filter((a) => a !== undefined && !a.internal)
        .map((a) => a!.address),
    ];
    for (const address of others) expect(await accepts(address, port), address).toBe(false);
  });
});
