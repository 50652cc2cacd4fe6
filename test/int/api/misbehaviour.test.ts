// The client against small real HTTP servers that misbehave in one specific way each.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../helpers/api-client.js';
import { ApiError } from '../../../src/api/errors.js';
import { ReportFormatError } from '../../../src/flatten/errors.js';
import { parseReport } from '../../../src/flatten/parse.js';

const KEY = 'test-key-0123456789';
const QUERY = { dimensions: ['day'] as const, period: { start: '2026-01-01', end: '2026-01-01' } };
const REPORT = '{"items":{},"totals":{}}';

type Step = (req: IncomingMessage, res: ServerResponse) => void;
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  at: number;
}

/** A server answering request n with steps[n] (the last step repeats), recording every request. */
async function serve(steps: Step[]): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, at: Date.now() });
    const step = steps[Math.min(seen.length - 1, steps.length - 1)] as Step;
    req.resume();
    req.on('end', () => step(req, res));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  servers.push(server);
  return { url: `http://127.0.0.1:${port}/v2`, seen, server };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Step =>
  (_req, res) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(text);
  };
const drop: Step = (req) => req.socket.destroy();
const truncated: Step = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
  res.write('{"items":{"2026-01-01"');
  setImmediate(() => req.socket.destroy());
};
const silent: Step = () => {};

