// The shared request limit on real Postgres (ADOPS_QUEUE=postgres): several processes' limiters
// share one budget by the database's clock, and a 429 pause reaches every process at once.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { limiterKey, type LimiterOptions, type RequestLimiter } from '../../../src/limits/limiter.js';
import { createPgRequestLimiter } from '../../../src/limits/postgres.js';
import { sqlDir } from '../../../src/platform/config/files.js';
import { migrate } from '../../../src/schema/migrate.js';
import { setupBiRole } from '../../../src/schema/bi-role.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { testPrefix } from '../../helpers/redis.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

const CHILD = fileURLToPath(new URL('../../helpers/pg-limiter-process.ts', import.meta.url));
const SHIFTED_CLOCK = fileURLToPath(new URL('../../helpers/shifted-clock.ts', import.meta.url));

// Roles are cluster-wide: a name of this run's own, dropped after the database.
const BI_ROLE = `adops_bi_${randomBytes(4).toString('hex')}`;
let db: TestDatabase;
const pools: pg.Pool[] = [];
const limiters: RequestLimiter[] = [];
beforeAll(async () => {
  db = await createTestDatabase();
});
afterEach(async () => {
  for (const l of limiters.splice(0)) await l.close();
  for (const p of pools.splice(0)) await p.end();
});
afterAll(async () => {
  await db.drop();
  const admin = new pg.Client({ connectionString: db.url.replace(/\/[^/]*$/, '/postgres') });
  await admin.connect();
  await admin.query(`DROP ROLE IF EXISTS ${BI_ROLE}`);
  await admin.end();
});

/** A limiter on a pool of its own (a worker process' view), closed after the test. */
function limiterOn(key: string, perSecond: number, options: LimiterOptions = {}): RequestLimiter {
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  // pool.end() resolves before its clients' sockets close: the DROP ... WITH (FORCE) of afterAll may
  // terminate one still closing, whose error pg-pool emits on the pool. Expected, not a failure.
  pool.on('error', () => undefined);
  pools.push(pool);
  const limiter = createPgRequestLimiter({ pool, schema: TEST_SCHEMA }, key, perSecond, options);
  limiters.push(limiter);
  return limiter;
}

/** Milliseconds `acquire()` of `limiter` takes. */
async function timed(limiter: RequestLimiter): Promise<number> {
  const t = performance.now();
  await limiter.acquire();
  return performance.now() - t;
}

/** Requests per window of the slots granted. */
function perWindow(slots: readonly number[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const s of slots) counts.set(s, (counts.get(s) ?? 0) + 1);
  return counts;
}

