// Emulator auth, as the API client meets it: a read-only key cannot write, a reports-only key cannot
// list campaigns, an IP-restricted key is refused from another address, and a pull with a refused
// key ends as one failed pull with the reason, never retried.
import { afterAll, beforeAll, beforeEach, describe, expect, it, inject } from 'vitest';
import { createApiClient, type ApiClient } from '../../helpers/api-client.js';
import { ApiError } from '../../../src/api/errors.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { figureBook } from '../../helpers/reliability/figures.js';
import { startPipeline } from '../../helpers/pipeline.js';
import { lastLoad, openSuite, reportRequests, type Suite } from '../../helpers/reliability/suite.js';
import { verify } from '../../helpers/reliability/truth.js';

const READ_ONLY = 'ro-key-7f3a9c21';
const REPORTS_ONLY = 'reports-key-51c0de88';
const OTHER_IP = 'ip-key-elsewhere-93b1';
const THIS_IP = 'ip-key-local-0a4e77';
const PERIOD = { start: '2026-01-02', end: '2026-01-02' };

let suite: Suite;
const clients: ApiClient[] = [];
const book = figureBook('emulator-auth');

beforeAll(async () => {
  suite = await openSuite({
    keys: [
      { key: READ_ONLY, methods: ['GET'] },
      { key: REPORTS_ONLY, scopes: ['reports'] },
      { key: OTHER_IP, ips: ['203.0.113.7'] },
      { key: THIS_IP, ips: ['127.0.0.1'] },
    ],
  });
});
afterAll(async () => {
  book.flush(inject('runId'));
  await Promise.all(clients.map((c) => c.close()));
  await suite?.close();
});

function client(apiKey: string): ApiClient {
  const c = createApiClient({
    baseUrl: suite.emulator.url,
    apiKey,
    auth: 'x-api-key',
    attempts: 3,
    baseBackoffMs: 5,
  });
  clients.push(c);
  return c;
}

/** The error a call rejects with (fails the test if it resolves). */
async function refusal(call: Promise<unknown>): Promise<ApiError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect(error).toHaveProperty('name', 'ApiHttpError');
  return error as ApiError;
}

let caseStarted = 0;
beforeEach(() => {
  caseStarted = Date.now();
});

function record(id: string, title: string, injected: string, refused: number, notes: string): void {
  book.add({
    id,
    title,
    injected,
    periodsExact: 0,
    periodsTotal: 0,
    duplicates: 0,
    retries: 0,
    failedAsExpected: refused,
    notes,
    ms: Date.now() - caseStarted,
  });
}

describe('emulator auth as the client meets it', () => {
  it('a read-only key can read but not create, update or delete, and nothing changes', async () => {
    const ro = client(READ_ONLY);
    const before = await ro.listCampaigns({ limit: 100, offset: 0 });
    expect(before.length).toBeGreaterThan(0);
    const first = before[0]!;
    const refused = [
      await refusal(ro.createCampaign({ name: 'nope', folder_id: 1, ad_format: 'display' })),
      await refusal(ro.deleteCampaign(first.campaign_id)),
    ];
    for (const e of refused) {
      expect(e.status).toBe(403);
      expect(e.attempts).toBe(1); // a 403 is never retried
      expect(e.message).toMatch(/may not use the method (POST|DELETE)/);
      expect(e.message).not.toContain(READ_ONLY);
    }
    expect(await ro.listCampaigns({ limit: 100, offset: 0 })).toEqual(before);
    record(
      'auth/read-only',
      'read-only key writes',
      'key limited to GET tries POST and DELETE',
      refused.length,
      '403 once each, catalogue unchanged',
    );
  });

  it('a reports-only key can pull reports but cannot list campaigns', async () => {
    const rep = client(REPORTS_ONLY);
    const e = await refusal(rep.listCampaigns());
    expect(e.status).toBe(403);
    expect(e.attempts).toBe(1);
    expect(e.message).toMatch(/lacks the scope "campaigns"/);
    const report = await rep.fetchReport({ dimensions: ['day'], period: PERIOD });
    expect((await report.body.bytes()).length).toBeGreaterThan(0);
    record(
      'auth/scope',
      'reports-only key lists campaigns',
      'key with scopes [reports] calls GET /campaigns',
      1,
      '403 naming the scope; its report pull works',
    );
  });

  it('an IP-restricted key is refused from another address and accepted from its own', async () => {
    const e = await refusal(client(OTHER_IP).fetchReport({ dimensions: ['day'], period: PERIOD }));
    expect(e.status).toBe(403);
    expect(e.message).toMatch(/may not be used from 127\.0\.0\.1/);
    const ok = await client(THIS_IP).fetchReport({ dimensions: ['day'], period: PERIOD });
    expect((await ok.body.bytes()).length).toBeGreaterThan(0);
    record(
      'auth/ip',
      'IP-restricted key from another address',
      'key allowed only from 203.0.113.7, used from 127.0.0.1',
      1,
      '403 naming the address; a key allowed from 127.0.0.1 works',
    );
  });

  it('an unknown key gets 401 with a hint, and the key is not echoed', async () => {
    const secret = 'sk-unknown-key-4d2f0b';
    const e = await refusal(client(secret).fetchReport({ dimensions: ['day'], period: PERIOD }));
    expect(e.status).toBe(401);
    expect(e.message).toMatch(/ADOPS_API_KEY/);
    expect(e.message).not.toContain(secret);
  });
});

describe('a pull with a refused key', () => {
  it('fails once, recorded with the 403 and its hint, while the other report loads exactly', async () => {
    const started = Date.now();
    const { db, env } = await suite.newCase();
    suite.emulator.resetStats();
    // The IP-restricted key pulls nothing; report_loads must say why.
    const p = await startPipeline({
      env: { ...env, ADOPS_API_KEY: OTHER_IP },
      pool: db.pool,
      jobs: suite.jobs,
    });
    try {
      const { pulls } = await enqueueBackfill(p.queues.pulls, suite.reports, PERIOD.start, PERIOD.end);
      const result = await waitForPulls(p.queues.pulls, pulls, { pollMs: 50 });
      expect(result.completed).toEqual([]);
      expect(result.failed).toHaveLength(2);
      for (const f of result.failed) {
        expect(f.reason).toMatch(/HTTP 403/);
        expect(f.reason).toMatch(/IP/);
        const load = await lastLoad(db.pool, f.pull.data.report, PERIOD.start);
        expect(load?.status).toBe('failed');
        expect(load?.error).toMatch(/HTTP 403/);
      }
      expect(reportRequests(suite.emulator)).toBe(2);
      const v = await verify(
        db.pool,
        TEST_SCHEMA,
        suite.reports,
        suite.truth,
        (_r, per) => per.start === PERIOD.start,
      );
      expect(v.exact).toBe(0);
      book.add({
        id: 'auth/pull-refused',
        title: 'pull with an IP-refused key',
        injected: 'worker runs with a key allowed only from another address',
        periodsExact: 0,
        periodsTotal: 2,
        duplicates: v.duplicates,
        retries: reportRequests(suite.emulator) - 2,
        failedAsExpected: result.failed.length,
        notes: 'both pulls failed at once with HTTP 403 and the hint; nothing loaded, nothing retried',
        ms: Date.now() - started,
      });
    } finally {
      await p.close();
      suite.logLines.push(...p.lines);
    }
  });
});
