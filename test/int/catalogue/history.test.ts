// The catalogue's history (SCD type 2): a sync that changes a campaign's or creative's name, status
// or delivery closes its current version and opens a new one, in the sync's own transaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalogue } from '../../../src/catalogue/rows.js';
import { ProblemLog } from '../../../src/catalogue/fields.js';
import { writeCatalogue } from '../../../src/catalogue/sync.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { creative, fullCampaign } from '../../unit/catalogue/fixtures.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

const S = TEST_SCHEMA;
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

function catalogue(campaigns: Record<string, unknown>[], creatives: Record<string, unknown>[]) {
  const byCampaign = new Map<number, unknown[]>();
  for (const c of campaigns) byCampaign.set(c.campaign_id as number, []);
  for (const k of creatives) byCampaign.get(k.campaign_id as number)?.push(k);
  return buildCatalogue({ campaigns, creativesByCampaign: byCampaign }, new ProblemLog());
}

async function campaignHistory() {
  const { rows } = await db.pool.query(
    `SELECT campaign_id::int AS id, name, is_active, deleted, valid_from, valid_to
       FROM ${S}.campaigns_history ORDER BY campaign_id, valid_from`,
  );
  return rows as {
    id: number;
    name: string;
    is_active: boolean;
    deleted: boolean;
    valid_from: Date;
    valid_to: Date | null;
  }[];
}

/** The transaction start of the last sync, as the campaigns' synced_at records it. */
async function lastSync(): Promise<Date> {
  const { rows } = await db.pool.query(`SELECT max(synced_at) AS t FROM ${S}.campaigns`);
  return rows[0].t as Date;
}

describe('campaigns_history and creatives_history', () => {
  it('keeps each change of name, status or delivery as a version with its validity interval', async () => {
    const created = new Date(1757664027 * 1000);
    const video = creative({ campaign_id: 1, creative_id: 10 });
    await writeCatalogue(
      warehouseOf(db.pool, S),
      catalogue([fullCampaign({ campaign_id: 1, name: 'Spring' })], [video]),
    );
    expect(await campaignHistory()).toEqual([
      { id: 1, name: 'Spring', is_active: true, deleted: false, valid_from: created, valid_to: null },
    ]);

    // A sync that changes nothing the history tracks adds no version.
    await writeCatalogue(
      warehouseOf(db.pool, S),
      catalogue([fullCampaign({ campaign_id: 1, name: 'Spring', weight: 99 })], [video]),
    );
    expect(await campaignHistory()).toHaveLength(1);

    await writeCatalogue(
      warehouseOf(db.pool, S),
      catalogue(
        [fullCampaign({ campaign_id: 1, name: 'Summer', is_active: false })],
        [{ ...video, name: 'Cut' }],
      ),
    );
    const renamed = await lastSync();
    expect(await campaignHistory()).toEqual([
      { id: 1, name: 'Spring', is_active: true, deleted: false, valid_from: created, valid_to: renamed },
      { id: 1, name: 'Summer', is_active: false, deleted: false, valid_from: renamed, valid_to: null },
    ]);
    const creatives = await db.pool.query(
      `SELECT creative_id::int AS id, name, valid_to IS NULL AS current FROM ${S}.creatives_history ORDER BY valid_from`,
    );
    expect(creatives.rows).toEqual([
      { id: 10, name: 'Hero video', current: false },
      { id: 10, name: 'Cut', current: true },
    ]);

    // A campaign the API no longer lists gets a deleted version; it keeps its last name.
    await writeCatalogue(
      warehouseOf(db.pool, S),
      catalogue([fullCampaign({ campaign_id: 2, name: 'Other' })], []),
    );
    const deletedAt = await lastSync();
    const history = await campaignHistory();
    expect(history.filter((h) => h.id === 1).slice(1)).toEqual([
      { id: 1, name: 'Summer', is_active: false, deleted: false, valid_from: renamed, valid_to: deletedAt },
      { id: 1, name: 'Summer', is_active: false, deleted: true, valid_from: deletedAt, valid_to: null },
    ]);
  });

  it('gives a report row the name its campaign had on that day', async () => {
    // The version in force at the end of each day (UTC): valid_from < end of day <= valid_to.
    const { rows } = await db.pool.query(
      `WITH facts(day) AS (VALUES ('2025-10-01'::date), (current_date + 1))
       SELECT f.day::text, h.name
         FROM facts f
         JOIN ${S}.campaigns_history h ON h.campaign_id = 1
          AND h.valid_from < ((f.day + 1)::timestamp AT TIME ZONE 'UTC')
          AND (h.valid_to IS NULL OR h.valid_to >= ((f.day + 1)::timestamp AT TIME ZONE 'UTC'))
        ORDER BY f.day`,
    );
    expect(rows.map((r) => r.name)).toEqual(['Spring', 'Summer']);
  });

  it('rolls the history back with a sync that fails', async () => {
    const before = await campaignHistory();
    await expect(
      writeCatalogue(
        warehouseOf(db.pool, S),
        catalogue([fullCampaign({ campaign_id: 2, name: 'Renamed' })], []),
        {
          beforeCommit: () => Promise.reject(new Error('sync died before commit')),
        },
      ),
    ).rejects.toThrow('sync died before commit');
    expect(await campaignHistory()).toEqual(before);
  });
});
