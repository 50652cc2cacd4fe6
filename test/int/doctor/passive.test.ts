// `adops doctor`'s passive findings against emulator quirks: gzip served or not, a server clock
// that is off, and rate-limit headers.
import { afterEach, describe, expect, it } from 'vitest';
import { closeEmulators, doctorAgainst as doctor, settings } from './helpers.js';

afterEach(closeEmulators);

interface Doc {
  readonly rows: ReadonlyArray<{ check: string; status: string }>;
  readonly facts: { clockSkewSeconds: number | null; rateLimitHeaders: Record<string, string> };
}

describe('adops doctor with the gzip, clock and rate-limit quirks', () => {
  it('gzip on: sets ADOPS_HTTP_COMPRESSION=gzip; off: none', async () => {
    const on = await doctor({ quirks: { gzip: true } });
    expect(settings(on).ADOPS_HTTP_COMPRESSION).toBe('gzip');
    expect(on.stdout).toMatch(/gzip\s+│ ok\s+│ served/);
    const off = await doctor({ quirks: { gzip: false } });
    expect(settings(off).ADOPS_HTTP_COMPRESSION).toBe('none');
  });

  it('clockSkewSeconds: reports the skew and warns above a minute, without failing', async () => {
    const run = await doctor({ quirks: { clockSkewSeconds: 3600 } }, {}, ['--json']);
    const doc = JSON.parse(run.stdout) as Doc;
    expect(run.code).toBe(0);
    expect(Math.abs((doc.facts.clockSkewSeconds ?? 0) - 3600)).toBeLessThanOrEqual(1);
    expect(doc.rows.find((r) => r.check === 'clock')?.status).toBe('warn');
    const inStep = JSON.parse((await doctor({}, {}, ['--json'])).stdout) as Doc;
    expect(Math.abs(inStep.facts.clockSkewSeconds ?? 99)).toBeLessThanOrEqual(1);
    expect(inStep.rows.find((r) => r.check === 'clock')?.status).toBe('ok');
  });

  it('rateLimitHeaders: lists the X-RateLimit headers seen; none without them', async () => {
    const run = await doctor({ quirks: { rateLimitHeaders: true } }, {}, ['--json']);
    const doc = JSON.parse(run.stdout) as Doc;
    expect(Object.keys(doc.facts.rateLimitHeaders)).toEqual(
      expect.arrayContaining(['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']),
    );
    const without = JSON.parse((await doctor({}, {}, ['--json'])).stdout) as Doc;
    expect(without.facts.rateLimitHeaders).toEqual({});
  });
});
