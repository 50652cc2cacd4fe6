// Retention judged by the database's clock: `adops migrate` on a machine whose clock runs 60 days
// ahead drops nothing retention_months still keeps, and no month holding a load younger than the
// retention is dropped, whatever clock the caller passes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { type ReportJob, loadJobs } from '../../../src/platform/config/jobs.js';
import { addDays } from '../../../src/platform/dates/calendar.js';
import { addMonths } from '../../../src/plan/retention.js';
import { loadPulledPeriod } from '../../helpers/pipeline.js';
import { maintainPartitions, partitionsOf } from '../../../src/schema/partitions.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { runCliProcess } from '../../helpers/run-cli.js';
import type { SpawnOptions } from '../../helpers/cli.js';
import { openTestDatabase, pulled, type Row } from './fixtures/reports.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

const S = TEST_SCHEMA;
const SHIFTED_CLOCK = fileURLToPath(new URL('../../helpers/shifted-clock.ts', import.meta.url));
const FAKETIME = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v faketime'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
})();

const opened: TestDatabase[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await Promise.allSettled(opened.map((db) => db.drop()));
});

/** The database's date today (UTC), which the test's periods are placed around. */
async function dbToday(db: TestDatabase): Promise<string> {
  const { rows } = await db.pool.query<{ d: string }>(`SELECT (now() AT TIME ZONE 'UTC')::date::text AS d`);
  return rows[0]?.d as string;
}

const rowsOf = (d: string): Row[] => [
  [
    [d, '101'],
    [3, 2, 2, 1, 1],
  ],
  [
    [d, '102'],
    [5, 4, 4, 3, 2],
  ],
];

/**
 * A fresh database with report `name` (retention_months: 1) loaded on three days: today and the
 * middle of last month, both loaded just now, and a day three months ago, loaded the day after it
 * (its load's recorded_at set back to then). By the database's clock retention keeps the first two
 * months and drops the third.
 */
async function warehouse(name: string): Promise<{
  db: TestDatabase;
  dir: string;
  report: ReportJob;
  days: { today: string; lastMonth: string; old: string };
}> {
  const db = await openTestDatabase();
  opened.push(db);
  const dir = mkdtempSync(join(tmpdir(), 'adops-retention-clock-'));
  dirs.push(dir);
  writeFileSync(
    join(dir, `${name}.yaml`),
    `name: ${name}\ndimensions: [day, campaign_id]\nperiod: day\nretention_months: 1\n`,
  );
  const migrated = await runCliProcess(['migrate'], env(db, dir));
  expect(migrated.code, migrated.stderr).toBe(0);
  const report = loadJobs(dir).reports[0] as ReportJob;
  const today = await dbToday(db);
  const days = { today, lastMonth: addDays(addMonths(today, -1), 14), old: addDays(addMonths(today, -3), 4) };
  for (const d of Object.values(days))
    await loadPulledPeriod(db.pool, S, pulled(report, { start: d, end: d }, rowsOf(d), new Date()));
  await db.pool.query(
    `UPDATE ${S}.report_loads SET recorded_at = period_start + interval '1 day' WHERE report = $1 AND period_start = $2`,
    [name, days.old],
  );
  return { db, dir, report, days };
}

function env(db: TestDatabase, dir: string): Record<string, string> {
  return { DATABASE_URL: db.url, ADOPS_SCHEMA: S, ADOPS_JOBS_DIR: dir, LOG_LEVEL: 'warn' };
}

/** Rows per loaded day, and the days retention marked dropped in report_totals or report_loads. */
async function holdings(
  db: TestDatabase,
  name: string,
): Promise<{ rows: Record<string, number>; marked: string[] }> {
  const { rows } = await db.pool.query<{ d: string; n: number }>(
    `SELECT period_start::text AS d, count(*)::int AS n FROM ${S}.report_${name} GROUP BY 1 ORDER BY 1`,
  );
  const marks = await db.pool.query<{ d: string }>(
    `SELECT period_start::text AS d FROM ${S}.report_totals WHERE report = $1 AND retention_dropped_at IS NOT NULL
     UNION SELECT period_start::text FROM ${S}.report_loads WHERE report = $1 AND retention_dropped_at IS NOT NULL
     ORDER BY 1`,
    [name],
  );
  return { rows: Object.fromEntries(rows.map((r) => [r.d, r.n])), marked: marks.rows.map((r) => r.d) };
}

