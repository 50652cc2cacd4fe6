// Every reading of the spec a server may choose for its report bodies, through a real worker and
// load: values as strings, keys sorted (totals first), flat rows instead of nesting, totals missing
// or sent as []. Each loads the same rows as the faithful server's answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmulatorQuirks } from '../../../src/emulator/index.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { createHarness, lastDays, snapshot, type Harness } from '../../helpers/pipeline.js';

let h: Harness;
let faithful: Record<string, unknown[]>;
const { to } = lastDays(1);

/** Pulls daily_campaign for yesterday through the worker; returns that load's record. */
async function pull() {
  const reports = h.jobs.reports.filter((r) => r.name === 'daily_campaign');
  const before = await loadCount();
  const { pulls } = await enqueueBackfill(h.queues.pulls, reports, to, to);
  const result = await waitForPulls(h.queues.pulls, pulls, { pollMs: 50 });
  expect(result.failed).toEqual([]);
  // A new load each time: a re-pull swallowed by the queue would test nothing.
  expect(await loadCount()).toBe(before + 1);
  const { rows } = await h.db.pool.query<{
    rows: number;
    reconciled: boolean;
    unreconciled_reason: string | null;
  }>(
    `SELECT rows, reconciled, unreconciled_reason FROM "${TEST_SCHEMA}".report_loads
      WHERE report = 'daily_campaign' ORDER BY load_id DESC LIMIT 1`,
  );
  return rows[0];
}

async function loadCount(): Promise<number> {
  const { rows } = await h.db.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM "${TEST_SCHEMA}".report_loads WHERE report = 'daily_campaign'`,
  );
  return Number(rows[0]?.n);
}

/** The report table's rows, without load ids. */
async function tableRows(): Promise<unknown[]> {
  const jobs = { ...h.jobs, reports: h.jobs.reports.filter((r) => r.name === 'daily_campaign') };
  return (await snapshot(h.db.pool, jobs))['report_daily_campaign'] ?? [];
}

beforeAll(async () => {
  h = await createHarness();
  await h.worker();
  expect(await pull()).toMatchObject({ reconciled: true });
  faithful = await snapshot(h.db.pool, {
    ...h.jobs,
    reports: h.jobs.reports.filter((r) => r.name === 'daily_campaign'),
  });
  expect(faithful['report_daily_campaign']?.length).toBeGreaterThan(5);
});
afterAll(async () => {
  await h?.close();
});

describe('a report body in another reading of the spec loads the same rows', () => {
  const readings: Array<[string, EmulatorQuirks]> = [
    ['counters and ids as strings', { stringValues: true }],
    ['keys sorted, totals before items', { sortKeys: true, stringValues: true }],
    ['flat rows instead of nesting', { reportShape: 'rows', stringValues: true, sortKeys: true }],
  ];
  for (const [what, quirks] of readings) {
    it(`${what}, reconciled`, async () => {
      h.emulator.setQuirks(quirks);
      try {
        expect(await pull()).toMatchObject({ reconciled: true, unreconciled_reason: null });
      } finally {
        h.emulator.setQuirks({});
      }
      expect(
        await snapshot(h.db.pool, {
          ...h.jobs,
          reports: h.jobs.reports.filter((r) => r.name === 'daily_campaign'),
        }),
      ).toEqual(faithful);
    });
  }

  for (const totals of ['missing', 'empty-array'] as const) {
    it(`totals ${totals}: unreconciled for "no totals", its totals NULL`, async () => {
      h.emulator.setQuirks({ totals, stringValues: true });
      try {
        expect(await pull()).toMatchObject({ reconciled: false, unreconciled_reason: 'no totals' });
      } finally {
        h.emulator.setQuirks({});
      }
      expect(await tableRows()).toEqual(faithful['report_daily_campaign']);
      const { rows } = await h.db.pool.query(
        `SELECT impressions FROM "${TEST_SCHEMA}".report_totals WHERE report = 'daily_campaign' AND period_start = $1`,
        [to],
      );
      expect(rows).toEqual([{ impressions: null }]);
    });
  }
});
