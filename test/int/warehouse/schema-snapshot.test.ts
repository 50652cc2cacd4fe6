// Schema drift fails the build: the warehouse tables of a freshly migrated database must match the
// committed description. After an intended change (a new migration, a changed jobs/*.yaml), update
// it with `npx vitest run test/int/warehouse/schema-snapshot.test.ts -u` and review the diff.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { openTestDatabase } from './fixtures/reports.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

it('the migrated report tables match the committed schema description', async () => {
  const { rows: columns } = await db.pool.query<{ line: string }>(
    `SELECT format('%s.%s %s%s%s%s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
                   CASE WHEN a.attnotnull THEN ' not null' ELSE '' END,
                   CASE a.attidentity WHEN 'd' THEN ' identity by default' WHEN 'a' THEN ' identity always' ELSE '' END,
                   COALESCE(' default ' || pg_get_expr(d.adbin, d.adrelid), '')) AS line
       FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid AND c.relkind = 'r'
       JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE n.nspname = $1 AND c.relname LIKE 'report\\_%' AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY c.relname, a.attnum`,
    [TEST_SCHEMA],
  );
  const { rows: indexes } = await db.pool.query<{ line: string }>(
    `SELECT regexp_replace(indexdef, '^CREATE ', '') AS line FROM pg_indexes
      WHERE schemaname = $1 AND tablename LIKE 'report\\_%' ORDER BY tablename, indexname`,
    [TEST_SCHEMA],
  );
  const { rows: constraints } = await db.pool.query<{ line: string }>(
    `SELECT format('%s %s %s', cl.relname, co.conname, pg_get_constraintdef(co.oid)) AS line
       FROM pg_constraint co JOIN pg_class cl ON cl.oid = co.conrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
      WHERE n.nspname = $1 AND cl.relname LIKE 'report\\_%' ORDER BY cl.relname, co.conname`,
    [TEST_SCHEMA],
  );
  const text = [
    '# columns',
    ...columns.map((r) => r.line),
    '# indexes',
    ...indexes.map((r) => r.line),
    '# constraints',
    ...constraints.map((r) => r.line),
    '',
  ].join('\n');
  await expect(text).toMatchFileSnapshot('./__snapshots__/schema.txt');
});
