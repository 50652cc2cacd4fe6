import { describe, expect, it } from 'vitest';
import { acceptsGzip } from '../../../src/emulator/api/http.js';
import { ADVERTISED_LIMIT, FaultPlan, RateWindow } from '../../../src/emulator/faults.js';
import {
  describeQuirks,
  optionsOfFlags,
  parseQuirkList,
  resolveProfile,
} from '../../../src/emulator/flags.js';
import { FAITHFUL_QUIRKS, PROFILE_NAMES, resolveQuirks } from '../../../src/emulator/options.js';

describe('emulator quirks and profiles', () => {
  it('fills in the faithful defaults and rejects unknown or ill-typed quirks naming them', () => {
    expect(resolveQuirks({})).toEqual(FAITHFUL_QUIRKS);
    expect(resolveQuirks({ gzip: true, totals: 'missing' })).toMatchObject({
      gzip: true,
      totals: 'missing',
      strict: false,
    });
    expect(() => resolveQuirks({ reportParams: 'pipes' } as never)).toThrow(/reportParams/);
    expect(() => resolveQuirks({ gzipp: true } as never)).toThrow(/gzipp/);
    expect(() => resolveQuirks({ clockSkewSeconds: 1.5 })).toThrow(/clockSkewSeconds/);
  });

  it('takes a longest report range and a cost per 1,000 rows from their flags', () => {
    const chosen = optionsOfFlags({ profile: 'faithful', maxDaysPerRequest: 3, msPer1000Rows: 20 });
    expect(chosen.resolved).toMatchObject({ maxDaysPerRequest: 3, msPer1000Rows: 20 });
    expect(describeQuirks(chosen.resolved)).toBe('maxDaysPerRequest=3, msPer1000Rows=20');
    expect(() => resolveQuirks({ maxDaysPerRequest: -1 })).toThrow(/maxDaysPerRequest/);
  });

  it('parses a --quirks list, with no- to turn one off, and names an unknown one', () => {
    expect(parseQuirkList('string-values, sort-keys,no-gzip')).toEqual({
      stringValues: true,
      sortKeys: true,
      gzip: false,
    });
    expect(() => parseQuirkList('string-values,sorted')).toThrow(/unknown quirk "sorted".*sort-keys/);
  });

  it('lays explicit quirks and faults over a profile field by field', () => {
    expect(PROFILE_NAMES).toEqual(['faithful', 'php', 'hostile', 'strict']);
    const hostile = resolveProfile('hostile', { sortKeys: false, stringValues: undefined }, { seed: 7 });
    expect(hostile.quirks).toMatchObject({
      reportParams: 'brackets',
      auth: 'x-api-key',
      stringValues: true,
      emptyAsArray: true,
      sortKeys: false,
      htmlErrors: true,
    });
    expect(hostile.faults).toMatchObject({
      failRate: 0.25,
      rateLimitRate: 0.05,
      retryAfterSeconds: 1,
      seed: 7,
    });
    expect((hostile.faults.dropRate ?? 0) + (hostile.faults.dropMidBodyRate ?? 0)).toBeCloseTo(0.03);
    expect(resolveProfile().quirks).toEqual(FAITHFUL_QUIRKS);
    expect(() => resolveProfile('nasty' as never)).toThrow(/faithful, php, hostile, strict/);
    expect(() => resolveProfile('hostile', {}, { failRate: 0.95 })).toThrow(/add up to at most 1/);
  });
});

