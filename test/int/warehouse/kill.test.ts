import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadPulledPeriod } from '../../helpers/pipeline.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import {
  asText,
  createTables,
  loadsOf,
  openTestDatabase,
  periodRows,
  pulled,
  reportJob,
  type Row,
} from './fixtures/reports.js';

const report = reportJob('wh_kill', ['day', 'campaign_id']);
const period = { start: '2026-05-01', end: '2026-05-01' };
const previous: Row[] = [
  [
    ['2026-05-01', '1'],
    [1, 2, 3, 4, 5],
  ],
  [
    ['2026-05-01', '2'],
    [6, 7, 8, 9, 10],
  ],
];
let db: TestDatabase;
let child: ChildProcess | undefined;

beforeAll(async () => {
  db = await openTestDatabase();
  await createTables(db.pool, [report]);
  await loadPulledPeriod(
    db.pool,
    TEST_SCHEMA,
    pulled(report, period, previous, new Date('2026-05-02T03:00:00Z')),
  );
});
afterAll(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await db?.drop();
});

/** Resolves once Postgres reports the child's COPY has written at least `tuples` rows. */
async function copyInProgress(tuples: number): Promise<number> {
  for (;;) {
    const { rows } = await db.pool.query<{ n: string }>(
      `SELECT p.tuples_processed::text AS n FROM pg_stat_progress_copy p JOIN pg_stat_activity a USING (pid)
        WHERE a.application_name = 'adops-kill-test'`,
    );
    const n = Number(rows[0]?.n ?? 0);
    if (n >= tuples) return n;
    if (child?.exitCode !== null)
      throw new Error(`the loading process exited early (${String(child?.exitCode)})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

it("SIGKILL in the middle of a COPY leaves the period's previous rows intact and visible; the next load completes it", async () => {
  const script = fileURLToPath(new URL('./fixtures/kill-copy.ts', import.meta.url));
  child = spawn(process.execPath, ['--import', 'tsx', script, db.url, TEST_SCHEMA], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));

  const written = await copyInProgress(20_000);
  expect(written).toBeGreaterThanOrEqual(20_000);
  // Mid-COPY: the old rows are what every reader sees.
  expect(await periodRows(db.pool, report, period)).toEqual(asText(previous));

  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  const [, signal] = (await exited) as [number | null, string | null];
  expect(signal, stderr).toBe('SIGKILL');

  expect(await periodRows(db.pool, report, period)).toEqual(asText(previous));
  expect((await loadsOf(db.pool, report.name)).map((l) => l.status)).toEqual(['loaded']);

  // The next load waits for the dead session's lock to go, then replaces the period.
  const next: Row[] = [
    [
      ['2026-05-01', '3'],
      [11, 12, 13, 14, 15],
    ],
  ];
  const outcome = await loadPulledPeriod(db.pool, TEST_SCHEMA, pulled(report, period, next, new Date()));
  expect(outcome).toMatchObject({ status: 'loaded', rows: 1 });
  expect(await periodRows(db.pool, report, period)).toEqual(asText(next));
  const { rows } = await db.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${TEST_SCHEMA}.report_wh_kill`,
  );
  expect(rows[0]?.n).toBe(1);
});
