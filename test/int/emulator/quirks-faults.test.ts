import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../../src/emulator/index.js';
import { call, start, type ErrorBody } from './helpers.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await start({ seed: 17, cellsPerDay: 4000 });
});
beforeEach(() => {
  emu.setQuirks({});
  emu.setFaults({});
  emu.resetStats();
});
afterAll(() => emu.close());

const BIG = '/reports?date_from=2025-06-01&date_until=2025-06-03&dimensions=day,creative_id,country';

/** Reads a response body until it ends or breaks: the bytes received, and whether it broke. */
async function readAll(path: string, headers: Record<string, string> = {}) {
  const r = await request(`${emu.url}${path}`, { headers: { authorization: 'Bearer demo-key', ...headers } });
  const chunks: Buffer[] = [];
  let broke = false;
  try {
    for await (const chunk of r.body) chunks.push(chunk as Buffer);
  } catch {
    broke = true;
  }
  return { status: r.statusCode, headers: r.headers, bytes: Buffer.concat(chunks), broke };
}

describe('emulator quirk htmlErrors', () => {
  it('sends injected 5xx as an nginx-style HTML 502 page instead of a JSON 500', async () => {
    emu.setFaults({ failRate: 1 });
    const json = await call(emu, 'GET', '/campaigns');
    expect([json.status, (json.json as ErrorBody).error]).toEqual([500, 'server_error']);
    emu.setQuirks({ htmlErrors: true });
    const html = await call(emu, 'GET', '/campaigns');
    expect(html.status).toBe(502);
    expect(html.headers['content-type']).toBe('text/html');
    expect(html.text).toContain('<title>502 Bad Gateway</title>');
    expect(emu.stats().faults.fail).toBe(2);
  });

  it('sends only the htmlShare of them as HTML, the rest as JSON 500s', async () => {
    emu.setQuirks({ htmlErrors: true });
    emu.setFaults({ failRate: 1, htmlShare: 0.4, seed: 3 });
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) statuses.push((await call(emu, 'GET', '/campaigns?limit=1')).status);
    const html = statuses.filter((s) => s === 502).length;
    expect(html + statuses.filter((s) => s === 500).length).toBe(100);
    expect(html).toBeGreaterThan(25);
    expect(html).toBeLessThan(55);
  });
});

describe('emulator 429 storms', () => {
  it('answers a window of consecutive 429s with Retry-After once a storm starts', async () => {
    emu.setFaults({ rateLimitStormRate: 0.05, rateLimitStormLength: 6, retryAfterSeconds: 2, seed: 9 });
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) {
      const r = await call(emu, 'GET', '/campaigns?limit=1');
      if (r.status === 429) expect(r.headers['retry-after']).toBe('2');
      statuses.push(r.status);
    }
    const runs = statuses
      .join(',')
      .split(/,?200,?/)
      .filter((s) => s !== '')
      .map((s) => s.split(',').length);
    // A storm still raging at the last request is cut short by the end of the test.
    if (statuses.at(-1) === 429) runs.pop();
    expect(runs.length).toBeGreaterThan(2);
    // Storms last 6 requests each (two may touch and make a longer run of 429s).
    for (const run of runs) expect(run % 6).toBe(0);
    expect(emu.stats().faults.storm).toBe(statuses.filter((s) => s === 429).length);
  });
});

describe('emulator connections dropped mid-body', () => {
  it('sends the headers and part of a chunked report, then cuts the connection', async () => {
    const whole = await readAll(BIG);
    expect(whole.broke).toBe(false);
    emu.setFaults({ dropMidBodyRate: 1 });
    const cut = await readAll(BIG);
    expect(cut.status).toBe(200);
    expect(cut.headers['content-length']).toBeUndefined();
    expect(cut.broke).toBe(true);
    expect(cut.bytes.length).toBeGreaterThan(0);
    expect(cut.bytes.length).toBeLessThan(whole.bytes.length);
    expect(whole.bytes.subarray(0, cut.bytes.length).equals(cut.bytes)).toBe(true);
    expect(emu.stats().faults).toMatchObject({ drop_mid_body: 1, 'GET /v2/reports': 1 });
  });

  it('cuts a small body half way, and a gzip stream before its trailer', async () => {
    emu.setFaults({ dropMidBodyRate: 1 });
    const small = await readAll('/campaigns?limit=2');
    expect([small.broke, small.bytes.length > 0]).toEqual([true, true]);
    emu.setQuirks({ gzip: true });
    const zipped = await readAll(BIG, { 'accept-encoding': 'gzip' });
    expect([zipped.headers['content-encoding'], zipped.broke]).toEqual(['gzip', true]);
    expect(() => gunzipSync(zipped.bytes)).toThrow(/unexpected end/);
  });

  it('drops a 204 answer without sending anything', async () => {
    const { items } = (await call(emu, 'GET', '/campaigns?limit=1')).json as {
      items: { campaign_id: number }[];
    };
    emu.setFaults({ dropMidBodyRate: 1 });
    await expect(call(emu, 'DELETE', `/campaigns/${items[0]?.campaign_id}`)).rejects.toThrow();
    expect(emu.stats().faults.drop).toBe(1);
  });
});
