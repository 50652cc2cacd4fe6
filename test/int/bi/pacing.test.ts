// bi_campaign_pacing by hand: a fixed clock (the setting adops.now), a fixed catalogue and known delivery of
// a report in America/New_York (EST, UTC-5, in February), and every state and figure worked out below.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReportJob } from '../../../src/platform/config/jobs.js';
import { addDays } from '../../../src/platform/dates/calendar.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import { setupWarehouse } from '../../../src/schema/migrate.js';
import { asidePacing, choosePacingReport } from '../../../src/schema/pacing.js';
import { setupBiRole } from '../../../src/schema/bi-role.js';
import { startEmulator } from '../../../src/emulator/index.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { loadPulledPeriod } from '../../helpers/pipeline.js';
import { pulled, type Row } from '../warehouse/fixtures/reports.js';
import { lastDays, pullDays, REPORTS, syncCatalogue } from './fill.js';

const S = 'pacing';
const TZ = 'America/New_York';
const JOB: ReportJob = {
  kind: 'report',
  name: 'pacing_daily',
  dimensions: ['day', 'campaign_id'],
  period: 'day',
  lookbackDays: 3,
  schedule: { cron: '0 3 * * *', timezone: TZ },
  file: 'test:pacing_daily',
};
/** Noon in New York on 2026-02-10: half of the local day has passed. */
const NOW = '2026-02-10T17:00:00Z';
/** Local midnight (EST) of a February day, as an instant. */
const est = (day: string) => `${day}T05:00:00Z`;

/** Campaigns: [account, id, event, period, speed, goal, flight start, end (EST days; null: open)]. */
const CAMPAIGNS: ReadonlyArray<
  readonly [string, number, string | null, string, string, number, string | null, string | null]
> = [
  ['default', 1, 'impressions', 'due_date', 'spread', 30_000, '2026-02-01', '2026-03-03'],
  ['default', 2, 'impressions', 'due_date', 'spread', 10_000, '2026-02-05', '2026-02-25'],
  ['default', 3, 'impressions', 'due_date', 'asap', 5_000, '2026-02-01', '2026-02-28'],
  ['default', 4, 'impressions', 'day', 'spread', 1_000, null, null],
  ['default', 5, 'impressions', 'day', 'asap', 500, '2026-02-06', null],
  ['default', 6, 'impressions', 'due_date', 'spread', 19_000, '2026-01-20', '2026-02-08'],
  ['default', 7, 'impressions', 'due_date', 'spread', 10_000, '2026-02-15', '2026-03-15'],
  ['default', 8, 'impressions', 'due_date', 'spread', 10_000, '2026-02-01', null],
  ['default', 9, 'conversions', 'due_date', 'spread', 300, '2026-02-01', '2026-03-03'],
  ['default', 10, 'clicks', 'due_date', 'spread', 3_000, '2026-02-01', '2026-03-03'],
  ['default', 11, null, 'due_date', 'spread', 0, null, null], // no goal: no row
  ['default', 12, 'impressions', 'due_date', 'spread', 0, null, null], // a goal of 0: no row
  ['live', 1, 'impressions', 'day', 'spread', 1_000, null, null],
  ['live', 2, 'impressions', 'day', 'asap', 200, '2026-02-08', '2026-02-12'],
  ['live', 3, 'impressions', 'due_date', 'spread', 1_000, '2026-02-05', '2026-02-15'],
];

