// The freshness watch's memory in the warehouse (sql/002_shared_state.sql), on either queue
// backend: the state swap that tells each transition once, and the disagreements already announced.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transition } from '../../../src/worker/webhook-worker.js';
import { warehouseOf, type Warehouse } from '../../../src/platform/pg/handle.js';
import { claimAnnouncement, swapFreshnessState, type Announced } from '../../../src/webhooks/events.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';

let db: TestDatabase;
let wh: Warehouse;
beforeAll(async () => {
  db = await createTestDatabase();
  wh = warehouseOf(db.pool, TEST_SCHEMA);
});
afterAll(async () => {
  await db.drop();
});

describe('freshness state', () => {
  it('returns the state it replaced: null when first seen, the same state when unchanged', async () => {
    expect(await swapFreshnessState(wh, 'default', 'daily', 'late')).toBeNull();
    expect(await swapFreshnessState(wh, 'default', 'daily', 'late')).toBe('late');
    expect(await swapFreshnessState(wh, 'default', 'daily', 'fresh')).toBe('late');
    expect(await swapFreshnessState(wh, 'default', 'daily', 'fresh')).toBe('fresh');
    expect(await swapFreshnessState(wh, 'default', 'daily', 'late')).toBe('fresh');
    // Each account's report has a state of its own.
    expect(await swapFreshnessState(wh, 'emea', 'daily', 'fresh')).toBeNull();
  });

  it('tells each transition to one of several evaluators swapping at once', async () => {
    const swapAll = (state: 'late' | 'fresh') =>
      Promise.all(
        Array.from({ length: 6 }, async () =>
          transition(await swapFreshnessState(wh, 'default', 'race', state), state),
        ),
      );
    expect((await swapAll('late')).filter((t) => t !== undefined)).toEqual(['late']);
    expect((await swapAll('late')).filter((t) => t !== undefined)).toEqual([]);
    expect((await swapAll('fresh')).filter((t) => t !== undefined)).toEqual(['fresh']);
  });
});

describe('announced disagreements', () => {
  const key: Announced = ['default', '2026-01-01', '2026-01-01', 'daily_zone', 'daily_campaign', '1,2/1,3'];

  it('announces a disagreement once, among evaluators at once too; changed sums are news again', async () => {
    const claims = await Promise.all(Array.from({ length: 4 }, () => claimAnnouncement(wh, key)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await claimAnnouncement(wh, key)).toBe(false);
    expect(
      await claimAnnouncement(wh, [
        'default',
        '2026-01-01',
        '2026-01-01',
        'daily_zone',
        'daily_campaign',
        '1,2/1,4',
      ]),
    ).toBe(true);
  });

  it('announces it again once 400 days passed since it was', async () => {
    const old: Announced = ['default', '2025-01-01', '2025-01-01', 'a', 'b', '1/2'];
    expect(await claimAnnouncement(wh, old)).toBe(true);
    await db.pool.query(
      `UPDATE ${TEST_SCHEMA}.announced_disagreements SET announced_at = now() - interval '401 days' WHERE report = 'a'`,
    );
    expect(await claimAnnouncement(wh, old)).toBe(true);
    expect(await claimAnnouncement(wh, old)).toBe(false);
  });
});
