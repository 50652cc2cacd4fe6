// Success bodies over real HTTP against the emulator: compressed ones decoded while they stream,
// malformed ones (an HTML page, a truncated JSON, a stream that does not decompress) retried like
// a 5xx, and failed for good only when the same malformed body comes twice in a row.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../helpers/api-client.js';
import { ApiError } from '../../../src/api/errors.js';
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.js';
import { parseReport } from '../../../src/flatten/parse.js';

const QUERY = { dimensions: ['day'] as const, period: { start: '2026-01-01', end: '2026-01-01' } };
const HTML = '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>';
const JSON_TYPE = { 'content-type': 'application/json' };

let emu: RunningEmulator;
const clients: ApiClient[] = [];

beforeAll(async () => {
  emu = await startEmulator({ seed: 3, cellsPerDay: 20, lateDataDays: 0 });
});
afterAll(async () => {
  await emu.close();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  emu.resetStats();
});

function client(o: Partial<ApiClientOptions> = {}): ApiClient {
  const c = createApiClient({
    baseUrl: emu.url,
    apiKey: 'demo-key',
    auth: 'bearer',
    baseBackoffMs: 1,
    maxBackoffMs: 5,
    ...o,
  });
  clients.push(c);
  return c;
}

const reportRequests = () => emu.stats().requests['GET /v2/reports'] ?? 0;

/** The emulator's own answer to QUERY, as a reference body. */
async function goodReport(): Promise<Buffer> {
  const body = await (await client().fetchReport(QUERY)).body.bytes();
  emu.resetStats();
  return body;
}

async function failure(p: Promise<unknown>): Promise<ApiError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect(error).toHaveProperty('name', 'ApiResponseError');
  return error as ApiError;
}

describe('compressed answers', () => {
  it('are decoded while they stream, and the body returned is the JSON', async () => {
    const good = await goodReport();
    emu.override({
      path: '/v2/reports',
      status: 200,
      body: gzipSync(good),
      headers: { ...JSON_TYPE, 'content-encoding': 'gzip' },
    });
    const raw = await client().fetchReport(QUERY);
    const body = await raw.body.bytes();
    expect(body.equals(good)).toBe(true);
    expect(raw.body.receivedBytes).toBe(good.length);
    expect(parseReport(body, QUERY.dimensions).reconciliation.ok).toBe(true);
  });

  it('from a server that gzips on request (the gzip quirk) read the same report as uncompressed', async () => {
    const plain = await goodReport();
    emu.setQuirks({ gzip: true });
    try {
      const wire = await fetch(
        `${emu.url}/reports?date_from=2026-01-01&date_until=2026-01-01&dimensions=day`,
        {
          headers: { authorization: 'Bearer demo-key', 'accept-encoding': 'gzip' },
        },
      );
      await wire.arrayBuffer();
      expect(wire.headers.get('content-encoding')).toBe('gzip');
      expect((await (await client().fetchReport(QUERY)).body.bytes()).equals(plain)).toBe(true);
      expect(
        (await (await client({ compression: 'none' }).fetchReport(QUERY)).body.bytes()).equals(plain),
      ).toBe(true);
    } finally {
      emu.setQuirks({});
    }
  });

  it('count against the body cap once decompressed, and are not retried then', async () => {
    const huge = Buffer.from(`{"items":{},"pad":"${'x'.repeat(2_000_000)}"}`);
    emu.override({
      path: '/v2/reports',
      status: 200,
      body: gzipSync(huge),
      headers: { ...JSON_TYPE, 'content-encoding': 'gzip' },
    });
    const error = await failure(client({ maxBodyBytes: 100_000 }).fetchReport(QUERY));
    expect(error).toMatchObject({ retryable: false, attempts: 1 });
    expect(error.message).toContain('body larger than 100000 bytes');
    expect(reportRequests()).toBe(1);
  });

  it('in a coding we cannot decode fail at once, naming the coding and the setting', async () => {
    emu.override({
      path: '/v2/reports',
      status: 200,
      body: 'opaque',
      headers: { ...JSON_TYPE, 'content-encoding': 'zstd' },
    });
    const error = await failure(client().fetchReport(QUERY));
    expect(error).toMatchObject({ retryable: false, attempts: 1 });
    expect(error.message).toContain('Content-Encoding "zstd" is not one we decode');
    expect(error.message).toContain('ADOPS_HTTP_COMPRESSION=none');
  });

  it('that do not decompress are malformed: retried, and the next answer used', async () => {
    const good = await goodReport();
    const zipped = gzipSync(good);
    emu.override({
      path: '/v2/reports',
      status: 200,
      body: Buffer.concat([zipped.subarray(0, 30), Buffer.from('not deflate at all'), zipped.subarray(30)]),
      headers: { ...JSON_TYPE, 'content-encoding': 'gzip' },
    });
    const raw = await client().fetchReport(QUERY);
    expect(raw.attempts).toBe(2);
    expect((await raw.body.bytes()).equals(good)).toBe(true);
  });
});

