// `adops dashboard --allow-writes` against the requests a hostile web page can make a browser send:
// a cross-site form or text/plain POST, and a DNS-rebound page (Host: rebind.evil.example) that is
// same-origin with itself. Real HTTP (node:http, which lets a test set Host as a browser would)
// against the real dashboard server over real Redis.
import { request, type IncomingHttpHeaders } from 'node:http';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startDashboard, type Dashboard } from '../../../src/cli/dashboard.js';
import { REPORT_QUEUE } from '../../../src/platform/queue/jobs.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';

const prefix = testPrefix();
let redis: Redis;
let queue: Queue;
let dashboard: Dashboard;
let port: number;
/** The dashboard's own origin, as a page it served names itself. */
let origin: string;

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: IncomingHttpHeaders;
}

/** One request to the dashboard as a browser would send it, Host included. */
function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
  to: Dashboard = dashboard,
): Promise<Answer> {
  const url = new URL(path, to.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method, headers, setHost: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const ADD = `/api/queues/${REPORT_QUEUE}/add`;
const PAUSE = `/api/queues/${REPORT_QUEUE}/pause`;
const JOB = JSON.stringify({ name: 'pull', data: { report: 'evil', periodStart: '2026-01-01' } });

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  queue = new Queue(REPORT_QUEUE, { connection: redis, prefix });
  dashboard = await startDashboard({
    redis: { kind: 'single', url: REDIS_URL },
    prefix,
    port: 0,
    host: '127.0.0.1',
    readOnly: false,
  });
  port = Number(new URL(dashboard.url).port);
  origin = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await dashboard?.close();
  await queue?.obliterate({ force: true });
  await queue?.close();
  redis?.disconnect();
});

beforeEach(async () => {
  await queue.resume();
  await queue.drain(true);
});

const jobs = () => queue.getJobCounts('waiting', 'delayed', 'prioritized');
const noJobs = { waiting: 0, delayed: 0, prioritized: 0 };