/** Impressions a day per account and campaign, over February 1 to 9 (live: to 10, today, provisional). */
function delivered(account: string, id: number, day: string): number {
  const today = day === '2026-02-10';
  const [, , , , , , start, end] = CAMPAIGNS.find((c) => c[0] === account && c[1] === id) ?? [];
  // Nothing outside the flight, but a row on Feb 4 for campaign 2, which starts on the 5th: not counted.
  if (account === 'default' && id === 2 && day === '2026-02-04') return 999;
  if (
    (start !== null && start !== undefined && day < start) ||
    (end !== null && end !== undefined && day >= end)
  )
    return 0;
  const perDay: Record<string, number> = {
    'default 1': 8_200 / 9,
    'default 2': 300,
    'default 3': 600,
    'default 4': 1_150,
    'default 5': 400,
    'default 6': 1_000,
    'default 8': 100,
    'live 1': today ? 400 : 1_000,
    'live 2': today ? 60 : 150,
    'live 3': today ? 40 : 100,
  };
  return Math.round(perDay[`${account} ${id}`] ?? 0);
}

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  const wh = warehouseOf(db.pool, S);
  await setupWarehouse(wh, { reports: [JOB] });
  for (const [account, id, event, period, speed, goal, start, end] of CAMPAIGNS)
    await db.pool.query(
      `INSERT INTO ${S}.campaigns (account, campaign_id, name, ad_format, is_active, created, delivery_start,
         delivery_end, pacing_event, pacing_period, pacing_speed, pacing_value, event_clicks, raw, synced_at)
       VALUES ($1, $2, $3, 'display', true, '2026-01-01T05:00:00Z', $4, $5, $6, $7, $8, $9, $10, '{}', $11)`,
      [
        account,
        id,
        `${account} #${id}`,
        start === null ? null : est(start),
        end === null ? null : est(end),
        event,
        period,
        speed,
        goal,
        id === 10 ? 1_000 : 5,
        est('2026-02-07'),
      ],
    );
  // A deleted campaign with a goal: no row.
  await db.pool.query(
    `INSERT INTO ${S}.campaigns (account, campaign_id, pacing_event, pacing_period, pacing_speed, pacing_value,
       raw, synced_at, deleted_at) VALUES ('default', 13, 'impressions', 'day', 'spread', 5, '{}', now(), now())`,
  );
  let at = Date.UTC(2026, 1, 11);
  for (const account of ['default', 'live'])
    for (
      let day = '2026-02-01';
      day <= (account === 'live' ? '2026-02-10' : '2026-02-09');
      day = addDays(day, 1)
    ) {
      const rows: Row[] = CAMPAIGNS.filter((c) => c[0] === account)
        .map(([, id]): Row => [[day, String(id)], Array(5).fill(delivered(account, id, day)) as number[]])
        .filter(([, counters]) => (counters[0] ?? 0) > 0);
      const outcome = await loadPulledPeriod(db.pool, S, {
        ...pulled(JOB, { start: day, end: day }, rows, new Date((at += 1000))),
        account,
      });
      expect(outcome.status, `${account} ${day}`).toBe('loaded');
    }
});
const ROLE = `adops_pace_${randomBytes(4).toString('hex')}`;
afterAll(async () => {
  await db?.drop();
  const admin = new pg.Client({ connectionString: db.url.replace(/\/[^/]*$/, '/postgres') });
  await admin.connect();
  await admin.query(`DROP ROLE IF EXISTS ${ROLE}`);
  await admin.end();
});

interface Pacing {
  account: string;
  campaign_id: string;
  state: string;
  as_of: Date | null;
  delivered: string | null;
  expected: number | null;
  pace: number | null;
  projected: number | null;
  provisional: boolean;
}

async function pacing(now = NOW, schema = S): Promise<Map<string, Pacing>> {
  const client = await db.pool.connect();
  try {
    await client.query(`SELECT set_config('adops.now', $1, false)`, [now]);
    const { rows } = await client.query<Pacing>(`SELECT * FROM ${schema}.bi_campaign_pacing ORDER BY 1, 2`);
    return new Map(rows.map((r) => [`${r.account} ${r.campaign_id}`, r]));
  } finally {
    await client.query('RESET adops.now');
    client.release();
  }
}

