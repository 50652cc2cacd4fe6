import { describe, expect, it } from 'vitest';
import type { ReportJob } from '../../../src/config/jobs.js';
import { createLogger } from '../../../src/log/logger.js';
import { ApiHttpError, ApiResponseError, RateLimitedError } from '../../../src/api/errors.js';
import { TerminalError } from '../../../src/retry/errors.js';
import { runPull, type Fetched, type PullDeps } from '../../../src/worker/pull.js';

const report: ReportJob = {
  kind: 'report',
  name: 'daily_zone',
  dimensions: ['day', 'zone_id'],
  period: 'day',
  lookbackDays: 0,
  schedule: undefined,
  file: 'x',
};
const data = { report: 'daily_zone', periodStart: '2026-01-01', periodEnd: '2026-01-01' };
const at = { apiMessage: undefined, method: 'GET', path: '/v2/reports', hint: 'h' };
const logger = createLogger({ level: 'silent', secrets: [] });
const fetched: Fetched = {
  body: Buffer.from('{}'),
  fetchedAt: new Date(),
  attempts: 1,
  bytes: 2,
  durationMs: 1,
};

function deps(over: Partial<PullDeps>): PullDeps & { recorded: unknown[] } {
  const recorded: unknown[] = [];
  return {
    recorded,
    reports: new Map([[report.name, report]]),
    fetchToken: async () => 7,
    fetch: async () => fetched,
    load: async () => ({ loadId: 1, status: 'loaded', rows: 3, reconciled: true, loadMs: 1 }),
    recordFailure: async (_r, _p, f) => {
      recorded.push(f);
    },
    ...over,
  };
}

describe('runPull', () => {
  it('loads what it fetched', async () => {
    const d = deps({});
    const out = await runPull(d, data, 'j1', logger);
    expect(out).toMatchObject({ ok: true, loaded: { rows: 3 } });
    expect(d.recorded).toEqual([]);
  });

  it('records a failed fetch with its attempts, so status and heal see it', async () => {
    const error = new ApiHttpError({ ...at, status: 500, attempts: 5, retryable: true });
    const d = deps({ fetch: async () => Promise.reject(error) });
    const out = await runPull(d, data, 'j1', logger);
    expect(out).toMatchObject({ ok: false, failure: { kind: 'transient' } });
    expect(d.recorded).toEqual([{ error, attempts: 5, jobId: 'j1', fetchToken: 7, account: 'default' }]);
  });

  it('archives the unusable body a failed fetch carries, never putting it in the error text', async () => {
    const body = Buffer.from('<html>maintenance</html>');
    const error = new ApiResponseError({
      ...at,
      status: 200,
      attempts: 2,
      retryable: true,
      problem: 'an HTML page',
      excerpt: '<html>',
      body,
    });
    const d = deps({ fetch: async () => Promise.reject(error) });
    expect(await runPull(d, data, 'j1', logger)).toMatchObject({ ok: false, failure: { kind: 'transient' } });
    expect(d.recorded).toEqual([
      { error, attempts: 2, jobId: 'j1', fetchToken: 7, account: 'default', body },
    ]);
  });

  it('does not record a 429 (a pause), a shutdown abort (ours), nor a load failure (the loader recorded it)', async () => {
    const limited = new RateLimitedError({
      ...at,
      status: 429,
      attempts: 1,
      retryable: true,
      retryAfterMs: 10,
    });
    const d1 = deps({ fetch: async () => Promise.reject(limited) });
    expect(await runPull(d1, data, 'j', logger)).toMatchObject({ failure: { kind: 'rate-limited' } });
    const d2 = deps({
      load: async () => Promise.reject(new TerminalError('bad')),
    });
    expect(await runPull(d2, data, 'j', logger)).toMatchObject({ failure: { kind: 'fatal' } });
    expect([...d1.recorded, ...d2.recorded]).toEqual([]);
  });

  it('fails a pull of a report no definition has, without calling the API', async () => {
    let called = false;
    const d = deps({ fetch: async () => ((called = true), fetched) });
    const out = await runPull(d, { ...data, report: 'gone' }, 'j', logger);
    expect(out).toMatchObject({
      ok: false,
      failure: { kind: 'fatal', reason: expect.stringContaining('"gone"') },
    });
    expect(called).toBe(false);
  });
  it('takes its fencing token before the request is sent, and hands it to the load', async () => {
    const order: string[] = [];
    let loadedToken: number | undefined;
    const d = deps({
      fetchToken: async () => (order.push('token'), 42),
      fetch: async () => (order.push('fetch'), fetched),
      load: async (_r, _p, f) => {
        loadedToken = f.fetchToken;
        return { loadId: 1, status: 'loaded', rows: 3, reconciled: true, loadMs: 1 };
      },
    });
    expect(await runPull(d, data, 'j', logger)).toMatchObject({ ok: true });
    expect(order).toEqual(['token', 'fetch']);
    expect(loadedToken).toBe(42);
  });

  it('does not fetch when no token can be taken (Postgres down), and retries', async () => {
    let called = false;
    const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const d = deps({
      fetchToken: async () => Promise.reject(down),
      fetch: async () => ((called = true), fetched),
    });
    expect(await runPull(d, data, 'j', logger)).toMatchObject({ ok: false, failure: { kind: 'transient' } });
    expect(called).toBe(false);
    expect(d.recorded).toEqual([]);
  });
});
