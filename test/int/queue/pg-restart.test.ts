// Issue 26's acceptance on a real Postgres restart: on ADOPS_QUEUE=postgres the queue lives in the
// warehouse's database, so a restart mid-backfill takes both away at once. On a private cluster (the
// shared server is never restarted), the backfill must end with every period's rows equal to the
// emulator's and none twice, the worker and the waiting command riding it out, the wait naming the
// queue's Postgres, never Redis (REDIS_URL points nowhere).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadJobs } from '../../../src/platform/config/jobs.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { spawnCli, type CliProcess } from '../../helpers/cli.js';
import { startPrivatePostgres, type PrivatePostgres } from '../../helpers/reliability/postgres-server.js';
import { days, fetchTruth, verify } from '../../helpers/reliability/truth.js';
import { lastDays } from '../../helpers/pipeline.js';
import { until } from '../../helpers/wait.js';

const DAYS = 10;

let server: PrivatePostgres | undefined;
let emulator: RunningEmulator | undefined;
let pool: pg.Pool | undefined;
const procs: CliProcess[] = [];
beforeAll(async () => {
  server = await startPrivatePostgres();
}, 60_000);
afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill('SIGKILL')));
  await pool?.end();
  await emulator?.close();
  server?.stop();
});

/** Runs `adops <args>` to its end, failing with its output when it does not exit 0. */
async function adops(args: string[], env: Record<string, string>): Promise<CliProcess> {
  const p = spawnCli(args, env);
  procs.push(p);
  const code = await p.exited;
  if (code !== 0) throw new Error(`adops ${args.join(' ')} exited ${code}: ${p.stderr()}`);
  return p;
}

describe('the Postgres queue across a real Postgres restart', () => {
  it('a restart mid-backfill loses and duplicates nothing: rows equal the emulator, each period loaded, the wait names the queue Postgres', async () => {
    const db = server!;
    emulator = await startEmulator({
      seed: 11,
      cellsPerDay: 25,
      lateDataDays: 0,
      faults: { latencyMs: [30, 90], paths: ['/v2/reports'] },
    });
    const jobs = loadJobs('jobs');
    const range = lastDays(DAYS);
    const truth = await fetchTruth(emulator.url, 'demo-key', jobs.reports, days(range.from, range.to));
    const env = {
      DATABASE_URL: db.url,
      ADOPS_QUEUE: 'postgres',
      // Nothing listens there: the Postgres queue must never need Redis.
      REDIS_URL: 'redis://127.0.0.1:1',
      ADOPS_BASE_URL: emulator.url,
      ADOPS_API_KEY: 'demo-key',
      ADOPS_SCHEMA: TEST_SCHEMA,
      ADOPS_JOBS_DIR: 'jobs',
      ADOPS_METRICS_PORT: '0',
      ADOPS_RATE_LIMIT: '500',
      ADOPS_HTTP_MAX_BACKOFF_MS: '50',
      LOG_LEVEL: 'warn',
    };
    await adops(['migrate'], env);
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    // The restart ends this pool's sessions too; their errors are expected.
    pool.on('error', () => undefined);
    // A short stall lock: a pull whose completion the restart cut off is taken up again within seconds.
    const worker = spawnCli(['worker', '--concurrency', '3', '--stall-seconds', '2'], {
      ...env,
      LOG_LEVEL: 'info',
    });
    procs.push(worker);
    await worker.waitFor(/"msg":"worker started"/);
    const wait = spawnCli(['backfill', '--all', '--from', range.from, '--to', range.to, '--wait'], env);
    procs.push(wait);
    const loaded = async () =>
      Number(
        (
          await pool!.query<{ n: string }>(
            `SELECT count(*) AS n FROM "${TEST_SCHEMA}".report_loads WHERE status = 'loaded'`,
          )
        ).rows[0]?.n,
      );
    const pulls = jobs.reports.length * DAYS;
    const requests = jobs.reports.length * 2; // 10 days a report: 7 + 3 (days_per_request)
    const startedAt = async () =>
      String((await pool!.query<{ t: Date }>('SELECT pg_postmaster_start_time() AS t')).rows[0]?.t);
    const firstStart = await startedAt();
    await until('8 periods loaded', async () => (await loaded()) >= 8, 120_000);
    expect(await loaded()).toBeLessThan(pulls);
    // A real restart: the server stops (fast: sessions ended, in-flight transactions rolled back)
    // and starts again once the waiting command has seen it gone and said so.
    db.halt();
    await wait.waitFor(
      new RegExp(
        `the queue's Postgres \\(schema ${TEST_SCHEMA}_queue\\) is not answering \\(.+\\): still waiting`,
      ),
    );
    db.start();
    expect(await wait.exited).toBe(0);
    expect(await startedAt()).not.toBe(firstStart);
    expect(wait.stdout()).toContain(`${requests} pulls done, 0 failed`);
    expect(wait.stderr()).toMatch(/the queue's Postgres answers again after \d+ s: still waiting/);
    expect(wait.stderr()).not.toMatch(/redis/i);
    // The worker rode the restart out (the only worker: it loaded what was left after it).
    expect(worker.child.exitCode).toBeNull();
    const verdict = await verify(pool, TEST_SCHEMA, jobs.reports, truth);
    expect(verdict).toEqual({ exact: pulls, total: pulls, duplicates: 0, problems: [] });
    // Every period has a successful load on record (a pull whose completion was lost ran again).
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(DISTINCT (report, period_start))::int AS n FROM "${TEST_SCHEMA}".report_loads
        WHERE status = 'loaded'`,
    );
    expect(rows[0]?.n).toBe(pulls);
  }, 120_000);
});
