import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../../src/emulator/index.js';
import { call, start, type ErrorBody } from './helpers.js';

let emu: RunningEmulator;
beforeEach(async () => {
  emu = await start({ seed: 5 });
});
afterEach(() => emu.close());

const REPORT = '/reports?date_from=2025-06-01&date_until=2025-06-01&dimensions=day,country';

/** Outcome of one request: its status, or how it failed. */
async function outcome(path = '/campaigns'): Promise<string> {
  try {
    const r = await call(emu, 'GET', path);
    if (r.status === 200 && r.json === undefined) return 'malformed';
    return String(r.status);
  } catch (error) {
    return (error as Error).name === 'SocketError' || /other side closed|terminated/i.test(String(error))
      ? 'cut'
      : String(error);
  }
}

async function control(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const r = await request(`${emu.origin}/_control${path}`, {
    method: method as 'GET',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.body.text();
  return { status: r.statusCode, json: text === '' ? undefined : JSON.parse(text) };
}

describe('emulator faults', () => {
  it('answers 500 with a JSON body at failRate 1, and counts the faults per endpoint and kind', async () => {
    emu.setFaults({ failRate: 1 });
    const r = await call(emu, 'GET', '/campaigns');
    expect(r.status).toBe(500);
    expect((r.json as ErrorBody).error).toBe('server_error');
    await call(emu, 'GET', '/campaigns');
    expect(emu.stats()).toEqual({
      requests: { 'GET /v2/campaigns': 2 },
      faults: { 'GET /v2/campaigns': 2, fail: 2 },
    });
  });

  it('answers 429 with Retry-After', async () => {
    emu.setFaults({ rateLimitRate: 1, retryAfterSeconds: 7 });
    const r = await call(emu, 'GET', REPORT);
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('7');
    expect((r.json as ErrorBody).status).toBe(429);
  });

  it('drops the connection without an answer', async () => {
    emu.setFaults({ dropRate: 1 });
    expect(await outcome()).toBe('cut');
    expect(emu.stats().faults.drop).toBe(1);
  });

  it('answers 200 with a body that is not JSON', async () => {
    emu.setFaults({ malformedRate: 1 });
    const r = await call(emu, 'GET', REPORT);
    expect(r.status).toBe(200);
    expect(() => JSON.parse(r.text)).toThrow();
  });

  it('cuts a 200 body mid-way while its content-length promises the whole', async () => {
    emu.setFaults({ truncateRate: 1 });
    expect(await outcome(REPORT)).toBe('cut');
    expect(emu.stats().faults).toEqual({ 'GET /v2/reports': 1, truncate: 1 });
  });

  it('adds latency from a fixed value or a range', async () => {
    emu.setFaults({ latencyMs: [150, 200] });
    const started = performance.now();
    expect((await call(emu, 'GET', '/campaigns')).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
    expect(emu.stats().faults).toEqual({ latency: 1 });
  });

  it('restricts faults to the given path prefixes', async () => {
    emu.setFaults({ failRate: 1, paths: ['/v2/reports'] });
    expect((await call(emu, 'GET', '/campaigns')).status).toBe(200);
    expect((await call(emu, 'GET', REPORT)).status).toBe(500);
  });

  it('repeats the same fault sequence for the same seed', async () => {
    const run = async () => {
      emu.setFaults({ failRate: 0.3, rateLimitRate: 0.2, malformedRate: 0.1, seed: 99 });
      const seen: string[] = [];
      for (let i = 0; i < 30; i++) seen.push(await outcome());
      return seen;
    };
    const first = await run();
    expect(new Set(first)).toEqual(new Set(['200', '500', '429', 'malformed']));
    expect(await run()).toEqual(first);
  });

  it('serves canned overrides the given number of times, before any fault', async () => {
    emu.setFaults({ failRate: 1, paths: ['/v2/campaigns'] });
    emu.override({
      path: '/v2/reports',
      status: 503,
      body: '{"status":503}',
      headers: { 'x-why': 'test' },
      times: 2,
    });
    const first = await call(emu, 'GET', REPORT);
    expect([first.status, first.headers['x-why']]).toEqual([503, 'test']);
    expect((await call(emu, 'GET', REPORT)).status).toBe(503);
    expect((await call(emu, 'GET', REPORT)).status).toBe(200);
    expect(emu.stats().faults.override).toBe(2);
  });
});

describe('emulator control endpoints', () => {
  it('sets faults, reads and resets stats, and queues overrides over HTTP', async () => {
    expect((await control('PUT', '/faults', { failRate: 1 })).status).toBe(204);
    await call(emu, 'GET', '/campaigns');
    const stats = await control('GET', '/stats');
    expect(stats).toEqual({
      status: 200,
      json: { requests: { 'GET /v2/campaigns': 1 }, faults: { 'GET /v2/campaigns': 1, fail: 1 } },
    });
    expect((await control('PUT', '/faults', {})).status).toBe(204);
    expect((await control('POST', '/stats/reset')).status).toBe(204);
    expect((await control('GET', '/stats')).json).toEqual({ requests: {}, faults: {} });
    expect(
      (await control('POST', '/override', { path: '/v2/campaigns', status: 500, body: { oops: true } }))
        .status,
    ).toBe(204);
    const canned = await call(emu, 'GET', '/campaigns');
    expect([canned.status, canned.json]).toEqual([500, { oops: true }]);
  });

  it('answers 400 for bad fault options and 404 for an unknown control path', async () => {
    expect((await control('PUT', '/faults', { failRate: 2 })).status).toBe(400);
    expect((await control('PUT', '/faults', { failRate: 0.6, dropRate: 0.6 })).status).toBe(400);
    expect((await control('PUT', '/faults', { failrate: 0.1 })).status).toBe(400);
    expect((await control('POST', '/override', { path: 'v2', status: 200, body: '' })).status).toBe(400);
    expect((await control('GET', '/nothing')).status).toBe(404);
  });

  it('refuses an override whose header could not be sent (CR/LF, a bad name) with a 400, and answers normally after', async () => {
    for (const headers of [
      { 'x-evil': 'a\r\nset-cookie: b' },
      { 'x-evil': 'line\nbreak' },
      { 'x-nul': 'a\u0000b' },
      { 'bad name': 'v' },
      { 'x:colon': 'v' },
    ]) {
      const refused = await control('POST', '/override', {
        path: '/v2/campaigns',
        status: 200,
        body: {},
        headers,
      });
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.json)).toMatch(/headers/);
    }
    // Nothing was queued: the next request gets the emulator's own answer, not a 500.
    const normal = await call(emu, 'GET', '/campaigns');
    expect(normal.status).toBe(200);
    expect(emu.stats().faults.override).toBeUndefined();
  });

  it('counts requests per endpoint with ids normalised', async () => {
    const { items } = (await call(emu, 'GET', '/campaigns')).json as {
      items: { campaign_id: number; creative_ids: number[] }[];
    };
    const [a, b] = items as [(typeof items)[0], (typeof items)[0]];
    await call(emu, 'GET', `/campaigns/${a.campaign_id}`);
    await call(emu, 'GET', `/campaigns/${b.campaign_id}`);
    await call(emu, 'GET', `/campaigns/${a.campaign_id}/creatives/${a.creative_ids[0]}`);
    expect(emu.stats().requests).toEqual({
      'GET /v2/campaigns': 1,
      'GET /v2/campaigns/:id': 2,
      'GET /v2/campaigns/:id/creatives/:id': 1,
    });
  });
});
