// sql/005_fetch_tokens.sql on a warehouse with loads already recorded: every load gets a fetch
// token in the order of its old fencing time, and new tokens come after them all.
import { copyFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { takeFetchToken } from '../../../src/warehouse/load/load.js';
import { migrate } from '../../../src/warehouse/migrate.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
});
afterAll(async () => {
  await db?.drop();
});

it('gives loads recorded before it tokens in fetch-time order, and issues later ones above them', async () => {
  const before = mkdtempSync(join(tmpdir(), 'adops-sql-'));
  for (const file of readdirSync('sql').filter((f) => /^00[1-4]_.*\.sql$/.test(f)))
    copyFileSync(join('sql', file), join(before, file));
  await migrate(db.pool, { schema: 'wh', sqlDir: before });
  // Recorded in one order, fetched in another; a failed fetch has no fetch time.
  for (const fetched of ['2026-01-03T00:00:00Z', '2026-01-01T00:00:00Z', null, '2026-01-02T00:00:00Z'])
    await db.pool.query(
      `INSERT INTO wh.report_loads (report, period_start, period_end, dimensions, status, http_attempts, fetched_at)
       VALUES ('r', '2026-01-01', '2026-01-01', '{day}', 'loaded', 1, $1)`,
      [fetched],
    );
  await migrate(db.pool, { schema: 'wh', sqlDir: 'sql' });
  const { rows } = await db.pool.query<{ fetched: string | null; token: string }>(
    `SELECT to_char(fetched_at AT TIME ZONE 'UTC', 'MM-DD') AS fetched, fetch_token::text AS token
       FROM wh.report_loads ORDER BY fetch_token`,
  );
  expect(rows).toEqual([
    { fetched: null, token: '1' },
    { fetched: '01-01', token: '2' },
    { fetched: '01-02', token: '3' },
    { fetched: '01-03', token: '4' },
  ]);
  expect(await takeFetchToken({ pool: db.pool, schema: 'wh' })).toBe(5);
});
