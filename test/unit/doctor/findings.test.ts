import { describe, expect, it } from 'vitest';
import { decide } from '../../../src/doctor/verdict.js';
import { renderJson, renderText } from '../../../src/doctor/render.js';
import type { Observations } from '../../../src/doctor/types.js';
import { dayReport, gzipped, http, NOW, observations, row } from './fixtures.js';

describe('doctor verdict: gzip, clock and rate limits', () => {
  it('sets gzip when the server compresses and the body decompresses', () => {
    const v = decide(observations({ gzip: gzipped(dayReport()) }), NOW);
    expect(v.settings?.ADOPS_HTTP_COMPRESSION).toBe('gzip');
    expect(row(v.rows, 'gzip')?.status).toBe('ok');
  });

  it('sets none when a body labelled gzip does not decompress', () => {
    const v = decide(observations({ gzip: http(200, 'not gzip', { contentEncoding: 'gzip' }) }), NOW);
    expect(v.settings?.ADOPS_HTTP_COMPRESSION).toBe('none');
    expect(row(v.rows, 'gzip')?.status).toBe('warn');
  });

  it('measures the clock skew and warns above a minute', () => {
    expect(decide(observations(), NOW).facts.clockSkewSeconds).toBe(0);
    const ahead = decide(
      observations({
        clock: {
          serverDate: 'Sun, 01 Mar 2026 13:00:00 GMT',
          localMs: Date.parse('2026-03-01T12:00:00.400Z'),
        },
      }),
      NOW,
    );
    expect(ahead.facts.clockSkewSeconds).toBe(3600);
    expect(row(ahead.rows, 'clock')).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('3600 s ahead of ours'),
    });
    expect(ahead.ok).toBe(true);
  });

  it('lists the rate-limit headers seen and warns when 429s were waited out', () => {
    const headers = { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '97' };
    const v = decide(observations({ rateLimitHeaders: headers }), NOW);
    expect(row(v.rows, 'rate limits')).toEqual({
      check: 'rate limits',
      status: 'info',
      detail: 'x-ratelimit-limit: 100, x-ratelimit-remaining: 97',
    });
    expect(row(decide(observations({ throttled: 2 }), NOW).rows, 'rate limits')?.status).toBe('warn');
  });
});

describe('doctor output', () => {
  const KEY = 'canary-key-4f1d9a';
  const leaky = (): Observations => {
    const o = observations();
    const echo = http(401, {}, { apiMessage: `bad key ${KEY}` });
    return {
      ...o,
      auth: { bearer: echo, 'x-api-key': echo },
      scopes: undefined,
      forms: {},
      gzip: undefined,
      clock: undefined,
    };
  };

  it('prints the settings as exact NAME=value lines after "Set these:"', () => {
    const o = observations();
    const text = renderText(o, decide(o, NOW), [KEY]);
    expect(text).toContain(
      '\nSet these:\nADOPS_AUTH=bearer\nADOPS_REPORT_PARAMS=repeat\nADOPS_HTTP_COMPRESSION=none\n',
    );
  });

  it('never prints the key, even when the server echoed it into a message', () => {
    const o = leaky();
    const v = decide(o, NOW);
    const text = renderText(o, v, [KEY]);
    expect(text).toContain('A pull cannot work:');
    expect(text).toContain('[REDACTED]');
    expect(text).not.toContain(KEY);
    const json = renderJson(o, v, [KEY]);
    expect(json).not.toContain(KEY);
    expect(JSON.parse(json)).toMatchObject({
      ok: false,
      settings: null,
      facts: { gzip: null, clockSkewSeconds: null, auth: { bearer: '401', 'x-api-key': '401' } },
    });
  });
});