describe('emulator fault plan additions', () => {
  it('follows a storm start with length - 1 more 429s, then draws normally again', () => {
    const plan = new FaultPlan({ rateLimitStormRate: 0.1, rateLimitStormLength: 4, seed: 2 });
    const kinds = Array.from({ length: 400 }, () => plan.decide('/v2/campaigns').kind);
    const text = kinds.map((k) => (k === 'storm' ? 'S' : '.')).join('');
    const runs = text.split('.').filter((r) => r !== '');
    if (text.endsWith('S')) runs.pop();
    expect(runs.length).toBeGreaterThan(5);
    for (const run of runs) expect(run.length % 4).toBe(0);
    expect(
      new FaultPlan({ rateLimitStormRate: 0.1, rateLimitStormLength: 4, seed: 2 }).decide('/v2').kind,
    ).toBe(kinds[0]);
  });

  it('marks the htmlShare of fails as HTML, and keeps the old sequences when the new rates are 0', () => {
    const plan = new FaultPlan({ failRate: 0.5, htmlShare: 0.25, seed: 4 });
    const fails = Array.from({ length: 4000 }, () => plan.decide('/v2')).filter((d) => d.kind === 'fail');
    const share = fails.filter((d) => d.html === true).length / fails.length;
    expect(share).toBeGreaterThan(0.2);
    expect(share).toBeLessThan(0.3);
    const seq = (extra: object) => {
      const p = new FaultPlan({ failRate: 0.3, dropRate: 0.1, seed: 5, ...extra });
      return Array.from({ length: 300 }, () => p.decide('/v2').kind);
    };
    expect(seq({ rateLimitStormRate: 0, dropMidBodyRate: 0 })).toEqual(seq({}));
  });

  it('draws mid-body drops at their rate', () => {
    const plan = new FaultPlan({ dropMidBodyRate: 0.2, seed: 6 });
    const n = Array.from({ length: 5000 }, () => plan.decide('/v2').kind).filter(
      (k) => k === 'drop_mid_body',
    ).length;
    expect(n / 5000).toBeGreaterThan(0.17);
    expect(n / 5000).toBeLessThan(0.23);
  });
});

describe('emulator HTTP helpers', () => {
  it.each([
    ['gzip', true],
    ['gzip, deflate, br', true],
    ['br;q=1.0, gzip;q=0.5', true],
    ['*', true],
    ['x-gzip', true],
    ['gzip;q=0', false],
    ['deflate, br', false],
    ['identity', false],
    ['', false],
  ])('Accept-Encoding %j accepts gzip: %s', (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });

  it('counts the advertised budget down within a window, resets it with the next, and shows 0 on a refusal', () => {
    let now = 1_700_000_000_000; // 20 s into a minute
    const w = new RateWindow(() => now);
    expect(w.take(false)).toEqual({
      'x-ratelimit-limit': String(ADVERTISED_LIMIT),
      'x-ratelimit-remaining': String(ADVERTISED_LIMIT - 1),
      'x-ratelimit-reset': '40',
    });
    expect(w.take(false)['x-ratelimit-remaining']).toBe(String(ADVERTISED_LIMIT - 2));
    expect(w.take(true)['x-ratelimit-remaining']).toBe('0');
    now += 40_000;
    expect(w.take(false)).toMatchObject({
      'x-ratelimit-remaining': String(ADVERTISED_LIMIT - 1),
      'x-ratelimit-reset': '60',
    });
  });
});

describe('emulator flags', () => {
  it('lays --quirks and the named quirk flags over the profile, the named flags winning', () => {
    const chosen = optionsOfFlags({
      profile: 'php',
      quirks: { gzip: true, strict: false },
      reportParams: 'comma',
      strict: true,
      clockSkew: -30,
      stormRate: 0.1,
      stormLength: 3,
    });
    expect(chosen.faults).toEqual({ rateLimitStormRate: 0.1, rateLimitStormLength: 3 });
    expect(chosen.resolved).toMatchObject({
      reportParams: 'comma',
      auth: 'x-api-key',
      gzip: true,
      strict: true,
      clockSkewSeconds: -30,
    });
    expect(describeQuirks(chosen.resolved)).toBe(
      'reportParams=comma, auth=x-api-key, stringValues, emptyAsArray, sortKeys, gzip, strict, clockSkewSeconds=-30',
    );
    expect(describeQuirks(FAITHFUL_QUIRKS)).toBe('none');
  });
});