/** Runs pg-limiter-process.ts with `env` (and a clock `days` ahead); yields its JSON lines. */
function child(env: Record<string, string>, days = 0) {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', ...(days === 0 ? [] : ['--import', SHIFTED_CLOCK]), CHILD],
    {
      env: {
        PATH: process.env.PATH ?? '',
        LIMIT_URL: db.url,
        LIMIT_SCHEMA: TEST_SCHEMA,
        SHIFTED_CLOCK_DAYS: String(days),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const exited = new Promise<number | null>((resolve) => proc.on('exit', resolve));
  return {
    next: async <T>(): Promise<T> => JSON.parse(((await lines.next()).value as string) ?? 'null') as T,
    exited,
  };
}

describe('the shared request limit on Postgres', () => {
  it('never grants more than the limit per second across limiters on separate pools', async () => {
    const key = limiterKey(testPrefix());
    const [a, b] = [limiterOn(key, 4), limiterOn(key, 4)];
    const slots = await Promise.all([a, b].flatMap((l) => Array.from({ length: 7 }, () => l.acquire())));
    expect(slots.every((s) => s >= 0)).toBe(true);
    expect([...perWindow(slots).values()].every((n) => n <= 4)).toBe(true);
    // 14 requests at 4 a second need at least 4 windows.
    expect(perWindow(slots).size).toBeGreaterThanOrEqual(4);
  });

  it('holds the limit when slots are taken several at a time', async () => {
    const key = limiterKey(testPrefix());
    const [a, b] = [limiterOn(key, 40), limiterOn(key, 40)]; // two slots per call
    const slots = await Promise.all([a, b].flatMap((l) => Array.from({ length: 50 }, () => l.acquire())));
    expect(slots.every((s) => s >= 0)).toBe(true);
    expect([...perWindow(slots).values()].every((n) => n <= 40)).toBe(true);
    expect(perWindow(slots).size).toBeGreaterThanOrEqual(3);
  });

  it('lets the database clock decide: a process whose clock runs 3 days ahead shares the same windows', async () => {
    const key = limiterKey(testPrefix());
    const skewed = child({ LIMIT_KEY: key, LIMIT_PER_SECOND: '4', LIMIT_COUNT: '8' }, 3);
    expect(await skewed.next()).toEqual({ ready: true });
    const mine = limiterOn(key, 4);
    const [theirs, ours] = await Promise.all([
      skewed.next<{ slots: number[] }>(),
      Promise.all(Array.from({ length: 8 }, () => mine.acquire())),
    ]);
    expect(await skewed.exited).toBe(0);
    const slots = [...theirs.slots, ...ours];
    expect(slots.every((s) => s >= 0)).toBe(true);
    // One numbering of windows (a local clock would put theirs 259,200 windows on) and one budget.
    expect(Math.abs(Math.max(...theirs.slots) - Math.max(...ours))).toBeLessThanOrEqual(4);
    expect([...perWindow(slots).values()].every((n) => n <= 4)).toBe(true);
    expect(perWindow(slots).size).toBeGreaterThanOrEqual(4);
  });

  it('tells a 429 pause to another process at once: it stops spending the slots it holds', async () => {
    const key = limiterKey(testPrefix());
    // 400 a second: the other process holds 20 slots per refill, so without NOTIFY it would not ask again.
    const other = child({
      LIMIT_KEY: key,
      LIMIT_PER_SECOND: '400',
      LIMIT_COUNT: '1',
      LIMIT_AWAIT_PAUSE: '1',
    });
    expect(await other.next()).toEqual({ ready: true });
    expect(await other.next()).toEqual({ slots: [expect.any(Number)] });
    await limiterOn(key, 400).pause(600);
    const heard = await other.next<{ pause: number; waited: number }>();
    // What the table says is left of it (read when woken), not what the NOTIFY's payload says.
    expect(heard.pause).toBeGreaterThan(400);
    expect(heard.pause).toBeLessThanOrEqual(600);
    expect(heard.waited).toBeGreaterThanOrEqual(450);
    expect(await other.exited).toBe(0);
  });

  it('holds every process sharing the limit through a pause, and a shorter pause never shortens it', async () => {
    const key = limiterKey(testPrefix());
    const [a, b] = [limiterOn(key, 100), limiterOn(key, 100)];
    await a.pause(400);
    await a.pause(50);
    // b is not subscribed: the table tells it at its first refill.
    const [waitedA, waitedB] = await Promise.all([timed(a), timed(b)]);
    expect(waitedA).toBeGreaterThanOrEqual(350);
    expect(waitedB).toBeGreaterThanOrEqual(350);
    expect(waitedB).toBeLessThan(1_500);
    expect(await timed(b)).toBeLessThan(100);
  });

  it('cuts a pause the table holds beyond the cap (an older worker obeyed a huge Retry-After) down to it', async () => {
    const key = limiterKey(testPrefix());
    await db.pool.query(
      `INSERT INTO ${TEST_SCHEMA}.api_limits (key, paused_until) VALUES ($1, now() + interval '30 years')`,
      [key],
    );
    const waited = await timed(limiterOn(key, 100, { maxPauseMs: 300 }));
    expect(waited).toBeGreaterThan(100);
    expect(waited).toBeLessThan(5_000);
    const { rows } = await db.pool.query<{ over: boolean }>(
      `SELECT paused_until > clock_timestamp() + interval '300 milliseconds' AS over FROM ${TEST_SCHEMA}.api_limits WHERE key = $1`,
      [key],
    );
    expect(rows).toEqual([{ over: false }]);
  });

  it('listens again after its LISTEN connection is lost (a Postgres restart) and hears the next pause', async () => {
    const key = limiterKey(testPrefix());
    let told!: (ms: number) => void;
    const heard = new Promise<number>((r) => (told = r));
    const listening = limiterOn(key, 100, { subscribe: true, onPause: (ms) => told(ms) });
    await listening.ready();
    await db.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN adops_api_pause'`,
    );
    const pauser = limiterOn(key, 100);
    // Paused again until the new LISTEN hears one: each pause only longer than the last is told.
    for (let ms = 1_000; ; ms += 100) {
      await pauser.pause(ms);
      const got = await Promise.race([heard, new Promise((r) => setTimeout(r, 200))]);
      if (got !== undefined) break;
      expect(ms).toBeLessThan(4_000);
    }
    expect(await heard).toBeGreaterThanOrEqual(1_000);
  });

  it("keeps two deployments apart: a pause in another ADOPS_SCHEMA of the database (or a stranger's NOTIFY) holds nothing here", async () => {
    await migrate(db.pool, { schema: 'other_deployment', sqlDir: sqlDir() });
    const key = limiterKey(testPrefix());
    const heard: number[] = [];
    const here = limiterOn(key, 100, { subscribe: true, onPause: (ms) => heard.push(ms) });
    await here.ready();
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    pool.on('error', () => undefined);
    pools.push(pool);
    const there = createPgRequestLimiter({ pool, schema: 'other_deployment' }, key, 100);
    limiters.push(there);
    await there.pause(5_000);
    // Anyone may NOTIFY on the channel: a payload that is not ours is ignored, never thrown.
    await db.pool.query("SELECT pg_notify('adops_api_pause', 'not json')");
    const { rows } = await db.pool.query(
      'SELECT paused_until > clock_timestamp() AS paused FROM other_deployment.api_limits WHERE key = $1',
      [key],
    );
    expect(rows).toEqual([{ paused: true }]);
    expect(await timed(here)).toBeLessThan(200);
    // A NOTIFY is delivered at its commit, before pause() returned: any would have arrived by now.
    await new Promise((r) => setTimeout(r, 100));
    expect(heard).toEqual([]);
  });

  it("obeys no pause a NOTIFY's payload asks for: the BI role's NOTIFY of 15 minutes holds nothing, and it cannot set one", async () => {
    const key = limiterKey(testPrefix());
    const heard: number[] = [];
    let told!: () => void;
    const toldOnce = new Promise<void>((r) => (told = r));
    const here = limiterOn(key, 100, {
      subscribe: true,
      onPause: (ms) => {
        heard.push(ms);
        told();
      },
    });
    await here.ready();
    await setupBiRole(warehouseOf(db.pool, TEST_SCHEMA), BI_ROLE);
    const client = await db.pool.connect();
    let denied: string;
    try {
      await client.query(`SET ROLE ${BI_ROLE}`);
      // Exactly what api_limit_pause() would send: anyone who can connect may NOTIFY it.
      const payload = JSON.stringify({ schema: TEST_SCHEMA, key, ms: 900_000 });
      await client.query('SELECT pg_notify($1, $2)', ['adops_api_pause', payload]);
      denied = await client.query(`SELECT ${TEST_SCHEMA}.api_limit_pause($1, 900000)`, [key]).then(
        () => 'ok',
        (e: unknown) => (e instanceof pg.DatabaseError ? (e.code ?? 'unknown') : String(e)),
      );
    } finally {
      await client.query('RESET ROLE');
      client.release();
    }
    // 42501: insufficient privilege (api_limits is the owner's).
    expect(denied).toBe('42501');
    // A pause of this deployment's own, after the stranger's NOTIFY: the one heard, as the table holds
    // it. Long enough to outlast the listener's read on a loaded machine (a pause over is not told).
    await limiterOn(key, 100).pause(2_000);
    await toldOnce;
    expect(heard).toHaveLength(1);
    expect(heard[0]).toBeLessThanOrEqual(2_000);
    const waited = await timed(here);
    expect(waited).toBeLessThan(3_000);
  });

  it('lets requests through, unlimited, when Postgres fails, and says so', async () => {
    const pool = new pg.Pool({ connectionString: db.url });
    await pool.end();
    const errors: unknown[] = [];
    const limiter = createPgRequestLimiter({ pool, schema: TEST_SCHEMA }, limiterKey(testPrefix()), 1, {
      onError: (e) => errors.push(e),
    });
    expect(await limiter.acquire()).toBe(-1);
    expect(errors).toHaveLength(1);
  });
});
