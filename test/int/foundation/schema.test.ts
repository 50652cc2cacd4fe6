// Schema drift fails the build: a freshly migrated database must dump exactly as test/schema.sql.
// After an intended change (a new migration, a changed jobs/*.yaml or view), run `npm run db:dump`
// and review the diff of test/schema.sql in the commit.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { migratedSchema, SCHEMA_FILE } from '../../../scripts/schema-dump.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
});
afterAll(async () => {
  await db.drop();
});

it('a migrated database matches the committed schema dump (run `npm run db:dump` after an intended change)', async () => {
  const dump = await migratedSchema(db.url, 'adops');
  expect(dump).toContain('CREATE TABLE adops.report_loads');
  expect(dump).toContain('CREATE VIEW adops.bi_daily_campaign');
  expect(dump).toBe(readFileSync(SCHEMA_FILE, 'utf8'));
});