describe('adops dashboard --allow-writes against a hostile page', () => {
  it.each([
    ['text/plain', 'text/plain;charset=UTF-8', JOB],
    ['a form', 'application/x-www-form-urlencoded', 'name=pull&data=%7B%7D'],
    [
      'a multipart form',
      'multipart/form-data; boundary=x',
      '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\npull\r\n--x--\r\n',
    ],
  ])('refuses a cross-site POST of %s that would add a job', async (_what, type, body) => {
    const answer = await send(
      'POST',
      ADD,
      {
        host: `127.0.0.1:${port}`,
        origin: 'https://evil.example',
        referer: 'https://evil.example/page.html',
        'sec-fetch-site': 'cross-site',
        'content-type': type,
      },
      body,
    );
    expect(answer.status).toBe(403);
    expect(answer.body).toMatch(/cross-site/);
    expect(await jobs()).toEqual(noJobs);
  });

  it('refuses a cross-site write whose browser sends only Origin, or only Referer', async () => {
    const json = { host: `127.0.0.1:${port}`, 'content-type': 'application/json' };
    const byOrigin = await send('POST', ADD, { ...json, origin: 'https://evil.example' }, JOB);
    const byReferer = await send('POST', ADD, { ...json, referer: 'https://evil.example/x' }, JOB);
    const nullOrigin = await send('POST', ADD, { ...json, origin: 'null' }, JOB);
    expect([byOrigin.status, byReferer.status, nullOrigin.status]).toEqual([403, 403, 403]);
    // Another port of this machine is another origin (another local app), not the dashboard.
    const otherPort = await send('PUT', PAUSE, {
      host: `127.0.0.1:${port}`,
      origin: `http://127.0.0.1:${port + 1}`,
      'sec-fetch-site': 'same-site',
    });
    expect(otherPort.status).toBe(403);
    expect(await jobs()).toEqual(noJobs);
    expect(await queue.isPaused()).toBe(false);
  });

  it('refuses a DNS-rebound page: a Host that is not the dashboard is refused, for writes and for reads', async () => {
    // What the browser sends once rebind.evil.example resolves to 127.0.0.1: to the browser the
    // page and the dashboard are one origin, so Origin matches Host and Sec-Fetch-Site says so.
    const rebound = {
      host: `rebind.evil.example:${port}`,
      origin: `http://rebind.evil.example:${port}`,
      'sec-fetch-site': 'same-origin',
    };
    const pause = await send('PUT', PAUSE, rebound);
    expect(pause.status).toBe(403);
    expect(pause.body).toMatch(/Host rebind\.evil\.example/);
    expect(await queue.isPaused()).toBe(false);
    const add = await send('POST', ADD, { ...rebound, 'content-type': 'application/json' }, JOB);
    expect(add.status).toBe(403);
    expect(await jobs()).toEqual(noJobs);
    // Reads too: a rebound page could otherwise read every job's data.
    const read = await send('GET', '/api/queues', { host: `rebind.evil.example:${port}` });
    expect(read.status).toBe(403);
    expect(read.body).not.toContain(REPORT_QUEUE);
    const page = await send('GET', '/', { host: 'rebind.evil.example' });
    expect(page.status).toBe(403);
  });

  it("still takes the page's own writes, a same-origin JSON request, and a script's request without browser headers", async () => {
    const sameOrigin = {
      host: `127.0.0.1:${port}`,
      origin,
      referer: `${origin}/queue/${REPORT_QUEUE}`,
      'sec-fetch-site': 'same-origin',
    };
    const add = await send('POST', ADD, { ...sameOrigin, 'content-type': 'application/json' }, JOB);
    expect(add.status).toBe(200);
    expect((await jobs()).waiting).toBe(1);
    const pause = await send('PUT', PAUSE, sameOrigin);
    expect(pause.status).toBe(200);
    expect(await queue.isPaused()).toBe(true);
    // curl or a script: no Origin, Referer or Sec-Fetch-Site, so not a page a browser was sent to.
    const resume = await send('PUT', `/api/queues/${REPORT_QUEUE}/resume`, { host: `127.0.0.1:${port}` });
    expect(resume.status).toBe(200);
    expect(await queue.isPaused()).toBe(false);
    // The loopback names of this machine are the dashboard too.
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, 'localhost'])
      expect((await send('GET', '/api/queues', { host })).status, host).toBe(200);
  });

  it('refuses a same-origin write whose body is not JSON', async () => {
    const answer = await send(
      'POST',
      ADD,
      { host: `127.0.0.1:${port}`, origin, 'sec-fetch-site': 'same-origin', 'content-type': 'text/plain' },
      JOB,
    );
    expect(answer.status).toBe(415);
    expect(answer.body).toMatch(/application\/json/);
    expect(await jobs()).toEqual(noJobs);
  });
});
describe('adops dashboard Host names', () => {
  it('takes the names given with allowedHosts (a proxy or DNS name), and any IP address when bound to all interfaces', async () => {
    const wide = await startDashboard({
      redis: { kind: 'single', url: REDIS_URL },
      prefix,
      port: 0,
      host: '0.0.0.0',
      readOnly: true,
      allowedHosts: ['dash.example.com'],
    });
    try {
      const p = new URL(wide.url).port;
      const status = async (host: string) =>
        (await send('GET', '/api/queues', { host }, undefined, wide)).status;
      expect(await status('dash.example.com')).toBe(200);
      expect(await status(`DASH.example.com.:${p}`)).toBe(200);
      expect(await status(`10.20.30.40:${p}`)).toBe(200);
      expect(await status(`[::1]:${p}`)).toBe(200);
      expect(await status('rebind.evil.example')).toBe(403);
      expect(await status('dash.example.com.evil.example')).toBe(403);
    } finally {
      await wide.close();
    }
  });
});
