import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReportParamsForm, RunningEmulator } from '../../../src/emulator/index.js';
import { call, start, type ErrorBody } from './helpers.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await start({ seed: 8, cellsPerDay: 200 });
});
afterAll(() => emu.close());

const DATES = 'date_from=2025-06-01&date_until=2025-06-02';
type ClientForm = Exclude<ReportParamsForm, 'any'>;

/** GET /reports for [day, campaign_id] sent the way a client using `form` sends it. */
function ask(form: ClientForm) {
  switch (form) {
    case 'repeat':
      return call(emu, 'GET', `/reports?${DATES}&dimensions=day&dimensions=campaign_id`);
    case 'brackets':
      return call(emu, 'GET', `/reports?${DATES}&dimensions%5B%5D=day&dimensions%5B%5D=campaign_id`);
    case 'comma':
      return call(emu, 'GET', `/reports?${DATES}&dimensions=day,campaign_id`);
    case 'json-body':
      return call(emu, 'GET', '/reports', {
        body: { date_from: '2025-06-01', date_until: '2025-06-02', dimensions: ['day', 'campaign_id'] },
      });
  }
}

describe('emulator quirk reportParams', () => {
  let nested = '';
  let lastOnly = '';
  beforeAll(async () => {
    emu.setQuirks({});
    nested = (await ask('repeat')).text;
    lastOnly = (await call(emu, 'GET', `/reports?${DATES}&dimensions=campaign_id`)).text;
  });

  // What a server that understands only the row's form does with each client form:
  // 'ok' the two-level report, 'last' a one-level report of the last dimension only, 'dimensions' a 400.
  it.each<[ReportParamsForm, Record<ClientForm, 'ok' | 'last' | 'dimensions'>]>([
    ['any', { repeat: 'ok', brackets: 'ok', comma: 'ok', 'json-body': 'ok' }],
    ['repeat', { repeat: 'ok', brackets: 'dimensions', comma: 'dimensions', 'json-body': 'dimensions' }],
    ['brackets', { repeat: 'last', brackets: 'ok', comma: 'dimensions', 'json-body': 'dimensions' }],
    ['comma', { repeat: 'last', brackets: 'dimensions', comma: 'ok', 'json-body': 'dimensions' }],
    ['json-body', { repeat: 'dimensions', brackets: 'dimensions', comma: 'dimensions', 'json-body': 'ok' }],
  ])('a %s server answers each client form as a real one would', async (server, expected) => {
    emu.setQuirks({ reportParams: server });
    for (const form of ['repeat', 'brackets', 'comma', 'json-body'] as const) {
      const r = await ask(form);
      const seen =
        r.status === 200
          ? r.text === nested
            ? 'ok'
            : r.text === lastOnly
              ? 'last'
              : 'other'
          : (r.json as ErrorBody).field;
      expect(seen, `${form} client`).toBe(expected[form]);
      if (r.status !== 200) expect(r.status).toBe(400);
    }
  });

  it('a brackets server silently answers a one-level report keyed by campaign ids to repeated params', async () => {
    emu.setQuirks({ reportParams: 'brackets' });
    const r = await ask('repeat');
    expect(r.status).toBe(200);
    const items = (r.json as { items: Record<string, Record<string, unknown>> }).items;
    const keys = Object.keys(items);
    expect(keys.length).toBeGreaterThan(1);
    for (const key of keys) {
      expect(key).toMatch(/^\d{9}$/);
      expect(typeof items[key]?.ad_requests).toBe('number');
    }
  });

  it('a comma server reads comma-joined names as one unknown dimension under the repeat server', async () => {
    emu.setQuirks({ reportParams: 'repeat' });
    const r = await ask('comma');
    expect((r.json as ErrorBody).message).toContain('Unknown dimension "day,campaign_id"');
  });
});

describe('emulator quirk auth', () => {
  it.each([
    ['bearer', 200, 401],
    ['x-api-key', 401, 200],
    ['any', 200, 200],
  ] as const)('an %s server answers Bearer %i and x-api-key %i', async (form, bearer, header) => {
    emu.setQuirks({ auth: form });
    expect((await call(emu, 'GET', '/campaigns?limit=1', { auth: 'bearer' })).status).toBe(bearer);
    const other = await call(emu, 'GET', '/campaigns?limit=1', { auth: 'x-api-key' });
    expect(other.status).toBe(header);
    if (header === 401) expect((other.json as ErrorBody).message).toContain('Authorization: Bearer');
  });
});
