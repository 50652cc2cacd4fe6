// Report tables partitioned by month: partitions made ahead and on demand, a load confined to its
// month's partition, and retention dropping whole partitions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReportJob } from '../../../src/platform/config/jobs.js';
import { collectStatus } from '../../../src/status/status.js';
import { renderStatus } from '../../../src/status/render.js';
import { readHealPlan } from '../../../src/schedule/enqueue.js';
import { loadPulledPeriod } from '../../helpers/pipeline.js';
import {
  ensureLoadPartition,
  maintainPartitions,
  partitionName,
  partitionsOf,
} from '../../../src/schema/partitions.js';
import { DAY_CHECK, liveTables } from '../../../src/schema/sql.js';
import { ensureReportTables } from '../../../src/schema/report-tables.js';
import { setupWarehouse } from '../../../src/schema/migrate.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import {
  asText,
  createTables,
  openTestDatabase,
  periodRows,
  pulled,
  reportJob,
  type Row,
} from './fixtures/reports.js';

const S = TEST_SCHEMA;
const day = (d: string) => ({ start: d, end: d });
let clock = 0;
/** A later fetch time on each call, so each load supersedes the one before. */
const later = () => new Date(Date.UTC(2026, 5, 1) + ++clock * 1000);
const rowsOf = (d: string, n: number, base = 1): Row[] =>
  Array.from({ length: n }, (_, i) => [
    [d, String(100 + i)],
    [base + i, base, base, base, base],
  ]);

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function withClient<T>(fn: (c: import('pg').PoolClient) => Promise<T>): Promise<T> {
  const c = await db.pool.connect();
  try {
    return await fn(c);
  } finally {
    c.release();
  }
}

const months = async (table: string) =>
  (await partitionsOf(warehouseOf(db.pool, S), table)).map((p) => p.from);

