import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../../src/emulator/index.js';
import { call, start, type ErrorBody } from './helpers.js';

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await start({
    keys: [
      { key: 'reports-only', scopes: ['reports'] },
      { key: 'read-only', methods: ['GET'] },
      { key: 'from-elsewhere', ips: ['10.1.2.3'] },
      { key: 'from-here', ips: ['127.0.0.1'], accountId: 555 },
    ],
  });
});
afterAll(() => emu.close());

const REPORT = '/reports?date_from=2025-06-01&date_until=2025-06-01&dimensions=day';

describe('emulator auth', () => {
  it('accepts the demo key in both header forms', async () => {
    expect((await call(emu, 'GET', '/campaigns', { auth: 'bearer' })).status).toBe(200);
    expect((await call(emu, 'GET', '/campaigns', { auth: 'x-api-key' })).status).toBe(200);
    expect((await call(emu, 'GET', REPORT, { auth: 'x-api-key' })).status).toBe(200);
  });

  it('answers 401 with a JSON body for a missing or unknown key, without echoing the key', async () => {
    const missing = await call(emu, 'GET', '/campaigns', { key: null });
    expect(missing.status).toBe(401);
    expect((missing.json as ErrorBody).error).toBe('unauthorized');
    const unknown = await call(emu, 'GET', '/campaigns', { key: 'wrong-secret-123' });
    expect(unknown.status).toBe(401);
    expect(unknown.text).not.toContain('wrong-secret-123');
    expect((await call(emu, 'GET', REPORT, { key: 'wrong', auth: 'x-api-key' })).status).toBe(401);
  });

  it('answers 401 before anything else, even for an unknown path', async () => {
    expect((await call(emu, 'GET', '/nowhere', { key: null })).status).toBe(401);
  });

  it('answers 403 for a key that lacks the scope', async () => {
    expect((await call(emu, 'GET', REPORT, { key: 'reports-only' })).status).toBe(200);
    const r = await call(emu, 'GET', '/campaigns', { key: 'reports-only' });
    expect(r.status).toBe(403);
    expect((r.json as ErrorBody).error).toBe('forbidden');
    const campaigns = (await call(emu, 'GET', '/campaigns')).json as { items: { campaign_id: number }[] };
    const id = campaigns.items[0]?.campaign_id;
    expect((await call(emu, 'GET', `/campaigns/${id}/creatives`, { key: 'reports-only' })).status).toBe(403);
  });

  it('answers 403 for a key that lacks the method', async () => {
    expect((await call(emu, 'GET', '/campaigns', { key: 'read-only' })).status).toBe(200);
    const r = await call(emu, 'POST', '/campaigns', {
      key: 'read-only',
      body: { name: 'x', folder_id: 1, ad_format: 'display' },
    });
    expect(r.status).toBe(403);
  });

  it('answers 403 for a key used from an IP it does not allow', async () => {
    expect((await call(emu, 'GET', '/campaigns', { key: 'from-elsewhere' })).status).toBe(403);
    expect((await call(emu, 'GET', '/campaigns', { key: 'from-here' })).status).toBe(200);
  });

  it('stamps writes with the key account id', async () => {
    const r = await call(emu, 'POST', '/campaigns', {
      key: 'from-here',
      body: { name: 'x', folder_id: 1, ad_format: 'display' },
    });
    const id = (r.json as { campaign_id: number }).campaign_id;
    const c = (await call(emu, 'GET', `/campaigns/${id}`)).json as {
      account_id_created: number;
      account_id_modified: number;
    };
    expect([c.account_id_created, c.account_id_modified]).toEqual([555, 555]);
  });

  it('refuses the demo key when it is disabled', async () => {
    const strict = await start({ demoKey: false, keys: [{ key: 'only-key' }] });
    try {
      expect((await call(strict, 'GET', '/campaigns')).status).toBe(401);
      expect((await call(strict, 'GET', '/campaigns', { key: 'only-key' })).status).toBe(200);
    } finally {
      await strict.close();
    }
  });
});
