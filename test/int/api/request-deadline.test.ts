// A server that drips a body a byte at a time: undici's body timeout is the silence between
// chunks, so it never fires, and without an overall deadline the request holds its slot for ever.
// Each request (headers and body, streamed ones too) must end at ADOPS_HTTP_REQUEST_TIMEOUT_MS as
// a transient timeout, retried like the others; a body that arrives in time is untouched.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../../src/api/client.js';
import { ApiError } from '../../../src/api/errors.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { classifyFailure } from '../../../src/platform/retry/classify.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { createHarness, lastDays } from '../../helpers/pipeline.js';
import { until } from '../../helpers/wait.js';

const DAY = '2026-01-05';
// About 1.3 MB of JSON for the day with these dimensions: past STREAM_FROM, so it streams.
const BIG = {
  dimensions: ['day', 'campaign_id', 'creative_id', 'zone_id', 'country', 'device'] as const,
  period: { start: DAY, end: DAY },
};
const SMALL = { dimensions: ['day'] as const, period: { start: DAY, end: DAY } };
const STREAM_FROM = 200_000;

let emulator: RunningEmulator;
const clients: ApiClient[] = [];
beforeAll(async () => {
  emulator = await startEmulator({ seed: 5, cellsPerDay: 10_000, lateDataDays: 0 });
});
afterEach(async () => {
  emulator.setFaults({});
  for (const c of clients.splice(0)) await c.close();
});
afterAll(async () => {
  await emulator?.close();
});

function client(o: Partial<ApiClientOptions> = {}): ApiClient {
  const c = createApiClient({
    baseUrl: emulator.url,
    apiKey: 'demo-key',
    auth: 'bearer',
    compression: 'none',
    // The drip's bytes come every 100 ms: the idle timeout between chunks never fires.
    bodyTimeoutMs: 2_000,
    baseBackoffMs: 10,
    maxBackoffMs: 20,
    ...o,
  });
  clients.push(c);
  return c;
}

const drip = { dripRate: 1, dripIntervalMs: 100, paths: ['/v2/reports'] };

/** Reads a streamed report to its end, returning its size. */
async function drain(chunks: AsyncIterable<Buffer>): Promise<number> {
  let n = 0;
  for await (const c of chunks) n += c.length;
  return n;
}

describe('the overall deadline of a request', () => {
  it('ends a dripping body at ADOPS_HTTP_REQUEST_TIMEOUT_MS, as a timeout retried like the others', async () => {
    emulator.setFaults(drip);
    emulator.resetStats();
    const api = client({ requestTimeoutMs: 800, attempts: 2 });
    const started = Date.now();
    const error = await api.fetchReport(SMALL).then(
      () => undefined,
      (e: unknown) => e,
    );
    const took = Date.now() - started;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toHaveProperty('name', 'ApiTransportError');
    const e = error as ApiError;
    expect(e.code).toBe('REQUEST_DEADLINE');
    expect(e.message).toContain('800 ms');
    expect(e.message).toContain('ADOPS_HTTP_REQUEST_TIMEOUT_MS');
    expect(e.attempts).toBe(2);
    expect(classifyFailure(e).kind).toBe('transient');
    expect(emulator.stats().faults.drip).toBe(2);
    expect(took).toBeGreaterThanOrEqual(1_600);
    expect(took).toBeLessThan(6_000);
  }, 30_000);

  it('lets the retry of a dripped request load the body once the server answers in time', async () => {
    emulator.setFaults(drip);
    emulator.resetStats();
    const api = client({ requestTimeoutMs: 800, attempts: 3 });
    const pending = api.fetchReport(SMALL);
    // The first attempt is dripping: the server recovers for the next one.
    await until('a dripped answer', () => (emulator.stats().faults.drip ?? 0) > 0, 30_000, 20);
    emulator.setFaults({});
    const report = await pending;
    expect(report.attempts).toBe(2);
    expect(JSON.parse((await report.body.bytes()).toString())).toHaveProperty('totals');
  }, 30_000);

  it('ends a streamed body that starts dripping once it streams, with the same timeout', async () => {
    emulator.setFaults(drip);
    const api = client({ requestTimeoutMs: 1_500, attempts: 1 });
    const started = Date.now();
    const report = await api.fetchReport(BIG, { streamFromBytes: STREAM_FROM });
    expect(report.body.whole).toBe(false);
    const error = await drain(report.body).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toHaveProperty('name', 'ApiTransportError');
    expect((error as ApiError).code).toBe('REQUEST_DEADLINE');
    expect(classifyFailure(error).kind).toBe('transient');
    expect(Date.now() - started).toBeLessThan(6_000);
  }, 30_000);

  it('leaves a big body that arrives in time untouched, whole or streamed', async () => {
    const api = client({ requestTimeoutMs: 20_000 });
    const whole = await (await api.fetchReport(BIG)).body.bytes();
    expect(whole.length).toBeGreaterThan(1_000_000);
    const streamed = await api.fetchReport(BIG, { streamFromBytes: STREAM_FROM });
    expect(await drain(streamed.body)).toBe(whole.length);
  }, 30_000);
});

describe('a worker whose pull meets a dripping body', () => {
  it('records the deadline as the failure and loads the period on the retry', async () => {
    const h = await createHarness({
      env: {
        ADOPS_HTTP_REQUEST_TIMEOUT_MS: '1000',
        ADOPS_HTTP_BODY_TIMEOUT_MS: '5000',
        ADOPS_HTTP_ATTEMPTS: '1',
      },
    });
    try {
      h.emulator.setFaults(drip);
      await h.worker();
      const { to } = lastDays(1);
      const report = h.jobs.reports.filter((r) => r.name === 'daily_zone');
      const { pulls } = await enqueueBackfill(h.queues.pulls, report, to, to);
      const failedLoad = async () => {
        const { rows } = await h.db.pool.query<{ error: string }>(
          `SELECT error FROM "${TEST_SCHEMA}".report_loads WHERE status = 'failed'`,
        );
        return rows[0]?.error;
      };
      let error: string | undefined;
      await until('a failed load', async () => (error = await failedLoad()) !== undefined, 60_000);
      expect(error).toContain('ADOPS_HTTP_REQUEST_TIMEOUT_MS');
      h.emulator.setFaults({});
      const result = await waitForPulls(h.queues.pulls, pulls, { pollMs: 50 });
      expect(result.completed).toHaveLength(1);
    } finally {
      await h.close();
    }
  }, 60_000);
});
