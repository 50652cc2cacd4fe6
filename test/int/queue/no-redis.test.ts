// ADOPS_QUEUE=postgres needs no Redis at all: REDIS_URL points at a local listener that counts
// connections, and every command a deployment runs leaves it at zero.
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { spawnCli, type CliProcess } from '../../helpers/cli.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { runCli } from '../../helpers/run-cli.js';
import { testPrefix } from '../../helpers/redis.js';
import { lastDays } from '../../helpers/pipeline.js';

let db: TestDatabase;
let emulator: RunningEmulator;
let listener: Server;
let connections = 0;
let env: Record<string, string>;

beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
  emulator = await startEmulator({ seed: 3, cellsPerDay: 20, lateDataDays: 0 });
  listener = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const address = listener.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  env = {
    DATABASE_URL: db.url,
    REDIS_URL: `redis://127.0.0.1:${port}`,
    ADOPS_QUEUE: 'postgres',
    ADOPS_QUEUE_PREFIX: testPrefix(),
    ADOPS_BASE_URL: emulator.url,
    ADOPS_API_KEY: 'demo-key',
    ADOPS_SCHEMA: TEST_SCHEMA,
    ADOPS_JOBS_DIR: 'jobs',
    ADOPS_METRICS_PORT: '0',
    ADOPS_RATE_LIMIT: '500',
    LOG_LEVEL: 'warn',
  };
});

afterAll(async () => {
  await new Promise((resolve) => listener.close(resolve));
  await emulator.close();
  await db.drop();
});

/** `adops <args>` in this process; fails the test with its output unless it exits `code`. */
async function adops(args: string[], code = 0): Promise<string> {
  const run = await runCli(args, env);
  expect(run.code, `adops ${args.join(' ')}\n${run.stdout}\n${run.stderr}`).toBe(code);
  return run.stdout;
}

describe('ADOPS_QUEUE=postgres with REDIS_URL at a listener', () => {
  it('runs demo, migrate, worker, backfill/sync/heal --wait, status --check and dashboard with no connection to it', async () => {
    const demo = await adops(['demo', '--days', '1', '--cells-per-day', '20', '--schema', 'no_redis_demo']);
    expect(demo).toContain('backfill: 10 loaded, 0 failed');
    expect(await adops(['migrate'])).toMatch(/queue schema adops_queue_\w+: up to date/);
    let worker: CliProcess | undefined;
    let dashboard: CliProcess | undefined;
    try {
      worker = spawnCli(['worker'], { ...env, LOG_LEVEL: 'info' });
      await worker.waitFor(/"msg":"worker started"/);
      const { from, to } = lastDays(2);
      await adops(['backfill', '--report', 'daily_zone', '--from', from, '--to', to, '--wait']);
      await adops(['sync', '--wait']);
      await adops(['heal', '--days', '2', '--wait']);
      expect(await adops(['status', '--check', '--days', '2'])).toMatch(/^ok: /);
      dashboard = spawnCli(['dashboard', '--port', '0'], env);
      const url = (await dashboard.waitFor(/^http:\/\//)).trim();
      const page = await fetch(url);
      expect(page.status).toBe(200);
      const queues = await fetch(new URL('api/queues', url));
      expect(queues.status).toBe(200);
      expect(await queues.text()).toContain('report-pulls');
    } finally {
      await dashboard?.kill('SIGTERM');
      await worker?.kill('SIGTERM');
    }
    expect(worker.stderr()).toContain('"msg":"worker stopped"');
    expect(connections).toBe(0);
  });
});
