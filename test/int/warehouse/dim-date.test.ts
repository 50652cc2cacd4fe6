import { afterAll, beforeAll, expect, it } from 'vitest';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { openTestDatabase } from './fixtures/reports.js';

const S = TEST_SCHEMA;
let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

it('dim_date holds every day from 2000 to 2100 once', async () => {
  const { rows } = await db.pool.query(
    `SELECT count(*)::int AS n, count(DISTINCT date)::int AS distinct_days, min(date)::text AS first, max(date)::text AS last
       FROM ${S}.dim_date`,
  );
  expect(rows).toEqual([{ n: 36890, distinct_days: 36890, first: '2000-01-01', last: '2100-12-31' }]);
});

it('dim_date gives ISO weeks across year ends, quarters, weekdays and the first day of each period', async () => {
  const { rows } = await db.pool.query(
    `SELECT date::text, year, quarter, month, month_name, iso_year, iso_week, iso_weekday, weekday_name, is_weekend,
            week_start::text, month_start::text, quarter_start::text, year_month, iso_year_week
       FROM ${S}.dim_date WHERE date IN ('2021-01-03', '2024-12-30', '2026-08-15') ORDER BY date`,
  );
  expect(rows).toEqual([
    {
      date: '2021-01-03',
      year: 2021,
      quarter: 1,
      month: 1,
      month_name: 'January',
      iso_year: 2020,
      iso_week: 53,
      iso_weekday: 7,
      weekday_name: 'Sunday',
      is_weekend: true,
      week_start: '2020-12-28',
      month_start: '2021-01-01',
      quarter_start: '2021-01-01',
      year_month: '2021-01',
      iso_year_week: '2020-W53',
    },
    {
      date: '2024-12-30',
      year: 2024,
      quarter: 4,
      month: 12,
      month_name: 'December',
      iso_year: 2025,
      iso_week: 1,
      iso_weekday: 1,
      weekday_name: 'Monday',
      is_weekend: false,
      week_start: '2024-12-30',
      month_start: '2024-12-01',
      quarter_start: '2024-10-01',
      year_month: '2024-12',
      iso_year_week: '2025-W01',
    },
    {
      date: '2026-08-15',
      year: 2026,
      quarter: 3,
      month: 8,
      month_name: 'August',
      iso_year: 2026,
      iso_week: 33,
      iso_weekday: 6,
      weekday_name: 'Saturday',
      is_weekend: true,
      week_start: '2026-08-10',
      month_start: '2026-08-01',
      quarter_start: '2026-07-01',
      year_month: '2026-08',
      iso_year_week: '2026-W33',
    },
  ]);
});
