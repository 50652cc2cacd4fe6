import { describe, expect, it } from 'vitest';
import { EmulatorReply } from '../../../src/emulator/api/http.js';
import { FaultPlan } from '../../../src/emulator/faults.js';
import { parseKeysFile, parseLatency } from '../../../src/emulator/flags.js';
import { createRng, mixSeed } from '../../../src/emulator/prng.js';
import { endpointKey, KeyRing, normaliseIp, OverrideQueue, requestKey } from '../../../src/emulator/serve.js';

const statusOf = (fn: () => unknown): number | undefined => {
  try {
    fn();
    return undefined;
  } catch (error) {
    return error instanceof EmulatorReply ? error.status : -1;
  }
};

describe('emulator prng', () => {
  it('repeats a sequence for a seed and differs across seeds', () => {
    const seq = (seed: number) => Array.from({ length: 5 }, createRng(seed).next);
    expect(seq(mixSeed(1, 2))).toEqual(seq(mixSeed(1, 2)));
    expect(seq(mixSeed(1, 2))).not.toEqual(seq(mixSeed(2, 1)));
    expect(mixSeed(2 ** 33)).not.toBe(mixSeed(0));
  });
});

describe('emulator fault plan', () => {
  it('draws kinds in proportion to their rates, reproducibly for a seed', () => {
    const kinds = (seed: number) => {
      const plan = new FaultPlan({ failRate: 0.2, rateLimitRate: 0.1, dropRate: 0.1, seed });
      return Array.from({ length: 2000 }, () => plan.decide('/v2/reports').kind);
    };
    const a = kinds(3);
    expect(kinds(3)).toEqual(a);
    expect(kinds(4)).not.toEqual(a);
    const share = (k: string) => a.filter((x) => x === k).length / a.length;
    expect(share('fail')).toBeCloseTo(0.2, 1);
    expect(share('rate_limit')).toBeCloseTo(0.1, 1);
    expect(share('none')).toBeCloseTo(0.6, 1);
  });

  it('leaves paths outside its prefixes alone and draws latency within the range', () => {
    const plan = new FaultPlan({ failRate: 1, latencyMs: [10, 20], paths: ['/v2/reports'] });
    expect(plan.decide('/v2/campaigns')).toEqual({ kind: 'none', latencyMs: 0 });
    const d = plan.decide('/v2/reports');
    expect(d.kind).toBe('fail');
    expect(d.latencyMs).toBeGreaterThanOrEqual(10);
    expect(d.latencyMs).toBeLessThanOrEqual(20);
  });

  it('drips a share of answers, every dripIntervalMs (2000 by default)', () => {
    const plan = new FaultPlan({ dripRate: 1, dripIntervalMs: 50 });
    expect(plan.decide('/v2/reports').kind).toBe('drip');
    expect(plan.dripIntervalMs).toBe(50);
    expect(new FaultPlan({}).dripIntervalMs).toBe(2_000);
    expect(() => new FaultPlan({ dripRate: 0.6, failRate: 0.6 })).toThrow(/add up to at most 1/);
  });

  it('rejects rates outside 0..1 or adding up above 1', () => {
    expect(() => new FaultPlan({ failRate: 1.5 })).toThrow();
    expect(() => new FaultPlan({ failRate: 0.5, truncateRate: 0.6 })).toThrow();
  });

  it('parses --latency-ms as A or A-B', () => {
    expect(parseLatency('50')).toBe(50);
    expect(parseLatency('20-200')).toEqual([20, 200]);
    expect(() => parseLatency('200-20')).toThrow();
    expect(() => parseLatency('fast')).toThrow();
  });
});

describe('emulator auth', () => {
  it('reads the key from Authorization: Bearer (any case) or x-api-key', () => {
    expect(requestKey({ authorization: 'Bearer abc' })).toBe('abc');
    expect(requestKey({ authorization: 'bearer abc' })).toBe('abc');
    expect(requestKey({ 'x-api-key': 'xyz' })).toBe('xyz');
    expect(requestKey({ authorization: 'Basic abc' })).toBeUndefined();
    expect(requestKey({})).toBeUndefined();
  });

  it('answers 401 for missing and unknown keys, 403 for scope, method and IP', () => {
    const ring = new KeyRing(
      [{ key: 'k', scopes: ['reports'], methods: ['get'], ips: ['::ffff:10.0.0.1'] }],
      true,
    );
    expect(statusOf(() => ring.authenticate(undefined))).toBe(401);
    expect(statusOf(() => ring.authenticate('nope'))).toBe(401);
    const k = ring.authenticate('k');
    expect(statusOf(() => ring.authorize(k, 'reports', 'GET', '10.0.0.1'))).toBeUndefined();
    expect(statusOf(() => ring.authorize(k, 'campaigns', 'GET', '10.0.0.1'))).toBe(403);
    expect(statusOf(() => ring.authorize(k, 'reports', 'POST', '10.0.0.1'))).toBe(403);
    expect(statusOf(() => ring.authorize(k, 'reports', 'GET', '10.0.0.2'))).toBe(403);
    expect(normaliseIp('::ffff:127.0.0.1')).toBe('127.0.0.1');
  });

  it('parses a keys file as an array or {keys}, and names the problem otherwise', () => {
    expect(parseKeysFile('[{"key":"a","scopes":["reports"]}]', 'f.json')).toEqual([
      { key: 'a', scopes: ['reports'] },
    ]);
    expect(parseKeysFile('{"keys":[{"key":"b"}]}', 'f.json')).toEqual([{ key: 'b' }]);
    expect(() => parseKeysFile('[{"key":"a","scopes":["zones"]}]', 'f.json')).toThrow(
      /f\.json: 0\.scopes\.0/,
    );
    expect(() => parseKeysFile('{', 'f.json')).toThrow(/not valid JSON/);
  });
});

describe('emulator stats', () => {
  it('normalises ids and trailing slashes in endpoint keys', () => {
    expect(endpointKey('get', '/v2/campaigns/123/creatives/456/')).toBe(
      'GET /v2/campaigns/:id/creatives/:id',
    );
    expect(endpointKey('POST', '/v2/campaigns')).toBe('POST /v2/campaigns');
  });

  it('serves an override the given number of times, first match first', () => {
    const q = new OverrideQueue();
    q.add({ path: '/v2/reports', status: 500, body: 'a', times: 2 });
    q.add({ path: '/v2', status: 503, body: 'b' });
    expect(q.take('/v2/reports')?.status).toBe(500);
    expect(q.take('/v2/reports')?.status).toBe(500);
    expect(q.take('/v2/reports')?.status).toBe(503);
    expect(q.take('/v2/reports')).toBeUndefined();
  });
});
