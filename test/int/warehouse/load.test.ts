import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportFormatError } from '../../../src/flatten/errors.js';
import { LoadError } from '../../../src/pull/run.js';
import { loadPulledPeriod, recordFailedPull } from '../../helpers/pipeline.js';
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
  { name: 'rows by binary COPY', suffix: '_copy', options: { inlineMaxRows: 0 } },
  { name: 'rows by text COPY', suffix: '_text_copy', options: { inlineMaxRows: 0, copyFormat: 'text' } },
] as const;

describe.each(WRITE_PATHS)('$name:', (path) => {
  const S = TEST_SCHEMA;
  // Every load through the loader's ways of writing rows: inside the last statement (small
  // periods, the default) and COPY (big ones; forced here with inlineMaxRows 0), in binary (the
  // default) and in text (the fallback of ADOPS_COPY_FORMAT=text).
  const load: typeof loadPulledPeriod = (pool, schema, p, options = {}) =>
    loadPulledPeriod(pool, schema, p, { ...path.options, ...options });
  let db: TestDatabase;
  const campaign = reportJob(`wh_campaign${path.suffix}`, ['day', 'campaign_id']);
  const text = reportJob(`wh_text${path.suffix}`, ['day', 'landing_url', 'domain']);
  const day = (d: string) => ({ start: d, end: d });
  const at = (minute: number) => new Date(Date.UTC(2026, 0, 10, 3, minute));

  beforeAll(async () => {
    db = await openTestDatabase();
    await createTables(db.pool, [campaign, text]);
  });
  afterAll(async () => {
    await db?.drop();
  });

  describe('loading a period', () => {
    const period = day('2026-01-01');
    const first: Row[] = [
      [
        ['2026-01-01', '101'],
        [10, 9, 8, 7, 6],
      ],
      [
        ['2026-01-01', '102'],
        [5, 4, 3, 2, 1],
      ],
    ];
    const second: Row[] = [
      [
        ['2026-01-01', '101'],
        [11, 10, 9, 8, 7],
      ],
      [
        ['2026-01-01', '103'],
        [1, 1, 1, 1, 1],
      ],
    ];

    it('twice leaves exactly one copy of its rows, with the later values', async () => {
      const a = await load(db.pool, S, pulled(campaign, period, first, at(1)));
      const b = await load(db.pool, S, pulled(campaign, period, second, at(2)));
      expect([a.status, b.status]).toEqual(['loaded', 'loaded']);
      expect(b.rows).toBe(2);
      expect(await periodRows(db.pool, campaign, period)).toEqual(asText(second));
      const { rows } = await db.pool.query(
        `SELECT load_id::int AS id FROM ${S}.report_${campaign.name} WHERE period_start = $1`,
        [period.start],
      );
      expect(rows.every((r) => r.id === b.loadId)).toBe(true);
    });

    it('records restatement deltas against the previous load and replaces the totals', async () => {
      const loads = await loadsOf(db.pool, campaign.name);
      const last = loads.at(-1)!;
      expect(last.previous_load_id).toBe(loads.at(-2)!.load_id);
      // totals went from 15 to 12 ad_requests, 11 to 9 impressions
      expect((last.restatement as Record<string, unknown>).ad_requests).toEqual({ previous: 15, delta: -3 });
      expect((last.restatement as Record<string, unknown>).impressions).toEqual({ previous: 11, delta: -1 });
      expect(loads.at(-2)!.restatement).toBeNull();
      const { rows } = await db.pool.query(
        `SELECT ad_requests::int, load_id::int FROM ${S}.report_totals WHERE report = $1 AND period_start = $2`,
        [campaign.name, period.start],
      );
      expect(rows).toEqual([{ ad_requests: 12, load_id: last.load_id }]);
    });

    it('a stale response arriving after a newer one is recorded as superseded and changes nothing', async () => {
      const before = await periodRows(db.pool, campaign, period);
      const stale = await load(db.pool, S, pulled(campaign, period, first, at(0)));
      expect(stale).toMatchObject({ status: 'superseded', rows: 0 });
      expect(await periodRows(db.pool, campaign, period)).toEqual(before);
      const loads = await loadsOf(db.pool, campaign.name);
      expect(loads.at(-1)).toMatchObject({ status: 'superseded', rows: null, raw_kept: true });
      const { rows } = await db.pool.query(
        `SELECT ad_requests::int FROM ${S}.report_totals WHERE report = $1`,
        [campaign.name],
      );
      expect(rows).toEqual([{ ad_requests: 12 }]);
    });

    it('re-pulled empty has no rows afterwards, and the load records rows = 0', async () => {
      const outcome = await load(db.pool, S, pulled(campaign, period, [], at(3)));
      expect(outcome).toMatchObject({ status: 'loaded', rows: 0, reconciled: true });
      expect(await periodRows(db.pool, campaign, period)).toEqual([]);
      expect((await loadsOf(db.pool, campaign.name)).at(-1)).toMatchObject({ status: 'loaded', rows: 0 });
    });

    it('leaves other periods alone', async () => {
      const other = day('2026-01-02');
      const rows: Row[] = [
        [
          ['2026-01-02', '101'],
          [1, 2, 3, 4, 5],
        ],
      ];
      await load(db.pool, S, pulled(campaign, other, rows, at(1)));
      await load(db.pool, S, pulled(campaign, period, first, at(4)));
      expect(await periodRows(db.pool, campaign, other)).toEqual(asText(rows));
      expect(await periodRows(db.pool, campaign, period)).toEqual(asText(first));
    });
  });

  describe('concurrent loads of one period', () => {
    it('leave exactly one copy, with the values of the most recently fetched response, whoever commits last', async () => {
      const period = day('2026-02-01');
      const older: Row[] = [
        [
          ['2026-02-01', '1'],
          [1, 1, 1, 1, 1],
        ],
        [
          ['2026-02-01', '2'],
          [2, 2, 2, 2, 2],
        ],
      ];
      const newer: Row[] = [
        [
          ['2026-02-01', '1'],
          [7, 7, 7, 7, 7],
        ],
        [
          ['2026-02-01', '3'],
          [3, 3, 3, 3, 3],
        ],
      ];
      for (let round = 0; round < 4; round++) {
        // Hold the period's lock so both loads queue behind it, then let them race for it.
        const gate = await db.pool.connect();
        await gate.query('BEGIN');
        await gate.query('SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))', [
          `${S}.${campaign.name}`,
          `${period.start}/${period.end}`,
        ]);
        const base = 100 * round;
        const loads = [
          load(db.pool, S, pulled(campaign, period, newer, at(base + 50))),
          load(db.pool, S, pulled(campaign, period, older, at(base + 10))),
        ];
        await waitForLockWaiters(2);
        await gate.query('COMMIT');
        gate.release();
        const outcomes = await Promise.all(loads);
        expect(outcomes[0]!.status).toBe('loaded');
        expect(await periodRows(db.pool, campaign, period)).toEqual(asText(newer));
      }
    });
  });

  describe('the period lock', () => {
    it('does not make a load of another period wait', async () => {
      const gate = await db.pool.connect();
      try {
        await gate.query('BEGIN');
        await gate.query('SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))', [
          `${S}.${campaign.name}`,
          '2026-02-10/2026-02-10',
        ]);
        const other = day('2026-02-11');
        const outcome = await load(
          db.pool,
          S,
          pulled(
            campaign,
            other,
            [
              [
                ['2026-02-11', '1'],
                [1, 1, 1, 1, 1],
              ],
            ],
            at(1),
          ),
        );
        expect(outcome.status).toBe('loaded');
      } finally {
        await gate.query('COMMIT');
        gate.release();
      }
    });
  });

  async function waitForLockWaiters(n: number): Promise<void> {
    for (;;) {
      const { rows } = await db.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      if ((rows[0]?.n ?? 0) >= n) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  describe('values', () => {
    it('round-trip exactly: tabs, newlines, backslashes, quotes, commas, braces, NULL, unicode and very long strings', async () => {
      const nasty = [
        'tab\there',
        'line\nbreak\r\nand CR\r',
        'back\\slash \\N \\. \\t literal',
        `"double" 'single' \`tick\``,
        'comma,separated;semi',
        'unicode: é ß 漢字 🎉 \u200b\u00a0 ﷽',
        'ctrl: \b\f\v\u0001\u001f\u007f',
        'x'.repeat(200_000) + '\t\n\\' + 'y'.repeat(1000),
        ' leading and trailing spaces ',
        '',
        // What an array literal treats specially (the inline rows travel as array literals).
        'NULL',
        'null',
        'nUlL',
        'NULLs are fine',
        'bare_word-1.5',
        '{braces, "in" it}',
      ];
      const period = day('2026-03-01');
      const rows: Row[] = nasty.map((v, i) => [
        ['2026-03-01', v, `d${i}\\${v.slice(0, 20)}`],
        [i, i, i, i, i],
      ]);
      const outcome = await load(db.pool, S, pulled(text, period, rows, at(1)));
      expect(outcome.rows).toBe(nasty.length);
      const stored = await periodRows(db.pool, text, period);
      expect(stored).toEqual(asText(rows));
    });

    it('counters above 2^31, up to 2^53 - 1, are stored exactly', async () => {
      const period = day('2026-03-02');
      const big = [2 ** 31, 2 ** 32 + 1, 2 ** 53 - 1, 3_000_000_000, 2 ** 31 - 1];
      const rows: Row[] = [[['2026-03-02', '9223372036854775807'], big]];
      await load(db.pool, S, pulled(campaign, period, rows, at(1)));
      expect(await periodRows(db.pool, campaign, period)).toEqual([
        [
          '2026-03-02',
          '9223372036854775807',
          '2147483648',
          '4294967297',
          '9007199254740991',
          '3000000000',
          '2147483647',
        ],
      ]);
      const { rows: totals } = await db.pool.query(
        `SELECT impressions::text FROM ${S}.report_totals WHERE report = $1 AND period_start = $2`,
        [campaign.name, period.start],
      );
      expect(totals).toEqual([{ impressions: '9007199254740991' }]);
    });
  });

  describe('failures', () => {
    const period = day('2026-04-01');
    const good: Row[] = [
      [
        ['2026-04-01', '5'],
        [5, 5, 5, 5, 5],
      ],
    ];

    beforeAll(async () => {
      await load(db.pool, S, pulled(campaign, period, good, at(1)));
    });

    it('a failed pull is recorded without touching the period', async () => {
      const loadId = await recordFailedPull(db.pool, S, {
        report: campaign,
        period,
        error: new Error('HTTP 500 after 5 attempts'),
        attempts: 5,
      });
      expect((await loadsOf(db.pool, campaign.name)).at(-1)).toMatchObject({
        load_id: loadId,
        status: 'failed',
        error: 'Error: HTTP 500 after 5 attempts',
        raw_kept: false,
      });
      expect(await periodRows(db.pool, campaign, period)).toEqual(asText(good));
    });

    it("a row repeated far apart in a streamed body fails as the body's fault and keeps the old rows", async () => {
      // An array of rows longer than one streamed batch (20,000), the first row repeated last:
      // the scanner has let the first go by then, so the table's unique key must catch it.
      const row = (id: number) => ({
        day: '2026-04-01',
        campaign_id: id,
        ad_requests: 1,
        filled_impressions: 1,
        impressions: 1,
        measurable_impressions: 1,
        viewable_impressions: 1,
      });
      const items = [...Array.from({ length: 25_000 }, (_, i) => row(i + 1)), row(1)];
      const one = {
        ad_requests: 25_001,
        filled_impressions: 25_001,
        impressions: 25_001,
        measurable_impressions: 25_001,
        viewable_impressions: 25_001,
      };
      const body = Buffer.from(JSON.stringify({ items, totals: one }));
      const attempt = load(db.pool, S, {
        ...pulled(campaign, period, [], at(8)),
        body,
        bytes: body.length,
      });
      await expect(attempt).rejects.toBeInstanceOf(ReportFormatError);
      await expect(attempt).rejects.toThrow(/two rows have the same dimension values/);
      expect((await loadsOf(db.pool, campaign.name)).at(-1)).toMatchObject({
        status: 'failed',
        raw_kept: true,
      });
      expect(await periodRows(db.pool, campaign, period)).toEqual(asText(good));
    });

    it('a body that does not parse is recorded as failed with its raw body kept, and the parse error rethrown', async () => {
      const body = Buffer.from('{"items": {"2026-04-01": ');
      const attempt = load(db.pool, S, {
        ...pulled(campaign, period, [], at(9)),
        body,
        bytes: body.length,
      });
      await expect(attempt).rejects.toBeInstanceOf(ReportFormatError);
      expect((await loadsOf(db.pool, campaign.name)).at(-1)).toMatchObject({
        status: 'failed',
        raw_kept: true,
      });
      expect(await periodRows(db.pool, campaign, period)).toEqual(asText(good));
    });

    it('a value the column cannot hold fails the load naming report, period and dimension, and keeps the old rows', async () => {
      const bad = [{ dims: ['2026-04-01', '99999999999999999999'], counters: [1, 1, 1, 1, 1] }];
      const attempt = load(db.pool, S, pulled(campaign, period, [], at(10)), {
        parse: () => ({
          rows: bad,
          totals: {
            ad_requests: 1,
            filled_impressions: 1,
            impressions: 1,
            measurable_impressions: 1,
            viewable_impressions: 1,
          },
          leaves: 1,
          reconciliation: { ok: true, differences: [] },
        }),
      });
      await expect(attempt).rejects.toBeInstanceOf(LoadError);
      await expect(attempt).rejects.toThrow(
        new RegExp(`${campaign.name} 2026-04-01\\.\\.2026-04-01 .*campaign_id value 99999999999999999999`),
      );
      const last = (await loadsOf(db.pool, campaign.name)).at(-1)!;
      expect(last).toMatchObject({ status: 'failed', raw_kept: true });
      expect(await periodRows(db.pool, campaign, period)).toEqual(asText(good));
    });

    it('a report whose table is missing fails with a hint to run adops migrate, recorded as failed', async () => {
      const orphan = reportJob(`wh_no_table${path.suffix}`, ['day']);
      const attempt = load(db.pool, S, pulled(orphan, period, [[['2026-04-01'], [1, 1, 1, 1, 1]]], at(1)));
      await expect(attempt).rejects.toThrow(/run `adops migrate`/);
      expect((await loadsOf(db.pool, orphan.name)).map((l) => l.status)).toEqual(['failed']);
    });

    it('records a mismatch but loads by default, and refuses to load under strictReconcile', async () => {
      const p = day('2026-04-02');
      const rows: Row[] = [
        [
          ['2026-04-02', '5'],
          [5, 5, 5, 5, 5],
        ],
      ];
      const body = reportBody(rows, [6, 5, 5, 5, 5]);
      const loose = await load(db.pool, S, { ...pulled(campaign, p, rows, at(1)), body });
      expect(loose).toMatchObject({
        status: 'loaded',
        reconciled: false,
        mismatch: [{ counter: 'ad_requests', items: 5, totals: 6 }],
      });
      const strict = load(
        db.pool,
        S,
        { ...pulled(campaign, p, [], at(2)), body: reportBody([], [1, 0, 0, 0, 0]) },
        {
          strictReconcile: true,
        },
      );
      await expect(strict).rejects.toThrow(/do not add up/);
      expect(await periodRows(db.pool, campaign, p)).toEqual(asText(rows));
    });
  });

  describe('the pool', () => {
    it('is left with no client checked out after loads and failures', () => {
      expect(db.pool.totalCount - db.pool.idleCount).toBe(0);
    });
  });
});
