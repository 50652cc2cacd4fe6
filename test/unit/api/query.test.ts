import { describe, expect, it } from 'vitest';
import { DIMENSIONS_ENCODINGS, reportRequest } from '../../../src/api/client.js';

const Q = { dimensions: ['day', 'campaign_id'] as const, period: { start: '2026-01-01', end: '2026-01-07' } };

describe('reportRequest', () => {
  it('sends the dimensions in each query-string form the spec leaves open', () => {
    const base = '/reports?date_from=2026-01-01&date_until=2026-01-07';
    expect(reportRequest(Q, 'repeat')).toEqual({
      path: `${base}&dimensions=day&dimensions=campaign_id`,
      body: undefined,
    });
    expect(reportRequest(Q, 'brackets').path).toBe(
      `${base}&dimensions%5B%5D=day&dimensions%5B%5D=campaign_id`,
    );
    expect(reportRequest(Q, 'comma').path).toBe(`${base}&dimensions=day%2Ccampaign_id`);
    expect(reportRequest(Q).path).toBe(reportRequest(Q, 'repeat').path);
  });

  it('sends a JSON body and no query string in the json-body form', () => {
    expect(reportRequest(Q, 'json-body')).toEqual({
      path: '/reports',
      body: { date_from: '2026-01-01', date_until: '2026-01-07', dimensions: ['day', 'campaign_id'] },
    });
  });

  it('lists every form once', () => {
    expect(new Set(DIMENSIONS_ENCODINGS)).toEqual(new Set(['repeat', 'brackets', 'comma', 'json-body']));
  });
});
