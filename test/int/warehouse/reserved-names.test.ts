// The reserved report names follow the schema itself: every relation a migration creates whose name
// a report's table report_<name> could take is refused as a report name. A later migration adding
// such a table, index or sequence fails this test until the reserved names cover it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/platform/config/files.js';
import { parseJob, REPORT_NAME, type ReportJob } from '../../../src/platform/config/jobs.js';
import { setupWarehouse } from '../../../src/schema/migrate.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ empty: true });
  // No report definitions: what is left in the schema is the system's own.
  await setupWarehouse(warehouseOf(db.pool, 'system_only'), { reports: [] });
});
afterAll(() => db.drop());

describe('reserved report names against a migrated schema', () => {
  it('refuses every name whose report_<name> a migration already uses, for tables, indexes, sequences and types', async () => {
    const { rows } = await db.pool.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'system_only'
       UNION
       SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE n.nspname = 'system_only'`,
    );
    const taken = rows
      .map((r) => r.name)
      .filter((name) => name.startsWith('report_'))
      .map((name) => name.slice('report_'.length))
      .filter((name) => REPORT_NAME.test(name))
      .sort();
    expect(taken).toContain('loads');
    expect(taken.length).toBeGreaterThan(3);
    const accepted = taken.filter((name) => {
      try {
        parseJob(`name: ${name}\ndimensions: [day]\n`, 'jobs/x.yaml');
        return true;
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as Error).message).toContain('is reserved');
        return false;
      }
    });
    expect(accepted).toEqual([]);
  });
});

describe('report names that collide with each other', () => {
  it.each([
    ['daily_campaign_id', 'an _id index'],
    ['daily_key', 'the unique index'],
  ])(
    'a report named %s beside report daily (day, campaign_id) is refused before anything is created (%s)',
    async (other) => {
      const daily = parseJob('name: daily\ndimensions: [day, campaign_id]\n', 'jobs/daily.yaml') as ReportJob;
      const clash = parseJob(`name: ${other}\ndimensions: [day]\n`, `jobs/${other}.yaml`) as ReportJob;
      const schema = `clash_${other}`;
      const error = await setupWarehouse(warehouseOf(db.pool, schema), { reports: [daily, clash] }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toBe(
        `jobs/${other}.yaml: name: "${other}": its table report_${other} has the name of an index of report daily ` +
          '(jobs/daily.yaml); rename one of the two reports',
      );
      const { rows } = await db.pool.query(
        "SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND relname LIKE 'report\\_daily%'",
        [schema],
      );
      expect(rows).toEqual([]);
    },
  );
});
