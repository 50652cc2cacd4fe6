// Schema drift fails the build: the entity tables and BI views of a freshly migrated database must
// match the committed description. After an intended change (a new migration, a changed view),
// update it with `npx vitest run test/int/entities/schema-snapshot.test.ts -u` and review the diff.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadJobs } from '../../../src/config/jobs.js';
import { ensureReportTables } from '../../../src/warehouse/report-tables.js';
import { ensureViews } from '../../../src/warehouse/entities/views.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';

const RELATIONS = ['campaigns', 'creatives', 'campaign_zones'];
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  const client = await db.pool.connect();
  try {
    const { reports } = loadJobs('jobs');
    await ensureReportTables(client, TEST_SCHEMA, reports);
    await ensureViews(client, TEST_SCHEMA, reports);
  } finally {
    client.release();
  }
});
afterAll(async () => {
  await db?.drop();
});

it('the entity tables and BI views match the committed schema description', async () => {
  const { rows: columns } = await db.pool.query<{ line: string }>(
    `SELECT format('%s.%s %s%s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
                   CASE WHEN a.attnotnull THEN ' not null' ELSE '' END) AS line
       FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid AND c.relkind IN ('r', 'v')
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND (c.relname = ANY($2) OR c.relname LIKE 'bi\\_%')
        AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY c.relkind, c.relname, a.attnum`,
    [TEST_SCHEMA, RELATIONS],
  );
  const { rows: indexes } = await db.pool.query<{ line: string }>(
    `SELECT regexp_replace(indexdef, '^CREATE ', '') AS line FROM pg_indexes
      WHERE schemaname = $1 AND tablename = ANY($2) ORDER BY tablename, indexname`,
    [TEST_SCHEMA, RELATIONS],
  );
  const { rows: constraints } = await db.pool.query<{ line: string }>(
    `SELECT format('%s %s %s', cl.relname, co.conname, pg_get_constraintdef(co.oid)) AS line
       FROM pg_constraint co JOIN pg_class cl ON cl.oid = co.conrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
      WHERE n.nspname = $1 AND cl.relname = ANY($2) ORDER BY cl.relname, co.conname`,
    [TEST_SCHEMA, RELATIONS],
  );
  const text = [
    '# columns (tables, then views)',
    ...columns.map((r) => r.line),
    '# indexes',
    ...indexes.map((r) => r.line),
    '# constraints',
    ...constraints.map((r) => r.line),
    '',
  ].join('\n');
  await expect(text).toMatchFileSnapshot('./__snapshots__/entities-schema.txt');
});
