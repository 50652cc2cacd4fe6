import { describe, expect, it } from 'vitest';
import { apiMessageOf, excerptOf } from '../../../src/api/malformed.js';
import { apiHttpError, hintFor } from '../../../src/api/errors.js';
import { pageQuery, reportPath } from '../../../src/api/client.js';

const KEY = 'sk_live_0123456789';

describe('error bodies and excerpts', () => {
  it('finds the API message in the usual fields', () => {
    expect(apiMessageOf(Buffer.from('{"message":"bad date"}'), [])).toBe('bad date');
    expect(apiMessageOf(Buffer.from('{"error":{"message":"no such campaign"}}'), [])).toBe(
      'no such campaign',
    );
    expect(apiMessageOf(Buffer.from('{"errors":[{"message":"name required"}]}'), [])).toBe('name required');
    expect(apiMessageOf(Buffer.from('{"error":"forbidden"}'), [])).toBe('forbidden');
    expect(apiMessageOf(Buffer.from('<html>Bad gateway</html>'), [])).toBe('<html>Bad gateway</html>');
    expect(apiMessageOf(Buffer.alloc(0), [])).toBeUndefined();
  });

  it('redacts the key, escapes control characters and cuts excerpts short', () => {
    const text = `{"echo":"Bearer ${KEY}",\u0000"more":"${'x'.repeat(500)}"}`;
    const e = excerptOf(Buffer.from(text), [KEY]);
    expect(e).not.toContain(KEY);
    expect(e).toContain('[REDACTED]');
    expect(e).toContain('\\u0000');
    expect(e.length).toBeLessThanOrEqual(161);
    expect(apiMessageOf(Buffer.from(`{"message":"key ${KEY} is invalid"}`), [KEY])).toBe(
      'key [REDACTED] is invalid',
    );
  });

  it('redacts a key the server percent-encoded or \\u-escaped in its message, even cut short', () => {
    const key = `sk-live-${'0123456789abcdef'.repeat(2)}`;
    const pct = [...key].map((c) => (c === '-' ? '%2D' : c)).join('');
    expect(apiMessageOf(Buffer.from(JSON.stringify({ message: `key ${pct} is invalid` })), [key])).toBe(
      'key [REDACTED] is invalid',
    );
    const all = [...Buffer.from(key)].map((b) => `%${b.toString(16)}`).join('');
    const e = excerptOf(`${'x'.repeat(300)} ${all}`, [key]);
    expect(e).not.toMatch(/%[0-9a-f]{2}%/);
    const escaped = `{"message":"key ${[...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"}`;
    expect(excerptOf(Buffer.from(escaped), [key])).toBe('{"message":"key [REDACTED]"}');
  });

  it('leaves no part of a key that the cut before redaction split', () => {
    // Keys shrink to [REDACTED], pulling the one the cut split into the excerpt.
    const long = `sk_live_${'q'.repeat(32)}`;
    const e = excerptOf(Buffer.from(`${long} `.repeat(20)), [long]);
    expect(e).toMatch(/^(\[REDACTED\] )+\[REDACTED\]$/);
    expect(e).not.toContain(long.slice(0, 8));
  });

  it('builds messages that name method, path, status, attempts and the hint', () => {
    const e = apiHttpError({
      status: 401,
      apiMessage: 'invalid key',
      method: 'GET',
      path: '/v2/campaigns',
      attempts: 1,
      hint: hintFor(401, 'GET', '/v2/campaigns'),
      retryable: false,
    });
    expect(e.message).toBe(
      'GET /v2/campaigns: HTTP 401: invalid key (after 1 attempt); check ADOPS_API_KEY (or ADOPS_API_KEY_FILE) and that ADOPS_AUTH (bearer or x-api-key) is the header form the API expects',
    );
    expect(hintFor(403, 'DELETE', '/v2/campaigns/5?x=1')).toContain('DELETE on /v2/campaigns/5 ');
  });
});

describe('query strings', () => {
  const q = {
    dimensions: ['day', 'campaign_id'] as const,
    period: { start: '2026-01-01', end: '2026-01-02' },
  };
  it('encodes the report query in each supported style', () => {
    expect(reportPath(q)).toBe(
      '/reports?date_from=2026-01-01&date_until=2026-01-02&dimensions=day&dimensions=campaign_id',
    );
    expect(reportPath(q, 'brackets')).toBe(
      '/reports?date_from=2026-01-01&date_until=2026-01-02&dimensions%5B%5D=day&dimensions%5B%5D=campaign_id',
    );
    expect(reportPath(q, 'comma')).toBe(
      '/reports?date_from=2026-01-01&date_until=2026-01-02&dimensions=day%2Ccampaign_id',
    );
  });
  it('omits unset page parameters', () => {
    expect(pageQuery()).toBe('');
    expect(pageQuery({ limit: 10 })).toBe('?limit=10');
    expect(pageQuery({ limit: 10, offset: 20 })).toBe('?limit=10&offset=20');
  });
});
