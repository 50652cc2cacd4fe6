// A body that is not valid JSON is a failed load with its body kept, retryable, until the period's
// next load gets the same bytes again: then it is final.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportFormatError } from '../../../src/flatten/errors.js';
import { loadPulledPeriod } from '../../helpers/pipeline.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import { readArchivedBody } from '../../../src/pull/archive.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { createTables, loadsOf, openTestDatabase, pulled, reportJob } from './fixtures/reports.js';

const report = reportJob('mb_campaign', ['day', 'campaign_id']);
const leaf = (n: number) =>
  `{"ad_requests":${n},"filled_impressions":1,"impressions":1,"measurable_impressions":1,"viewable_impressions":1}`;
/** A body whose rows are fine but which ends one brace short: only the end shows it is cut. */
const cut = (day: string, n: number) => `{"items":{"${day}":{"7":${leaf(n)}}`;
const at = (minute: number) => new Date(Date.UTC(2026, 0, 10, 3, minute));
let db: TestDatabase;

beforeAll(async () => {
  db = await openTestDatabase();
  await createTables(db.pool, [report]);
});
afterAll(async () => {
  await db?.drop();
});

/** Loads `body` for `day`, returning the error it fails with. */
async function loadBroken(day: string, body: string, minute: number): Promise<ReportFormatError> {
  const error = await loadPulledPeriod(db.pool, TEST_SCHEMA, {
    ...pulled(report, { start: day, end: day }, [], at(minute)),
    body: Buffer.from(body),
  }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ReportFormatError);
  expect(error).toHaveProperty('name', 'MalformedBodyError');
  return error as ReportFormatError;
}

describe('a malformed body', () => {
  it('is retryable while each answer differs from the one before, final when one repeats', async () => {
    const a = cut('2026-03-01', 1);
    const b = cut('2026-03-01', 2);
    expect((await loadBroken('2026-03-01', a, 1)).retryable).toBe(true);
    expect((await loadBroken('2026-03-01', b, 2)).retryable).toBe(true);
    // A again, but not right after itself: still retryable.
    expect((await loadBroken('2026-03-01', a, 3)).retryable).toBe(true);
    const final = await loadBroken('2026-03-01', a, 4);
    expect(final.retryable).toBe(false);
    expect(final.message).toMatch(/came twice in a row/);
    const loads = await loadsOf(db.pool, report.name);
    expect(loads.map((l) => [l.status, l.raw_kept])).toEqual([
      ['failed', true],
      ['failed', true],
      ['failed', true],
      ['failed', true],
    ]);
    expect(loads.at(-1)?.error).toMatch(/^MalformedBodyError: .*came twice in a row/);
    expect(
      (
        await readArchivedBody(warehouseOf(db.pool, TEST_SCHEMA), loads.at(-1)!.load_id as number)
      )?.toString(),
    ).toBe(a);
  });

  it('is compared within its own period only', async () => {
    // The same bytes as the first period's last answer, in another period: a first answer there.
    expect((await loadBroken('2026-03-02', cut('2026-03-01', 1), 1)).retryable).toBe(true);
  });
});