describe('partitions', () => {
  const report = reportJob('pt_campaign', ['day', 'campaign_id']);
  beforeAll(async () => {
    await createTables(db.pool, [report]);
  });

  it('migrate makes the current month and two ahead for every report table', async () => {
    const result = await setupWarehouse(warehouseOf(db.pool, S), {
      reports: [report],
      now: new Date('2027-05-10T12:00:00Z'),
    });
    const kind = await db.pool.query<{ kind: string }>(
      'SELECT relkind::text AS kind FROM pg_class WHERE oid = to_regclass($1)',
      [`${S}.report_pt_campaign`],
    );
    expect(kind.rows[0]?.kind).toBe('p');
    expect(await months('report_pt_campaign')).toEqual(
      expect.arrayContaining(['2027-05-01', '2027-06-01', '2027-07-01']),
    );
    expect(result.partitions.made).toEqual([
      'report_pt_campaign__p202705',
      'report_pt_campaign__p202706',
      'report_pt_campaign__p202707',
    ]);
    // The unique key includes period_start, as Postgres requires of a partitioned table's.
    const { rows } = await db.pool.query<{ def: string }>(
      `SELECT pg_get_indexdef(indexrelid) AS def FROM pg_index WHERE indrelid = $1::regclass AND indisunique`,
      [`${S}.report_pt_campaign`],
    );
    expect(rows.map((r) => r.def)).toEqual([
      expect.stringContaining('(account, period_start, period_end, day, campaign_id)'),
    ]);
  });

  it('loads into months without a partition make it first, once, when they race', async () => {
    const days = ['2025-02-03', '2025-02-04', '2025-02-05', '2025-02-06'];
    const outcomes = await Promise.all(
      days.map((d) => loadPulledPeriod(db.pool, S, pulled(report, day(d), rowsOf(d, 3), later()))),
    );
    expect(outcomes.map((o) => o.status)).toEqual(['loaded', 'loaded', 'loaded', 'loaded']);
    expect((await months('report_pt_campaign')).filter((m) => m === '2025-02-01')).toHaveLength(1);
    for (const d of days) expect(await periodRows(db.pool, report, day(d))).toEqual(asText(rowsOf(d, 3)));
  });

  it("a load touches only its month's partition: it completes while another month's is locked exclusively", async () => {
    await loadPulledPeriod(db.pool, S, pulled(report, day('2025-03-10'), rowsOf('2025-03-10', 2), later()));
    const blocker = await db.pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`LOCK TABLE ${S}.report_pt_campaign__p202502 IN ACCESS EXCLUSIVE MODE`);
      // Several loads on each connection: a generic plan after the fifth would lock every partition.
      for (let i = 0; i < 8; i++) {
        const load = loadPulledPeriod(
          db.pool,
          S,
          pulled(report, day('2025-03-10'), rowsOf('2025-03-10', 2, i + 5), later()),
        );
        const timeout = new Promise<'blocked'>((r) => setTimeout(() => r('blocked'), 5_000).unref());
        expect(await Promise.race([load.then((o) => o.status), timeout])).toBe('loaded');
      }
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
    expect(await periodRows(db.pool, report, day('2025-03-10'))).toEqual(asText(rowsOf('2025-03-10', 2, 12)));
    // The rows of the other month are those loaded before.
    expect(await periodRows(db.pool, report, day('2025-02-03'))).toEqual(asText(rowsOf('2025-02-03', 3)));
    // The period's own DELETE plans to one partition.
    const plan = await db.pool.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN DELETE FROM ${S}.report_pt_campaign WHERE period_start = '2025-03-10' AND period_end = '2025-03-10'`,
    );
    const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(text).toContain('report_pt_campaign__p202503');
    expect(text).not.toContain('report_pt_campaign__p202502');
  });

  it('a load into a new table version whose month this process thought made makes the partition and loads', async () => {
    // A worker remembers the months it made (its PullDeps' set): 2025-02 of version 1 is one.
    const worker = { partitions: new Set<string>() };
    const first = pulled(report, day('2025-02-07'), rowsOf('2025-02-07', 1), later());
    expect((await loadPulledPeriod(db.pool, S, first, worker)).status).toBe('loaded');
    expect([...worker.partitions]).toEqual([`${S}\u0000pt_campaign\u00002025-02-01`]);
    const changed = reportJob('pt_campaign', ['day', 'zone_id']);
    const evolved = await withClient((c) => ensureReportTables(c, warehouseOf(db.pool, S), [changed]));
    expect(evolved.created).toEqual(['report_pt_campaign__v2']);
    expect(await months('report_pt_campaign__v2')).toEqual([]);
    const rows: Row[] = [
      [
        ['2025-02-03', '9'],
        [3, 2, 1, 1, 1],
      ],
    ];
    // Its insert finds no partition of the month in the new version: made then, and the load retried.
    const o = await loadPulledPeriod(db.pool, S, pulled(changed, day('2025-02-03'), rows, later()), worker);
    expect(o.status).toBe('loaded');
    expect(await months('report_pt_campaign__v2')).toEqual(['2025-02-01']);
    // Back to the serving shape, for the tests below.
    await withClient((c) => ensureReportTables(c, warehouseOf(db.pool, S), [report]));
  });

  it("a load's check for its month names one partition, and still finds a table's whose names are shortened", async () => {
    const wh = warehouseOf(db.pool, S);
    const named = async (table: string) =>
      (
        await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = to_regclass($1)`,
          [`${S}.${table}`],
        )
      ).rows[0]?.n;
    // A table version past 63 bytes with the month: its partitions are named by derivedName (hashed).
    const long = `report_pt_campaign__v${'9'.repeat(40)}`;
    await db.pool.query(
      `CREATE TABLE ${S}.${long} (LIKE ${S}.report_pt_campaign INCLUDING DEFAULTS) PARTITION BY RANGE (period_start)`,
    );
    await db.pool.query(
      `INSERT INTO ${S}.report_versions (report, version, dimensions, table_name, state, auto_swap)
       VALUES ('pt_campaign', 99, '{day,creative_id}', $1, 'building', false)`,
      [long],
    );
    try {
      await ensureLoadPartition(wh, 'pt_campaign', '2024-11-05');
      await ensureLoadPartition(wh, 'pt_campaign', '2024-11-20');
      expect(await months(long)).toEqual(['2024-11-01']);
      expect((await partitionsOf(wh, long))[0]?.name).toBe(partitionName(long, '2024-11-01'));
      expect(partitionName(long, '2024-11-01')).toHaveLength(63);
      expect(await months('report_pt_campaign')).toContain('2024-11-01');
      // The statement itself: for a month, a short name's table sends only that month's partition.
      const { rows } = await db.pool.query<{ table_name: string; partitions: string[] }>({
        text: liveTables(S, 'pt_campaign', '2024-11-01').text,
        values: [...liveTables(S, 'pt_campaign', '2024-11-01').values],
      });
      const of = (t: string) => rows.find((r) => r.table_name === t)?.partitions;
      expect(of('report_pt_campaign')).toEqual(['report_pt_campaign__p202411']);
      expect(of(long)).toHaveLength((await named(long)) ?? -1);
    } finally {
      await db.pool.query(`DELETE FROM ${S}.report_versions WHERE report = 'pt_campaign' AND version = 99`);
      await db.pool.query(`DROP TABLE ${S}.${long}`);
    }
  });

  it('the BI views over a partitioned table show the loaded rows', async () => {
    const zone = reportJob('daily_zone', ['day', 'zone_id']);
    await loadPulledPeriod(
      db.pool,
      S,
      pulled(
        zone,
        day('2025-04-02'),
        [
          [
            ['2025-04-02', '7'],
            [10, 5, 4, 2, 1],
          ],
        ],
        later(),
      ),
    );
    const { rows } = await db.pool.query(
      `SELECT day::text, zone_id::int, impressions::int FROM ${S}.bi_daily_zone WHERE day = '2025-04-02'`,
    );
    expect(rows).toEqual([{ day: '2025-04-02', zone_id: 7, impressions: 4 }]);
    const daily = await db.pool.query(
      `SELECT day::text, impressions::int FROM ${S}.bi_daily_zone_daily WHERE day = '2025-04-02'`,
    );
    expect(daily.rows).toEqual([{ day: '2025-04-02', impressions: 4 }]);
  });
});