const servers: Server[] = [];
const clients: ApiClient[] = [];
function client(url: string, o: Partial<ApiClientOptions> = {}): ApiClient {
  const c = createApiClient({
    baseUrl: url,
    apiKey: KEY,
    auth: 'bearer',
    baseBackoffMs: 1,
    maxBackoffMs: 5,
    ...o,
  });
  clients.push(c);
  return c;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

describe('API client over real HTTP', () => {
  it('sends the key in the configured header form under the base path', async () => {
    const s = await serve([json(200, { items: [] })]);
    await client(s.url).listCampaigns({ limit: 5 });
    await client(s.url, { auth: 'x-api-key' }).listCampaigns();
    expect(s.seen[0]?.url).toBe('/v2/campaigns?limit=5');
    expect(s.seen[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(s.seen[0]?.headers['x-api-key']).toBeUndefined();
    expect(s.seen[1]?.headers['x-api-key']).toBe(KEY);
    expect(s.seen[1]?.headers.authorization).toBeUndefined();
  });

  it('retries 500, 502, 503 and 504 until a success, reporting each attempt', async () => {
    const s = await serve([json(500, {}), json(502, {}), json(503, {}), json(504, {}), json(200, REPORT)]);
    const attempts: Array<number | string | undefined> = [];
    let slots = 0;
    const raw = await client(s.url, {
      onAttempt: (a) => attempts.push(a.status),
      beforeRequest: async () => void slots++,
    }).fetchReport(QUERY);
    expect(slots).toBe(5);
    expect((await raw.body.bytes()).toString()).toBe(REPORT);
    expect(raw.attempts).toBe(5);
    expect(attempts).toEqual([500, 502, 503, 504, 200]);
    expect(s.seen[0]?.url).toBe('/v2/reports?date_from=2026-01-01&date_until=2026-01-01&dimensions=day');
  });

  it('retries dropped connections, truncated bodies and header timeouts', async () => {
    const s = await serve([drop, truncated, silent, json(200, REPORT)]);
    const raw = await client(s.url, { headersTimeoutMs: 200 }).fetchReport(QUERY);
    expect(raw.attempts).toBe(4);
    expect(s.seen.length).toBe(4);
  });

  it('gives up after the configured attempts with a retryable typed error', async () => {
    const s = await serve([json(503, { message: 'maintenance' })]);
    const error = await client(s.url, { attempts: 3 })
      .getCampaign(7)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toHaveProperty('name', 'ApiHttpError');
    expect(error).toMatchObject({
      status: 503,
      apiMessage: 'maintenance',
      method: 'GET',
      path: '/v2/campaigns/7',
      attempts: 3,
      retryable: true,
    });
    expect(s.seen.length).toBe(3);
  });

  it('gives up on connection failures with a transport error naming the code', async () => {
    const s = await serve([drop]);
    const error = await client(s.url, { attempts: 2 })
      .fetchReport(QUERY)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toHaveProperty('name', 'ApiTransportError');
    expect((error as ApiError).retryable).toBe(true);
    expect((error as ApiError).attempts).toBe(2);
    expect((error as Error).message).toContain('ADOPS_BASE_URL');
  });

  it('never retries a POST that may have reached the server', async () => {
    const s = await serve([json(500, {})]);
    const error = await client(s.url)
      .createCampaign({ name: 'x', folder_id: 1, ad_format: 'display' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 500, attempts: 1, retryable: false });
    expect(s.seen.length).toBe(1);
  });

  for (const status of [400, 401, 403, 404, 409]) {
    it(`does not retry ${status}`, async () => {
      const s = await serve([json(status, { message: 'no' })]);
      const error = await client(s.url)
        .fetchReport(QUERY)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toHaveProperty('name', 'ApiHttpError');
      expect(error).toMatchObject({ status, attempts: 1, retryable: false, apiMessage: 'no' });
      expect(s.seen.length).toBe(1);
    });
  }

  it('raises RateLimitedError at once when told to throw on 429', async () => {
    const s = await serve([json(429, {}, { 'retry-after': '7' })]);
    const error = await client(s.url, { on429: 'throw' })
      .fetchReport(QUERY)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toHaveProperty('name', 'RateLimitedError');
    expect(error).toMatchObject({ retryAfterMs: 7025, retryable: true, attempts: 1 });
  });

  it('waits out a Retry-After given as an HTTP date', async () => {
    const s = await serve([
      (_req, res) => json(429, {}, { 'retry-after': new Date(Date.now() + 1500).toUTCString() })(_req, res),
      json(200, REPORT),
    ]);
    const slept: number[] = [];
    await client(s.url, { sleep: async (ms) => void slept.push(ms) }).fetchReport(QUERY);
    expect(slept.length).toBe(1);
    // An HTTP date has whole seconds: the wait is 0.5 to 1.5 s, plus a 25 ms margin.
    expect(slept[0]).toBeGreaterThan(400);
    expect(slept[0]).toBeLessThanOrEqual(1525);
  });

  it('retries a 200 HTML page, and fails for good with a redacted excerpt when it repeats', async () => {
    const s = await serve([json(200, `<html>proxy login for ${KEY}</html>`)]);
    const error = await client(s.url)
      .listCampaigns()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toHaveProperty('name', 'ApiResponseError');
    // The same page twice in a row: the second answer proves it is not going away.
    expect(s.seen.length).toBe(2);
    expect(error).toMatchObject({ retryable: false, attempts: 2 });
    expect((error as Error).message).toContain('an HTML page; the same body twice in a row');
    expect((error as ApiError).excerpt).toBe('<html>proxy login for [REDACTED]</html>');
    expect((error as Error).message).not.toContain(KEY);
    // The body rides along for the archive, the key redacted, and never in what a logger would print.
    expect((error as ApiError).body?.toString()).toBe('<html>proxy login for [REDACTED]</html>');
    expect(JSON.stringify(error)).not.toContain(KEY);
    expect(Object.keys(error as object)).not.toContain('body');
    // A report request meets the same page the same way: it never reaches the parser.
    const report = await client(s.url)
      .fetchReport(QUERY)
      .catch((e: unknown) => e);
    expect(report).toMatchObject({ name: 'ApiResponseError', retryable: false, attempts: 2 });
    // The parser, given such a body anyway, says where it breaks without quoting it.
    const parseError = (() => {
      try {
        parseReport(Buffer.from(`<html>proxy login for ${KEY}</html>`), ['day']);
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(parseError).toBeInstanceOf(ReportFormatError);
    expect(parseError?.message).toMatch(/not valid JSON: unexpected "<" at byte 0/);
    expect(parseError?.message).not.toContain(KEY);
  });

  it('rejects list and entity bodies of the wrong shape, but not a page for one item without a readable id', async () => {
    const s = await serve([
      json(200, { items: [{ name: 'no id' }, { campaign_id: '7' }] }),
      json(200, { data: [] }),
      json(200, [1]),
      json(201, {}),
    ]);
    const c = client(s.url);
    // The caller (the catalogue sync) skips and reports such an item; the rest of the page counts.
    expect(await c.listCampaigns()).toEqual([{ name: 'no id' }, { campaign_id: '7' }]);
    await expect(c.listCampaigns()).rejects.toThrow(/expected an object with an items array/);
    await expect(c.getCreative(1, 2)).rejects.toMatchObject({ name: 'ApiResponseError' });
    await expect(c.createCreative(1, { name: 'a', ad_type: 'image' })).rejects.toMatchObject({
      name: 'ApiResponseError',
    });
  });

  it('stops reading a body larger than maxBodyBytes, without retrying', async () => {
    const s = await serve([json(200, `{"items":{},"pad":"${'x'.repeat(100_000)}"}`)]);
    const error = await client(s.url, { maxBodyBytes: 50_000 })
      .fetchReport(QUERY)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toHaveProperty('name', 'ApiResponseError');
    expect(error).toMatchObject({ retryable: false, attempts: 1 });
    expect((error as Error).message).toContain('larger than 50000 bytes');
    expect(s.seen.length).toBe(1);
  });

  it('reads or discards every error body, so one connection serves many failed requests', async () => {
    const big = { message: 'x'.repeat(200_000) };
    const s = await serve([json(404, big)]);
    const c = client(s.url, { connections: 1 });
    for (let i = 0; i < 30; i++)
      await expect(c.getCampaign(i)).rejects.toMatchObject({ name: 'ApiHttpError' });
    expect(s.seen.length).toBe(30);
  });

  it('stops a report request at once when its signal aborts, as a retryable ABORTED error', async () => {
    const s = await serve([silent]);
    const controller = new AbortController();
    const pending = client(s.url)
      .fetchReport(QUERY, { signal: controller.signal })
      .catch((e: unknown) => e);
    await once(s.server, 'request');
    controller.abort();
    const error = await pending;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toHaveProperty('name', 'ApiTransportError');
    expect(error).toMatchObject({ code: 'ABORTED', retryable: true, attempts: 1 });
  });

  it('stops waiting between attempts when the signal aborts', async () => {
    const s = await serve([json(503, {})]);
    const controller = new AbortController();
    // A 60 s backoff: only an early wake-up lets this finish within the test timeout.
    const started = Date.now();
    const error = await client(s.url, {
      baseBackoffMs: 60_000,
      maxBackoffMs: 60_000,
      random: () => 1,
      onAttempt: () => setImmediate(() => controller.abort()),
    })
      .fetchReport(QUERY, { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ABORTED', attempts: 1 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(s.seen.length).toBe(1);
  });

  it('shares one keep-alive pool between clients of the same origin until the last one closes', async () => {
    const s = await serve([json(200, { items: [] })]);
    let sockets = 0;
    s.server.on('connection', () => sockets++);
    const a = createApiClient({ baseUrl: s.url, apiKey: KEY, auth: 'bearer', connections: 1 });
    const b = createApiClient({ baseUrl: s.url, apiKey: KEY, auth: 'x-api-key', connections: 1 });
    await a.listCampaigns();
    await b.listCampaigns();
    expect(sockets).toBe(1);
    await a.close();
    await b.listCampaigns();
    expect(s.seen[2]?.headers['x-api-key']).toBe(KEY);
    await b.close();
    const c = createApiClient({ baseUrl: s.url, apiKey: KEY, auth: 'bearer', connections: 1 });
    await c.listCampaigns();
    expect(sockets).toBe(2);
    await c.close();
  });

  it('drives every catalogue endpoint with the spec methods and paths', async () => {
    const s = await serve([
      json(201, { campaign_id: 9 }),
      (_q, res) => res.writeHead(204).end(),
      json(201, { creative_id: 4 }),
      json(200, { creative_id: 4, campaign_id: 9 }),
      (_q, res) => res.writeHead(204).end(),
    ]);
    const c = client(s.url);
    expect(await c.createCampaign({ name: 'n', folder_id: 1, ad_format: 'display' })).toEqual({
      campaign_id: 9,
    });
    await c.updateCampaign(9, { name: 'n', is_active: true, folder_id: 1, tier: 1, weight: 1, zone_ids: [] });
    await c.createCreative(9, { name: 'c', ad_type: 'image' });
    await c.getCreative(9, 4);
    await c.updateCreative(9, 4, { name: 'c', is_active: false, data: {} });
    await c.deleteCreative(9, 4);
    await c.deleteCampaign(9);
    // The last answer (204, empty) repeats: an empty list body is malformed, retried once, then final.
    await c.listCreatives(9, { offset: 3 }).catch(() => undefined);
    expect(s.seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /v2/campaigns',
      'PUT /v2/campaigns/9',
      'POST /v2/campaigns/9/creatives',
      'GET /v2/campaigns/9/creatives/4',
      'PUT /v2/campaigns/9/creatives/4',
      'DELETE /v2/campaigns/9/creatives/4',
      'DELETE /v2/campaigns/9',
      'GET /v2/campaigns/9/creatives?offset=3',
      'GET /v2/campaigns/9/creatives?offset=3',
    ]);
    expect(s.seen[0]?.headers['content-type']).toBe('application/json');
  });
});
