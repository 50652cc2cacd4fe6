import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../../src/emulator/index.js';
import { call, start } from './helpers.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await start({ seed: 16, cellsPerDay: 4000 });
});
beforeEach(() => emu.setQuirks({}));
afterAll(() => emu.close());

const BIG = '/reports?date_from=2025-06-01&date_until=2025-06-03&dimensions=day,creative_id,country';

/** A GET with the demo key and these extra headers; the body as raw bytes (undici does not decompress). */
async function raw(path: string, headers: Record<string, string> = {}) {
  const r = await request(`${emu.url}${path}`, { headers: { authorization: 'Bearer demo-key', ...headers } });
  return { status: r.statusCode, headers: r.headers, bytes: Buffer.from(await r.body.arrayBuffer()) };
}

describe('emulator quirk gzip', () => {
  it('serves gzip only when asked and the quirk is on, with Content-Encoding and Vary', async () => {
    const plain = await raw(BIG);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect((await raw(BIG, { 'accept-encoding': 'gzip' })).headers['content-encoding']).toBeUndefined();
    emu.setQuirks({ gzip: true });
    const notAsked = await raw(BIG);
    expect(notAsked.headers['content-encoding']).toBeUndefined();
    expect(notAsked.headers.vary).toBe('Accept-Encoding');
    expect(notAsked.bytes.equals(plain.bytes)).toBe(true);
    expect(
      (await raw(BIG, { 'accept-encoding': 'gzip;q=0, identity' })).headers['content-encoding'],
    ).toBeUndefined();
    const zipped = await raw(BIG, { 'accept-encoding': 'br, gzip;q=0.8' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    expect(zipped.headers['content-type']).toMatch(/^application\/json/);
    // Streamed through zlib: chunked, no content-length, and far smaller than the JSON.
    expect(zipped.headers['content-length']).toBeUndefined();
    expect(plain.bytes.length).toBeGreaterThan(500_000);
    expect(zipped.bytes.length).toBeLessThan(plain.bytes.length / 3);
    expect(gunzipSync(zipped.bytes).equals(plain.bytes)).toBe(true);
  });

  it('compresses small answers and errors too, never a 204', async () => {
    emu.setQuirks({ gzip: true });
    const list = await raw('/campaigns?limit=1', { 'accept-encoding': 'gzip' });
    expect(list.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(list.bytes).toString())).toHaveProperty('items');
    const bad = await raw('/reports?date_from=x', { 'accept-encoding': 'gzip' });
    expect([bad.status, JSON.parse(gunzipSync(bad.bytes).toString()).status]).toEqual([400, 400]);
  });
});

describe('emulator quirks rateLimitHeaders and clockSkewSeconds', () => {
  it('advertises X-RateLimit-* on every answer only when asked, counting down within the window', async () => {
    expect((await call(emu, 'GET', '/campaigns?limit=1')).headers['x-ratelimit-limit']).toBeUndefined();
    emu.setQuirks({ rateLimitHeaders: true });
    const a = await call(emu, 'GET', '/campaigns?limit=1');
    const b = await call(emu, 'GET', '/campaigns/1');
    expect(b.status).toBe(404);
    expect(a.headers['x-ratelimit-limit']).toBe('600');
    const [ra, rb] = [Number(a.headers['x-ratelimit-remaining']), Number(b.headers['x-ratelimit-remaining'])];
    // One window boundary may fall between the two requests; otherwise the budget goes down by one.
    expect(rb === ra - 1 || rb === 599).toBe(true);
    expect(Number(b.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
    expect(Number(b.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(60);
  });

  it('shifts the Date header by the skew, and leaves it true without one', async () => {
    const at = (r: { headers: Record<string, unknown> }) => Date.parse(String(r.headers.date));
    const before = Date.now();
    expect(Math.abs(at(await call(emu, 'GET', '/campaigns?limit=1')) - before)).toBeLessThan(2000);
    emu.setQuirks({ clockSkewSeconds: -600 });
    const skewed = at(await call(emu, 'GET', '/campaigns?limit=1'));
    expect(skewed - Date.now()).toBeLessThan(-598_000);
    expect(skewed - Date.now()).toBeGreaterThan(-602_000);
  });
});
