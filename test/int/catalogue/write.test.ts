import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { buildCatalogue } from '../../../src/catalogue/rows.js';
import { ProblemLog } from '../../../src/catalogue/fields.js';
import { writeCatalogue } from '../../../src/catalogue/sync.js';
import { bareCampaign, creative, fullCampaign } from '../../unit/catalogue/fixtures.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

const S = TEST_SCHEMA;

function catalogue(campaigns: Record<string, unknown>[], creatives: Record<string, unknown>[]) {
  const byCampaign = new Map<number, unknown[]>();
  for (const c of campaigns) byCampaign.set(c.campaign_id as number, []);
  for (const k of creatives) byCampaign.get(k.campaign_id as number)?.push(k);
  return buildCatalogue({ campaigns, creativesByCampaign: byCampaign }, new ProblemLog());
}

describe('writeCatalogue', () => {
  it('stores typed columns, [] as NULL, 0 times as NULL, zones, and the whole object as jsonb', async () => {
    const set = fullCampaign({ campaign_id: 1, future_field: { x: [1, 2] } });
    const bare = bareCampaign({ campaign_id: 2 });
    const result = await writeCatalogue(
      warehouseOf(db.pool, S),
      catalogue([set, bare], [creative({ campaign_id: 1, creative_id: 10 })]),
    );
    expect(result).toEqual({ campaigns: 2, creatives: 1, deleted: 0, revived: 0 });

    const { rows } = await db.pool.query(
      `SELECT campaign_id::int AS id, pricing_model, pricing_value::text, pacing_speed, pacing_value::int,
              targeting, delivery_start, delivery_end, notes, raw, tier, synced_at IS NOT NULL AS synced
         FROM ${S}.campaigns ORDER BY campaign_id`,
    );
    expect(rows[0]).toMatchObject({
      id: 1,
      pricing_model: 'CPM',
      pricing_value: '2.75',
      pacing_speed: 'spread',
      pacing_value: 10000,
      targeting: { devices: ['mobile'] },
      delivery_start: new Date('2025-09-12T08:00:00Z'),
      notes: 'tab\there, "quoted", back\\slash',
      tier: 3,
      synced: true,
    });
    expect(rows[0].raw).toEqual(set);
    expect(rows[1]).toMatchObject({
      id: 2,
      pricing_model: null,
      pricing_value: null,
      pacing_speed: null,
      pacing_value: null,
      targeting: null,
      delivery_start: null,
      delivery_end: null,
    });
    const zones = await db.pool.query(
      `SELECT campaign_id::int, zone_id::int FROM ${S}.campaign_zones ORDER BY 1, 2`,
    );
    expect(zones.rows).toEqual([
      { campaign_id: 1, zone_id: 11 },
      { campaign_id: 1, zone_id: 12 },
    ]);
  });

  it('soft-deletes entities no longer returned and revives them when they come back', async () => {
    const first = catalogue(
      [fullCampaign({ campaign_id: 1, zone_ids: [11] }), bareCampaign({ campaign_id: 2 })],
      [creative({ campaign_id: 1, creative_id: 10 }), creative({ campaign_id: 1, creative_id: 11 })],
    );
    await writeCatalogue(warehouseOf(db.pool, S), first);

    const second = catalogue(
      [fullCampaign({ campaign_id: 1, zone_ids: [13] })],
      [creative({ campaign_id: 1, creative_id: 10 })],
    );
    expect(await writeCatalogue(warehouseOf(db.pool, S), second)).toMatchObject({ deleted: 2, revived: 0 });
    const live = await db.pool.query(
      `SELECT 'c' || campaign_id AS id, deleted_at IS NOT NULL AS deleted FROM ${S}.campaigns
       UNION ALL SELECT 'k' || creative_id, deleted_at IS NOT NULL FROM ${S}.creatives ORDER BY 1`,
    );
    expect(live.rows).toEqual([
      { id: 'c1', deleted: false },
      { id: 'c2', deleted: true },
      { id: 'k10', deleted: false },
      { id: 'k11', deleted: true },
    ]);
    const zones = await db.pool.query(`SELECT zone_id::int FROM ${S}.campaign_zones WHERE campaign_id = 1`);
    expect(zones.rows).toEqual([{ zone_id: 13 }]);

    // A second identical sync deletes nothing more.
    expect(await writeCatalogue(warehouseOf(db.pool, S), second)).toMatchObject({ deleted: 0, revived: 0 });
    expect(await writeCatalogue(warehouseOf(db.pool, S), first)).toMatchObject({ deleted: 0, revived: 2 });
    const after = await db.pool.query(
      `SELECT count(*)::int AS n FROM ${S}.campaigns WHERE deleted_at IS NOT NULL`,
    );
    expect(after.rows[0].n).toBe(0);
  });

  it('writes nothing when any statement of the transaction fails', async () => {
    await writeCatalogue(warehouseOf(db.pool, S), catalogue([fullCampaign({ campaign_id: 1 })], []));
    const before = await db.pool.query(`SELECT campaign_id, name, deleted_at FROM ${S}.campaigns ORDER BY 1`);
    // A row forged past the mapper's range checks makes the creative upsert fail after the
    // campaign upsert ran: the rename must be rolled back with it.
    const good = catalogue([fullCampaign({ campaign_id: 1, name: 'renamed' })], []);
    const broken = {
      campaigns: good.campaigns,
      creatives: [{ ...creative({ campaign_id: 1 }), data_width: 1e12 } as never],
    };
    await expect(writeCatalogue(warehouseOf(db.pool, S), broken)).rejects.toThrow(/out of range/);
    const after = await db.pool.query(`SELECT campaign_id, name, deleted_at FROM ${S}.campaigns ORDER BY 1`);
    expect(after.rows).toEqual(before.rows);
  });
});