/** A partition's month as its name carries it: 2026-08-05 is 202608. */
const tag = (d: string) => d.slice(0, 7).replace('-', '');

/** How far ahead of ours the clock of a node process started with `spawn` runs, in ms. */
function clockAhead(spawn: SpawnOptions): number {
  const command = [
    ...(spawn.wrap ?? []),
    process.execPath,
    ...(spawn.nodeArgs ?? []),
    '-e',
    'console.log(Date.now())',
  ];
  const theirs = Number(
    execFileSync(command[0] as string, command.slice(1), {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', SHIFTED_CLOCK_DAYS: '60' },
    }).trim(),
  );
  return theirs - Date.now();
}

const CLOCKS: ReadonlyArray<{ clock: string; name: string; spawn: SpawnOptions; skip: boolean }> = [
  {
    clock: 'faketime -f +60d',
    name: 'rt_faketime',
    spawn: { wrap: [FAKETIME ?? 'faketime', '-f', '+60d'] },
    // faketime comes from Debian's faketime package; the preload below fakes the same clock without it.
    skip: FAKETIME === undefined,
  },
  {
    clock: "node's Date moved 60 days on",
    name: 'rt_shifted',
    spawn: { nodeArgs: ['--import', 'tsx', '--import', SHIFTED_CLOCK] },
    skip: false,
  },
];

describe('retention follows the database clock', () => {
  it.each(CLOCKS)(
    'adops migrate under $clock drops only what retention_months drops by the database clock',
    async ({ name, spawn, skip }) => {
      if (skip) return;
      const { db, dir, days } = await warehouse(name);
      const before = await holdings(db, name);
      expect(Object.keys(before.rows)).toEqual([days.old, days.lastMonth, days.today]);

      // The process's clock really is wrong that way.
      expect(clockAhead(spawn) / 86_400_000).toBeGreaterThan(59.9);
      const run = await runCliProcess(['migrate'], { ...env(db, dir), SHIFTED_CLOCK_DAYS: '60' }, spawn);
      expect(run.code, run.stderr).toBe(0);

      // Last month and this one keep their rows and carry no retention mark; the month three
      // months back, older than retention_months by any clock, goes.
      const after = await holdings(db, name);
      expect(after.rows).toEqual({ [days.lastMonth]: 2, [days.today]: 2 });
      expect(after.marked).toEqual([days.old]);
      const months = (await partitionsOf(warehouseOf(db.pool, S), `report_${name}`)).map((p) => p.from);
      expect(months).toEqual(expect.arrayContaining([addMonths(days.today, -1), addMonths(days.today, 0)]));
      expect(months).not.toContain(addMonths(days.old, 0));
      expect(run.stdout).toContain(`dropped ${S}.report_${name}__p${tag(days.old)}`);
      expect(run.stdout).not.toContain(`__p${tag(days.lastMonth)}`);
      expect(run.stdout).not.toContain(`__p${tag(days.today)}`);
    },
    120_000,
  );

  it('never drops a month holding a load younger than the retention, whatever clock the caller passes', async () => {
    const { db, report, days } = await warehouse('rt_guard');
    // A caller's clock a year ahead says every month loaded is past retention.
    const ahead = new Date(Date.now() + 400 * 86_400_000);
    const c = await db.pool.connect();
    try {
      const upkeep = await maintainPartitions(c, warehouseOf(db.pool, S), [report], ahead);
      // Only the month whose load is older than the retention by the database's clock goes.
      expect(upkeep.dropped.map((d) => d.from)).toEqual([addMonths(days.old, 0)]);
    } finally {
      c.release();
    }
    const after = await holdings(db, 'rt_guard');
    expect(after.rows).toEqual({ [days.lastMonth]: 2, [days.today]: 2 });
    expect(after.marked).toEqual([days.old]);
  });
});
