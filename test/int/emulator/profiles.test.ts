import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../../src/emulator/index.js';
import { decodeReport, encodingDiff } from '../../unit/emulator/decode.js';
import { call, start } from './helpers.js';

const running: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});
async function emulator(options: Parameters<typeof start>[0]): Promise<RunningEmulator> {
  const emu = await start({ seed: 18, cellsPerDay: 300, ...options });
  running.push(emu);
  return emu;
}

const DIMS = ['day', 'campaign_id'];
const DATES = 'date_from=2025-06-01&date_until=2025-06-02';
const PHP_REPORT = `/reports?${DATES}&dimensions%5B%5D=day&dimensions%5B%5D=campaign_id`;

type Outcome = '200' | '500' | '502 html' | '429' | 'drop' | 'cut' | string;

/** One request as a PHP-profile client sends it (x-api-key), and what came of it. */
async function attempt(emu: RunningEmulator, path: string): Promise<{ outcome: Outcome; json?: unknown }> {
  let status = 0;
  try {
    const r = await request(`${emu.url}${path}`, { headers: { 'x-api-key': 'demo-key' } });
    status = r.statusCode;
    const text = await r.body.text();
    if (status === 502) return { outcome: r.headers['content-type'] === 'text/html' ? '502 html' : '502' };
    if (status === 429)
      return { outcome: r.headers['retry-after'] === '1' ? '429' : '429 without Retry-After: 1' };
    return { outcome: String(status), json: status === 200 ? JSON.parse(text) : undefined };
  } catch (error) {
    if (status === 0) return { outcome: 'drop' };
    return { outcome: /terminated|other side closed|closed/i.test(String(error)) ? 'cut' : String(error) };
  }
}

describe('emulator profiles', () => {
  it('faithful is the default: every reading accepted, no faults', async () => {
    const emu = await emulator({});
    expect(emu.quirks()).toMatchObject({
      reportParams: 'any',
      auth: 'any',
      stringValues: false,
      strict: false,
    });
    for (const path of [PHP_REPORT, `/reports?${DATES}&dimensions=day&dimensions=campaign_id`])
      expect((await call(emu, 'GET', path)).status).toBe(200);
  });

  it('php: brackets and x-api-key only, string values, [] for empty, sorted keys, same numbers', async () => {
    const faithful = await emulator({});
    const php = await emulator({ profile: 'php' });
    expect((await call(php, 'GET', PHP_REPORT)).status).toBe(401);
    const reference = (await call(faithful, 'GET', PHP_REPORT)).json;
    const r = await call(php, 'GET', PHP_REPORT, { auth: 'x-api-key' });
    expect(r.text.startsWith('{"totals":{"ad_requests":"')).toBe(true);
    expect(decodeReport(r.json, DIMS)).toEqual(decodeReport(reference, DIMS));
    const campaigns = await call(php, 'GET', '/campaigns', { auth: 'x-api-key' });
    expect(encodingDiff((await call(faithful, 'GET', '/campaigns')).json, campaigns.json)).toEqual([]);
    expect(campaigns.text).toMatch(/"campaign_id":"\d{9}"/);
  });

  it('hostile: 400 requests meet the configured fault mix, reproducibly, and every answer carries the faithful numbers', async () => {
    const faithful = await emulator({});
    const reference = decodeReport((await call(faithful, 'GET', PHP_REPORT)).json, DIMS);
    const campaigns = (await call(faithful, 'GET', '/campaigns')).json;
    const run = async () => {
      const hostile = await emulator({ profile: 'hostile', faults: { seed: 21 } });
      const seen: Record<string, number> = {};
      for (let i = 0; i < 400; i++) {
        const path = i % 2 === 0 ? PHP_REPORT : '/campaigns';
        const { outcome, json } = await attempt(hostile, path);
        seen[outcome] = (seen[outcome] ?? 0) + 1;
        if (outcome !== '200') continue;
        if (path === PHP_REPORT) expect(decodeReport(json, DIMS)).toEqual(reference);
        else expect(encodingDiff(campaigns, json)).toEqual([]);
      }
      return { seen, faults: hostile.stats().faults };
    };
    const first = await run();
    const { seen, faults } = first;
    // Nothing but the configured kinds, and the client saw what the emulator counted.
    expect(Object.keys(seen).sort()).toEqual(['200', '429', '500', '502 html', 'cut', 'drop']);
    expect([seen['500']! + seen['502 html']!, seen['429'], seen.drop, seen.cut]).toEqual([
      faults.fail,
      faults.rate_limit,
      faults.drop,
      faults.drop_mid_body,
    ]);
    // 25% 5xx (two in five HTML), 5% 429, 3% dropped (a third mid-body): within about 3 sigma of 400 draws.
    expect(faults.fail).toBeGreaterThanOrEqual(75);
    expect(faults.fail).toBeLessThanOrEqual(125);
    expect(seen['502 html']! / faults.fail!).toBeGreaterThan(0.25);
    expect(seen['502 html']! / faults.fail!).toBeLessThan(0.55);
    expect(faults.rate_limit).toBeGreaterThanOrEqual(8);
    expect(faults.rate_limit).toBeLessThanOrEqual(33);
    expect(faults.drop! + faults.drop_mid_body!).toBeGreaterThanOrEqual(4);
    expect(faults.drop! + faults.drop_mid_body!).toBeLessThanOrEqual(22);
    expect(seen['200']).toBe(400 - faults.fail! - faults.rate_limit! - faults.drop! - faults.drop_mid_body!);
    // Seeded: the same seed and request sequence give exactly the same mix.
    expect(await run()).toEqual(first);
  });

  it('quirks given beside a profile override it field by field', async () => {
    const emu = await emulator({ profile: 'php', quirks: { auth: 'any', sortKeys: false } });
    expect(emu.quirks()).toMatchObject({
      reportParams: 'brackets',
      auth: 'any',
      sortKeys: false,
      stringValues: true,
    });
    expect((await call(emu, 'GET', PHP_REPORT)).status).toBe(200);
  });
});

describe('emulator control endpoint for quirks', () => {
  async function control(emu: RunningEmulator, method: string, body?: unknown) {
    const r = await request(`${emu.origin}/_control/quirks`, {
      method: method as 'GET',
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await r.body.text();
    return {
      status: r.statusCode,
      json: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>),
    };
  }

  it('replaces the quirks with PUT, shows them with GET, and answers 400 naming a bad field', async () => {
    const emu = await emulator({ profile: 'php' });
    expect((await control(emu, 'PUT', { reportParams: 'comma', gzip: true })).status).toBe(204);
    expect((await control(emu, 'GET')).json).toMatchObject({
      reportParams: 'comma',
      gzip: true,
      stringValues: false,
      auth: 'any',
    });
    expect((await call(emu, 'GET', `/reports?${DATES}&dimensions=day,campaign_id`)).status).toBe(200);
    for (const [body, field] of [
      [{ reportParams: 'semicolon' }, 'reportParams'],
      [{ stringValues: 'yes' }, 'stringValues'],
      [{ clockSkewSeconds: 10 ** 9 }, 'clockSkewSeconds'],
      [{ gzipped: true }, 'gzipped'],
    ] as const) {
      const r = await control(emu, 'PUT', body);
      expect([r.status, r.json?.field], JSON.stringify(body)).toEqual([400, field]);
    }
    expect((await control(emu, 'PUT', '[1]')).status).toBe(400);
    expect((await control(emu, 'GET')).json).toMatchObject({ reportParams: 'comma' });
  });
});