/** What each row must say: state, delivered, expected, pace, projected, as of, provisional. */
type Figures = [string, number | null, number | null, number | null, number | null, string | null, boolean];
const DAY = 86_400;
const EXPECTED: Record<string, Figures> = {
  // 30 days from Feb 1; 9 loaded (as of Feb 10 00:00 EST): 9/30 of 30,000 due.
  'default 1': ['on_pace', 8_199, 9_000, 8_199 / 9_000, (8_199 * 30) / 9, est('2026-02-10'), false],
  // 20 days from Feb 5, 5 elapsed: 2,500 due; 5 x 300 delivered (Feb 4's 999 is before the flight).
  'default 2': ['behind', 1_500, 2_500, 0.6, (1_500 * 20) / 5, est('2026-02-10'), false],
  // asap: the whole goal is due; 27 days of flight, 9 elapsed.
  'default 3': ['on_pace', 5_400, 5_000, 1.08, (5_400 * 27) / 9, est('2026-02-10'), false],
  // A day goal from the first loaded day (Feb 1; the flight is open): 9 whole days due.
  'default 4': ['ahead', 10_350, 9_000, 1.15, null, est('2026-02-10'), false],
  // From Feb 6: 4 days of 500; the day just begun (share 0) adds nothing even for asap.
  'default 5': ['behind', 1_600, 2_000, 0.8, null, est('2026-02-10'), false],
  // Ended Feb 8 (19 days from Jan 20, all due); loaded from Feb 1 only, projected is what it delivered.
  'default 6': ['ended', 7_000, 19_000, 7_000 / 19_000, 7_000, est('2026-02-10'), false],
  // Starts Feb 15: nothing due, nothing to project.
  'default 7': ['not_started', 0, 0, null, null, est('2026-02-10'), false],
  // A spread goal over a flight without end has no share: no_end.
  'default 8': ['no_end', 900, null, null, null, est('2026-02-10'), false],
  // Nothing counts conversions.
  'default 9': ['no_data', null, 90, null, null, est('2026-02-10'), false],
  // Clicks from the lifetime counter (1,000), as of the sync (Feb 7 00:00 EST): 6/30 of 3,000 due.
  'default 10': ['ahead', 1_000, 600, 1_000 / 600, (1_000 * 30) / 6, est('2026-02-07'), false],
  // Today (Feb 10) loaded provisionally: as of now, 9 whole days and half of today due.
  'live 1': ['on_pace', 9_400, 9_500, 9_400 / 9_500, null, NOW, true],
  // asap day goal from Feb 8: two whole days and today whole; flight of 4 days, 2.5 elapsed.
  'live 2': ['behind', 360, 600, 0.6, (360 * 4) / 2.5, NOW, true],
  // 10 days from Feb 5, 5.5 elapsed: 550 due.
  'live 3': ['on_pace', 540, 550, 540 / 550, (540 * 10) / 5.5, NOW, true],
};

describe('bi_campaign_pacing', () => {
  it('says every state and figure as worked out by hand, in the report time zone, today provisional', async () => {
    const rows = await pacing();
    expect([...rows.keys()].sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const [key, [state, delivered, expected, pace, projected, asOf, provisional]] of Object.entries(
      EXPECTED,
    )) {
      const r = rows.get(key)!;
      expect(r.state, key).toBe(state);
      expect(r.delivered === null ? null : Number(r.delivered), key).toBe(delivered);
      for (const [got, want, what] of [
        [r.expected, expected, 'expected'],
        [r.pace, pace, 'pace'],
        [r.projected, projected, 'projected'],
      ] as const)
        if (want === null) expect(got, `${key} ${what}`).toBeNull();
        else expect(got, `${key} ${what}`).toBeCloseTo(want, 6);
      expect(r.as_of?.toISOString(), key).toBe(asOf === null ? undefined : new Date(asOf).toISOString());
      expect(r.provisional, key).toBe(provisional);
    }
  });

  it('takes its clock from adops.now: a day later the spread goal is due further and live today is final', async () => {
    const later = await pacing(new Date(Date.parse(NOW) + DAY * 1000).toISOString());
    // Feb 11 noon: default's data still ends Feb 10 00:00, so its figures stay; live's Feb 10 is now past.
    expect(later.get('default 1')?.expected).toBeCloseTo(9_000, 6);
    expect(later.get('live 1')).toMatchObject({ provisional: false, as_of: new Date(est('2026-02-11')) });
    expect(later.get('live 1')?.expected).toBeCloseTo(10_000, 6);
    // And before the flights began, every one with a start has not started.
    const early = await pacing('2026-01-15T12:00:00Z');
    expect(early.get('default 6')?.state).toBe('not_started');
    expect(early.get('default 2')?.state).toBe('not_started');
  });

  it('takes its bands from the settings at migrate', async () => {
    await setupWarehouse(warehouseOf(db.pool, S), { reports: [JOB], pacing: { behind: 0.95, ahead: 1.2 } });
    const banded = await pacing();
    expect(banded.get('default 1')?.state).toBe('behind'); // 0.911
    expect(banded.get('default 4')?.state).toBe('on_pace'); // 1.15
    expect(banded.get('default 10')?.state).toBe('ahead'); // 1.67
    await setupWarehouse(warehouseOf(db.pool, S), { reports: [JOB] });
    expect((await pacing()).get('default 1')?.state).toBe('on_pace');
  });
});

