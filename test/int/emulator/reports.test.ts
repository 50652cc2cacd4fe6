import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../../src/emulator/index.js';
import { leaves, sum } from '../../unit/emulator/report-helpers.js';
import { call, start, type ErrorBody } from './helpers.js';

interface Report {
  items: Record<string, unknown>;
  totals: Record<string, number>;
}

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await start({ seed: 21, cellsPerDay: 300, lateDataDays: 3 });
});
afterAll(() => emu.close());

const Q = 'date_from=2025-06-01&date_until=2025-06-03';

describe('emulator reports: parameters', () => {
  it('accepts dimensions repeated, bracketed, comma separated, or in a JSON body: same bytes', async () => {
    const repeated = await call(emu, 'GET', `/reports?${Q}&dimensions=day&dimensions=device`);
    expect(repeated.status).toBe(200);
    expect(repeated.headers['content-type']).toMatch(/^application\/json/);
    expect(Number(repeated.headers['content-length'])).toBe(Buffer.byteLength(repeated.text));
    const bracketed = await call(emu, 'GET', `/reports?${Q}&dimensions%5B%5D=day&dimensions%5B%5D=device`);
    const comma = await call(emu, 'GET', `/reports?${Q}&dimensions=day,device`);
    const inBody = await call(emu, 'GET', '/reports', {
      body: { date_from: '2025-06-01', date_until: '2025-06-03', dimensions: ['day', 'device'] },
    });
    expect(inBody.status).toBe(200);
    for (const other of [bracketed, comma, inBody]) expect(other.text).toBe(repeated.text);
    const report = repeated.json as Report;
    expect(Object.keys(report.items)).toEqual(['2025-06-01', '2025-06-02', '2025-06-03']);
    expect(Object.keys(report.items['2025-06-01'] as object)).toEqual(['desktop', 'mobile', 'tablet']);
  });

  it.each([
    ['dimensions=day', 'date_from'],
    ['date_from=2025-06-01&dimensions=day', 'date_until'],
    ['date_from=2025-6-1&date_until=2025-06-02&dimensions=day', 'date_from'],
    ['date_from=2025-02-29&date_until=2025-03-01&dimensions=day', 'date_from'],
    ['date_from=2025-06-01&date_until=2025-06-31&dimensions=day', 'date_until'],
    ['date_from=2025-06-02&date_until=2025-06-01&dimensions=day', 'date_until'],
    [`${Q}`, 'dimensions'],
    [`${Q}&dimensions=`, 'dimensions'],
    [`${Q}&dimensions=day,clicks`, 'dimensions'],
    [`${Q}&dimensions=day&dimensions=day`, 'dimensions'],
  ])('answers 400 for %s naming %s', async (query, field) => {
    const r = await call(emu, 'GET', `/reports?${query}`);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ status: 400, error: 'bad_request', field });
  });

  it('accepts a leap day and a range of exactly 366 days', async () => {
    expect(
      (await call(emu, 'GET', '/reports?date_from=2024-02-29&date_until=2024-02-29&dimensions=day')).status,
    ).toBe(200);
    expect(
      (await call(emu, 'GET', '/reports?date_from=2024-01-01&date_until=2024-12-31&dimensions=month')).status,
    ).toBe(200);
  });
});

describe('emulator reports: data', () => {
  it('agrees on totals across dimension sets and equals the sum of items, over HTTP', async () => {
    const sets = [
      ['day'],
      ['campaign_id', 'creative_id'],
      ['country', 'region', 'city'],
      ['weekday', 'hour', 'browser', 'device'],
    ];
    const reports = await Promise.all(
      sets.map(
        async (dims) => (await call(emu, 'GET', `/reports?${Q}&dimensions=${dims.join(',')}`)).json as Report,
      ),
    );
    reports.forEach((report, i) =>
      expect(sum(leaves(report.items, sets[i]?.length ?? 0))).toEqual(report.totals),
    );
    for (const report of reports) expect(report.totals).toEqual(reports[0]?.totals);
  });

  it('restates a recent day with larger numbers as the emulator clock moves, then holds it final', async () => {
    const totals = async () =>
      (
        (await call(emu, 'GET', '/reports?date_from=2025-06-10&date_until=2025-06-10&dimensions=day'))
          .json as Report
      ).totals;
    emu.setNow(new Date('2025-06-10T23:00:00Z'));
    const first = await totals();
    const control = await request(`${emu.origin}/_control/clock`, {
      method: 'PUT',
      body: JSON.stringify({ now: '2025-06-12T01:00:00Z' }),
    });
    expect(control.statusCode).toBe(204);
    await control.body.dump();
    const later = await totals();
    emu.setNow(new Date('2025-06-13T00:00:00Z'));
    const final = await totals();
    emu.setNow(new Date('2025-08-01T00:00:00Z'));
    expect(await totals()).toEqual(final);
    expect(first.ad_requests).toBeLessThan(later.ad_requests as number);
    expect(later.ad_requests).toBeLessThan(final.ad_requests as number);
    emu.setNow(new Date('2025-06-09T00:00:00Z'));
    const future = (
      await call(emu, 'GET', '/reports?date_from=2025-06-10&date_until=2025-06-10&dimensions=day')
    ).json as Report;
    expect(future).toEqual({
      items: {},
      totals: {
        ad_requests: 0,
        filled_impressions: 0,
        impressions: 0,
        measurable_impressions: 0,
        viewable_impressions: 0,
      },
    });
    emu.setNow(new Date('2025-06-15T12:00:00Z'));
  });

  it('rejects a bad clock with 400', async () => {
    const r = await request(`${emu.origin}/_control/clock`, {
      method: 'PUT',
      body: JSON.stringify({ now: 'soon' }),
    });
    expect(r.statusCode).toBe(400);
    expect(((await r.body.json()) as ErrorBody).field).toBe('now');
  });
});

describe('emulator reports: scale', () => {
  it('serves a one-day report of 200,000 leaves in a few seconds', async () => {
    const big = await start({ seed: 3, cellsPerDay: 200_000 });
    try {
      const dims = 'day,campaign_id,creative_id,zone_id,country,device';
      const started = performance.now();
      const r = await request(
        `${big.url}/reports?date_from=2025-05-01&date_until=2025-05-01&dimensions=${dims}`,
        {
          headers: { authorization: 'Bearer demo-key' },
        },
      );
      const text = await r.body.text();
      const ms = performance.now() - started;
      const report = JSON.parse(text) as Report;
      const all = leaves(report.items, 6);
      expect(all).toHaveLength(200_000);
      expect(sum(all)).toEqual(report.totals);
      // Measured ~0.5 s on 2 cores; the bound only catches an order-of-magnitude regression.
      expect(ms).toBeLessThan(8000);
    } finally {
      await big.close();
    }
  });
});