describe('BI over partitions', () => {
  const zone = reportJob('daily_zone', ['day', 'zone_id']);

  it("a month's query of a bi_ view, which filters on day, reads that month's partition and at most the one before", async () => {
    for (const d of ['2025-07-31', '2025-08-01', '2025-08-31', '2025-09-01'])
      await loadPulledPeriod(
        db.pool,
        S,
        pulled(
          zone,
          day(d),
          [
            [
              [d, '5'],
              [4, 3, 2, 1, 1],
            ],
          ],
          later(),
        ),
      );
    const plan = await db.pool.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN SELECT zone_id, sum(impressions) FROM ${S}.bi_daily_zone
        WHERE day >= '2025-08-01' AND day < '2025-09-01' GROUP BY zone_id`,
    );
    const read = new Set(
      plan.rows.flatMap((r) =>
        [...r['QUERY PLAN'].matchAll(/report_daily_zone__p(\d{6})/g)].map((m) => m[1]),
      ),
    );
    expect([...read].sort()).toEqual(['202507', '202508']);
    const { rows } = await db.pool.query(
      `SELECT day::text, impressions::int FROM ${S}.bi_daily_zone
        WHERE day >= '2025-08-01' AND day < '2025-09-01' ORDER BY day`,
    );
    expect(rows).toEqual([
      { day: '2025-08-01', impressions: 2 },
      { day: '2025-08-31', impressions: 2 },
    ]);
  });

  it("each partition refuses a row whose day its period could not hold (the CHECK that lets BI's day filters skip it)", async () => {
    await expect(
      db.pool.query(
        `INSERT INTO ${S}.report_daily_zone (period_start, period_end, day, zone_id, ad_requests, filled_impressions,
           impressions, measurable_impressions, viewable_impressions, load_id)
         VALUES ('2025-08-31', '2025-08-31', '2025-09-07', 5, 1, 1, 1, 1, 1, 1)`,
      ),
    ).rejects.toMatchObject({ code: '23514', constraint: DAY_CHECK });
    // A week starting on the month's last day ends six days into the next: allowed.
    await db.pool.query(
      `INSERT INTO ${S}.report_daily_zone (period_start, period_end, day, zone_id, ad_requests, filled_impressions,
         impressions, measurable_impressions, viewable_impressions, load_id)
       VALUES ('2025-08-31', '2025-09-06', '2025-09-06', 6, 1, 1, 1, 1, 1, 1)`,
    );
  });
});

describe('retention', () => {
  const report: ReportJob = { ...reportJob('pt_kept', ['day', 'campaign_id']), retentionMonths: 3 };
  const now = new Date('2026-06-15T12:00:00Z');
  const loaded = ['2026-01-20', '2026-02-27', '2026-02-28', '2026-03-01', '2026-06-10'];

  beforeAll(async () => {
    await createTables(db.pool, [report]);
    for (const d of loaded) await loadPulledPeriod(db.pool, S, pulled(report, day(d), rowsOf(d, 2), later()));
    // Each period loaded the day after it, as a nightly schedule does: retention never drops a month
    // holding a load younger than retention_months by the database's clock.
    await db.pool.query(
      `UPDATE ${S}.report_loads SET recorded_at = period_start + interval '1 day' WHERE report = $1`,
      [report.name],
    );
  });

  it('drops the partitions wholly older than retention_months and marks their periods, keeping the rest', async () => {
    const upkeep = await withClient((c) => maintainPartitions(c, warehouseOf(db.pool, S), [report], now));
    // 2026-06-15 less 3 months is 2026-03-15: February ended before it, March did not.
    expect(upkeep.dropped.map((d) => d.partition)).toEqual([
      'report_pt_kept__p202601',
      'report_pt_kept__p202602',
    ]);
    expect(upkeep.marked).toBe(3);
    expect(await months('report_pt_kept')).toEqual(['2026-03-01', '2026-06-01', '2026-07-01', '2026-08-01']);
    const { rows } = await db.pool.query(
      `SELECT period_start::text AS d, count(*)::int AS n FROM ${S}.report_pt_kept GROUP BY 1 ORDER BY 1`,
    );
    expect(rows).toEqual([
      { d: '2026-03-01', n: 2 },
      { d: '2026-06-10', n: 2 },
    ]);
    const marks = await db.pool.query(
      `SELECT period_start::text AS d, retention_dropped_at IS NOT NULL AS dropped FROM ${S}.report_totals
        WHERE report = $1 ORDER BY 1`,
      [report.name],
    );
    expect(marks.rows).toEqual([
      { d: '2026-01-20', dropped: true },
      { d: '2026-02-27', dropped: true },
      { d: '2026-02-28', dropped: true },
      { d: '2026-03-01', dropped: false },
      { d: '2026-06-10', dropped: false },
    ]);
    const loads = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${S}.report_loads WHERE report = $1 AND retention_dropped_at IS NOT NULL`,
      [report.name],
    );
    expect(loads.rows[0]?.n).toBe(3);
    // A second run has nothing left to drop.
    expect(
      (await withClient((c) => maintainPartitions(c, warehouseOf(db.pool, S), [report], now))).dropped,
    ).toEqual([]);
  });

  it('status says "dropped by retention" for those periods instead of missing, and heal does not re-pull them', async () => {
    const status = await collectStatus(
      warehouseOf(db.pool, S),
      { reports: [report], entities: [] },
      undefined,
      120,
      now,
    );
    const r = status.reports[0];
    expect(r?.droppedByRetention).toContain('2026-02-27');
    expect(r?.droppedByRetention).toContain('2026-02-28');
    expect(r?.droppedByRetention).not.toContain('2026-03-01');
    expect(r?.missing.some((d) => d < '2026-03-01')).toBe(false);
    expect(r?.missing).toContain('2026-03-02');
    expect(renderStatus(status)).toContain('pt_kept: dropped by retention: 2026-02-15..2026-02-28');
    const plan = await readHealPlan(warehouseOf(db.pool, S), [report], 120, now);
    expect(plan.length).toBeGreaterThan(0);
    expect(plan.every((p) => p.period.start >= '2026-03-01')).toBe(true);
    expect(plan.some((p) => p.period.start === '2026-03-01')).toBe(false);
  });
});