describe('an evolution swap', () => {
  it('finds bi_campaign_pacing made again as it was, commented and granted to the BI roles', async () => {
    const wh = warehouseOf(db.pool, S);
    await setupBiRole(wh, ROLE);
    const before = await pacing();
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const gone = await asidePacing(
        client,
        wh,
        JOB.name,
        async () => (await client.query(`SELECT to_regclass('${S}.bi_campaign_pacing') AS v`)).rows[0]?.v,
      );
      await client.query('COMMIT');
      expect(gone).toBeNull();
    } finally {
      client.release();
    }
    expect(await pacing()).toEqual(before);
    const { rows } = await db.pool.query<{ granted: boolean; comment: string | null }>(
      `SELECT has_table_privilege($1, $2, 'SELECT') AS granted, col_description($2::regclass, 17) AS comment`,
      [ROLE, `${S}.bi_campaign_pacing`],
    );
    expect(rows[0]?.granted).toBe(true);
    expect(rows[0]?.comment).toMatch(/by pace: behind/);
  });
});

describe('the report bi_campaign_pacing reads', () => {
  const reports = [
    { name: 'daily_zone', dimensions: ['day', 'zone_id'] },
    { name: 'daily_creative', dimensions: ['day', 'campaign_id', 'creative_id'] },
    { name: 'b_campaign', dimensions: ['campaign_id', 'day'] },
    { name: 'a_campaign', dimensions: ['day', 'campaign_id'] },
  ];

  it('is the one with day and campaign_id and the fewest other dimensions, the first by name on a tie', () => {
    expect(choosePacingReport(reports)).toEqual({ report: 'a_campaign' });
    expect(choosePacingReport(reports.slice(0, 1))).toEqual({
      why: expect.stringMatching(/no report has both the day and campaign_id dimensions/),
    });
  });

  it('is the one a setting names, refused when it lacks a dimension or a table', () => {
    expect(choosePacingReport(reports, 'daily_creative')).toEqual({ report: 'daily_creative' });
    expect(() => choosePacingReport(reports, 'daily_zone')).toThrow(
      /ADOPS_PACING_REPORT=daily_zone: its table lacks campaign_id/,
    );
    expect(() => choosePacingReport(reports, 'nope')).toThrow(/no job definition of that name has a table/);
  });
});

describe('bi_campaign_pacing over the emulator', () => {
  it('shows every state for the seeds of the demo, with traffic only inside each flight', async () => {
    const now = new Date('2026-03-10T12:00:00Z');
    const states = new Set<string>();
    for (const seed of [1, 2]) {
      const emulator = await startEmulator({ seed, now: () => now });
      try {
        await db.pool.query(`TRUNCATE ${TEST_SCHEMA}.report_loads, ${TEST_SCHEMA}.campaigns CASCADE`);
        await db.pool.query(`DELETE FROM ${TEST_SCHEMA}.report_daily_campaign`);
        await syncCatalogue(db, emulator);
        await pullDays(
          db,
          emulator,
          lastDays(7, now),
          REPORTS.filter((r) => r.name === 'daily_campaign'),
        );
        for (const r of (await pacing(now.toISOString(), TEST_SCHEMA)).values()) states.add(r.state);
        const { rows: outside } = await db.pool.query(
          `SELECT r.campaign_id, r.day FROM ${TEST_SCHEMA}.report_daily_campaign r
             JOIN ${TEST_SCHEMA}.campaigns c USING (account, campaign_id)
            WHERE r.day < (c.delivery_start AT TIME ZONE 'UTC')::date
               OR r.day >= (c.delivery_end AT TIME ZONE 'UTC')::date`,
        );
        expect(outside).toEqual([]);
      } finally {
        await emulator.close();
      }
    }
    expect([...states].sort()).toEqual([
      'ahead',
      'behind',
      'ended',
      'no_data',
      'no_end',
      'not_started',
      'on_pace',
    ]);
  }, 120_000);
});
