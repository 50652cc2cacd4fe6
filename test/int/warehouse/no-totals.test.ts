// A report body without totals (none, [] or {}) or with only some counters: its rows load, the
// load says why it is unreconciled, report_totals keeps NULLs, and fencing and restatement still
// find the period's load. Through both of the loader's ways of writing rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportFormatError } from '../../../src/flatten/errors.js';
import { COUNTERS } from '../../../src/platform/config/dimensions.js';
import { loadPulledPeriod } from '../../helpers/pipeline.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import {
  asText,
  createTables,
  loadsOf,
  openTestDatabase,
  periodRows,
  pulled,
  reportBody,
  reportJob,
  type Row,
} from './fixtures/reports.js';

const WRITE_PATHS = [
  { name: 'rows inside the last statement', suffix: '', options: {} },
  { name: 'rows by COPY', suffix: '_copy', options: { inlineMaxRows: 0 } },
] as const;

/** The report body of `rows` with its totals replaced by `totals` JSON text (undefined: no key). */
function withTotals(rows: readonly Row[], totals: string | undefined): Buffer {
  const doc = JSON.parse(reportBody(rows).toString()) as { items: unknown };
  const items = JSON.stringify(doc.items);
  return Buffer.from(totals === undefined ? `{"items":${items}}` : `{"items":${items},"totals":${totals}}`);
}

describe.each(WRITE_PATHS)('$name:', (path) => {
  const S = TEST_SCHEMA;
  const load: typeof loadPulledPeriod = (pool, schema, p, options = {}) =>
    loadPulledPeriod(pool, schema, p, { ...path.options, ...options });
  let db: TestDatabase;
  const report = reportJob(`nt_campaign${path.suffix}`, ['day', 'campaign_id']);
  const day = (d: string) => ({ start: d, end: d });
  const at = (minute: number) => new Date(Date.UTC(2026, 0, 10, 3, minute));
  const rows = (d: string, n: number): Row[] => [
    [
      [d, '101'],
      [n, n, n, n, n],
    ],
    [
      [d, '102'],
      [1, 1, 1, 1, 1],
    ],
  ];

  /** The period's report_totals row: counters as numbers or null, and its load. */
  async function totalsOf(d: string) {
    const { rows: found } = await db.pool.query<Record<string, string | null>>(
      `SELECT ${COUNTERS.join(', ')}, load_id::text FROM "${S}".report_totals WHERE report = $1 AND period_start = $2`,
      [report.name, d],
    );
    return found.map((r) => ({
      ...Object.fromEntries(COUNTERS.map((c) => [c, r[c] === null ? null : Number(r[c])])),
      load_id: Number(r.load_id),
    }));
  }

  /** The unreconciled_reason of a load. */
  async function reasonOf(loadId: number): Promise<string | null> {
    const { rows: found } = await db.pool.query<{ r: string | null }>(
      `SELECT unreconciled_reason AS r FROM "${S}".report_loads WHERE load_id = $1`,
      [loadId],
    );
    return found[0]?.r ?? null;
  }

  beforeAll(async () => {
    db = await openTestDatabase();
    await createTables(db.pool, [report]);
  });
  afterAll(async () => {
    await db?.drop();
  });

  for (const [what, totals] of [
    ['no totals key', undefined],
    ['"totals": []', '[]'],
    ['"totals": {}', '{}'],
  ] as const) {
    it(`loads the rows of a body with ${what}, unreconciled for "no totals", with NULL totals`, async () => {
      const d =
        what === 'no totals key' ? '2026-02-01' : what === '"totals": []' ? '2026-02-02' : '2026-02-03';
      const r = rows(d, 5);
      const outcome = await load(db.pool, S, {
        ...pulled(report, day(d), r, at(1)),
        body: withTotals(r, totals),
      });
      expect(outcome).toMatchObject({
        status: 'loaded',
        rows: 2,
        reconciled: false,
        unreconciledReason: 'no totals',
        mismatch: null,
      });
      expect(await periodRows(db.pool, report, day(d))).toEqual(asText(r));
      expect(await reasonOf(outcome.loadId)).toBe('no totals');
      expect(await totalsOf(d)).toEqual([
        {
          ad_requests: null,
          filled_impressions: null,
          impressions: null,
          measurable_impressions: null,
          viewable_impressions: null,
          load_id: outcome.loadId,
        },
      ]);
    });
  }

  it('fences a period loaded without totals: an older response is superseded', async () => {
    const d = '2026-02-01';
    const before = await periodRows(db.pool, report, day(d));
    const stale = await load(db.pool, S, pulled(report, day(d), rows(d, 9), at(0)));
    expect(stale).toMatchObject({ status: 'superseded', rows: 0 });
    expect(await periodRows(db.pool, report, day(d))).toEqual(before);
  });

  it('restates from a load without totals (no change measurable), then between full totals', async () => {
    const d = '2026-02-01';
    const withTotals2 = await load(db.pool, S, pulled(report, day(d), rows(d, 7), at(2)));
    expect(withTotals2).toMatchObject({ status: 'loaded', reconciled: true, unreconciledReason: null });
    const third = await load(db.pool, S, pulled(report, day(d), rows(d, 10), at(3)));
    const loads = (await loadsOf(db.pool, report.name)).filter((l) => l.period_start === d);
    const [, , second, last] = loads;
    expect(second?.restatement).toMatchObject({ impressions: { previous: null, delta: null } });
    expect(last?.restatement).toMatchObject({ impressions: { previous: 8, delta: 3 } });
    expect(await totalsOf(d)).toEqual([
      {
        ad_requests: 11,
        filled_impressions: 11,
        impressions: 11,
        measurable_impressions: 11,
        viewable_impressions: 11,
        load_id: third.loadId,
      },
    ]);
  });

  it('keeps NULL for counters that partial totals leave out, and checks the rest', async () => {
    const d = '2026-02-04';
    const r = rows(d, 5);
    const outcome = await load(db.pool, S, {
      ...pulled(report, day(d), r, at(1)),
      body: withTotals(r, '{"ad_requests":6,"impressions":7}'),
    });
    expect(outcome).toMatchObject({
      reconciled: false,
      unreconciledReason: 'partial totals',
      mismatch: [{ counter: 'impressions', items: 6, totals: 7 }],
    });
    expect(await totalsOf(d)).toEqual([
      {
        ad_requests: 6,
        filled_impressions: null,
        impressions: 7,
        measurable_impressions: null,
        viewable_impressions: null,
        load_id: outcome.loadId,
      },
    ]);
  });

  it('refuses a body without totals under strictReconcile, leaving the loaded rows alone', async () => {
    const d = '2026-02-03';
    const before = await periodRows(db.pool, report, day(d));
    const strict = load(
      db.pool,
      S,
      { ...pulled(report, day(d), rows(d, 2), at(9)), body: withTotals(rows(d, 2), '[]') },
      { strictReconcile: true },
    );
    await expect(strict).rejects.toBeInstanceOf(ReportFormatError);
    await expect(strict).rejects.toMatchObject({ name: 'ReconciliationError', problem: 'no totals' });
    expect(await periodRows(db.pool, report, day(d))).toEqual(before);
    expect((await loadsOf(db.pool, report.name)).at(-1)).toMatchObject({ status: 'failed', raw_kept: true });
  });
});