describe('Accept-Encoding', () => {
  let server: Server;
  let url: string;
  const headers: IncomingHttpHeaders[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      headers.push(req.headers);
      req.resume();
      res.writeHead(200, JSON_TYPE).end('{"items":{},"totals":{}}');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('asks for gzip by default, and for identity when compression is off', async () => {
    await client({ baseUrl: url }).fetchReport(QUERY);
    await client({ baseUrl: url, compression: 'none' }).fetchReport(QUERY);
    expect(headers.map((h) => h['accept-encoding'])).toEqual(['gzip', 'identity']);
  });
});

describe('malformed success bodies', () => {
  const kinds: Array<[string, string | Buffer, Record<string, string>]> = [
    ['an HTML page with 200', HTML, { 'content-type': 'text/html' }],
    ['a truncated JSON', '{"items":{"2026-01-01":{"ad_requests":1', JSON_TYPE],
    ['an empty body', '', JSON_TYPE],
    ['plain text', 'upstream connect error', { 'content-type': 'text/plain' }],
  ];
  for (const [what, body, headers] of kinds) {
    it(`retries ${what} like a 5xx, and uses the next answer`, async () => {
      const good = await goodReport();
      emu.override({ path: '/v2/reports', status: 200, body, headers });
      const slept: number[] = [];
      const raw = await client({ sleep: async (ms) => void slept.push(ms) }).fetchReport(QUERY);
      expect(raw.attempts).toBe(2);
      expect((await raw.body.bytes()).equals(good)).toBe(true);
      expect(slept).toHaveLength(1);
      expect(reportRequests()).toBe(2);
    });
  }

  it('fails for good when the same malformed body comes twice in a row, keeping the body', async () => {
    emu.override({
      path: '/v2/reports',
      status: 200,
      body: HTML,
      headers: { 'content-type': 'text/html' },
      // Exactly the answers the client must ask for: an override left unused would leak into the next test.
      times: 2,
    });
    const error = await failure(client({ attempts: 5 }).fetchReport(QUERY));
    expect(error).toMatchObject({ retryable: false, attempts: 2, status: 200 });
    expect(error.message).toContain('an HTML page; the same body twice in a row');
    expect(error.body?.toString()).toBe(HTML);
    expect(reportRequests()).toBe(2);
  });

  it('stays retryable when the malformed bodies differ until the attempts run out', async () => {
    for (let i = 0; i < 3; i++)
      emu.override({ path: '/v2/reports', status: 200, body: `<html>error ${i}</html>`, headers: {} });
    const error = await failure(client({ attempts: 3 }).fetchReport(QUERY));
    expect(error).toMatchObject({ retryable: true, attempts: 3 });
    expect(error.body?.toString()).toBe('<html>error 2</html>');
    expect(reportRequests()).toBe(3);
  });

  it('counts an answer of another kind between two equal ones as breaking the run', async () => {
    emu.override({ path: '/v2/reports', status: 200, body: HTML, headers: {} });
    emu.override({ path: '/v2/reports', status: 503, body: '{"message":"busy"}', headers: JSON_TYPE });
    emu.override({ path: '/v2/reports', status: 200, body: HTML, headers: {} });
    const raw = await client().fetchReport(QUERY);
    expect(raw.attempts).toBe(4);
  });

  it('retries a catalogue list answered with an HTML page', async () => {
    emu.override({
      path: '/v2/campaigns',
      status: 200,
      body: HTML,
      headers: { 'content-type': 'text/html' },
    });
    const campaigns = await client().listCampaigns({ limit: 2 });
    expect(campaigns).toHaveLength(2);
    expect(emu.stats().requests['GET /v2/campaigns']).toBe(2);
  });

  it('never repeats a POST whose 2xx body is malformed: it may have created the campaign', async () => {
    emu.override({ path: '/v2/campaigns', status: 201, body: HTML, headers: {} });
    const error = await failure(client().createCampaign({ name: 'x', folder_id: 1, ad_format: 'display' }));
    expect(error).toMatchObject({ retryable: false, attempts: 1 });
    expect(emu.stats().requests['POST /v2/campaigns']).toBe(1);
  });
});
