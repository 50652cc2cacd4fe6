import { describe, expect, it } from 'vitest';
import {
  authHeaders,
  isRateLimitHeader,
  firstCampaignId,
  formPeriod,
  reportProbe,
  yesterday,
} from '../../../src/doctor/probes.js';
import { http } from './fixtures.js';

const period = { start: '2026-03-01', end: '2026-03-07' };
const dims = ['day', 'campaign_id'] as const;

describe('doctor probe requests', () => {
  it('sends the dimensions in each parameter form', () => {
    const query = (form: 'repeat' | 'brackets' | 'comma') =>
      decodeURIComponent(reportProbe(form, dims, period, {}).path);
    expect(query('repeat')).toBe(
      '/reports?date_from=2026-03-01&date_until=2026-03-07&dimensions=day&dimensions=campaign_id',
    );
    expect(query('brackets')).toBe(
      '/reports?date_from=2026-03-01&date_until=2026-03-07&dimensions[]=day&dimensions[]=campaign_id',
    );
    expect(query('comma')).toBe(
      '/reports?date_from=2026-03-01&date_until=2026-03-07&dimensions=day,campaign_id',
    );
  });

  it('sends json-body as a JSON body on the GET with no query string', () => {
    const probe = reportProbe('json-body', dims, period, { 'x-api-key': 'k' });
    expect(probe.path).toBe('/reports');
    expect(JSON.parse(probe.body!)).toEqual({
      date_from: '2026-03-01',
      date_until: '2026-03-07',
      dimensions: ['day', 'campaign_id'],
    });
    expect(probe.headers).toEqual({ 'x-api-key': 'k' });
  });

  it('puts the key in the header of each auth form', () => {
    expect(authHeaders('bearer', 'abc')).toEqual({ authorization: 'Bearer abc' });
    expect(authHeaders('x-api-key', 'abc')).toEqual({ 'x-api-key': 'abc' });
  });

  it('asks for yesterday alone, and for the week up to yesterday, in UTC', () => {
    const now = new Date('2026-03-08T00:30:00Z');
    expect(yesterday(now)).toEqual({ start: '2026-03-07', end: '2026-03-07' });
    expect(formPeriod(now)).toEqual({ start: '2026-03-01', end: '2026-03-07' });
  });

  it('reads the first campaign id as a number or a string of digits, else nothing', () => {
    expect(firstCampaignId(http(200, { items: [{ campaign_id: 862599431 }] }))).toBe(862599431);
    expect(firstCampaignId(http(200, { items: [{ campaign_id: '862599431' }] }))).toBe(862599431);
    expect(firstCampaignId(http(200, { items: [] }))).toBeUndefined();
    expect(firstCampaignId(http(200, 'not json'))).toBeUndefined();
    expect(firstCampaignId(http(403, { items: [{ campaign_id: 1 }] }))).toBeUndefined();
  });

  it('knows the rate-limit headers by name', () => {
    for (const name of [
      'X-RateLimit-Limit',
      'x-ratelimit-reset',
      'RateLimit-Policy',
      'RateLimit',
      'Retry-After',
    ])
      expect(isRateLimitHeader(name)).toBe(true);
    for (const name of ['date', 'x-request-id', 'x-ratelimiter']) expect(isRateLimitHeader(name)).toBe(false);
  });
});
