// The dashboard in a real headless Chromium, over real Redis: queue, counts, read-only actions.
import { mkdirSync } from 'node:fs';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, type Dashboard } from '../../../src/cli/dashboard.js';
import { REPORT_QUEUE } from '../../../src/platform/queue/jobs.js';
import { launchChromium, LOCAL_NETWORK_ACCESS_OFF } from '../../helpers/browser.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';

const SCREENSHOT = 'test-artifacts/dashboard.png';
/** An attacker's host name, resolved to 127.0.0.1 inside the test's browser. */
const REBOUND = 'rebind.evil.example';

const prefix = testPrefix();
let redis: Redis;
let queue: Queue;
let browser: Browser;
let readOnly: Dashboard;
const opened: Page[] = [];

/** Two completed pulls, one failed, then three waiting: distinct counts, so none can be misread. */
async function seed(): Promise<void> {
  await queue.add('pull', { report: 'daily_campaign', periodStart: '2026-01-01', periodEnd: '2026-01-01' });
  await queue.add('pull', { report: 'daily_campaign', periodStart: '2026-01-02', periodEnd: '2026-01-02' });
  await queue.add('fail', { report: 'daily_campaign', periodStart: '2026-01-03', periodEnd: '2026-01-03' });
  const worker = new Worker(
    REPORT_QUEUE,
    async (job) => {
      if (job.name === 'fail') throw new Error('emulated pull failure');
      return 'loaded';
    },
    { connection: redis.duplicate({ maxRetriesPerRequest: null }), prefix },
  );
  let finished = 0;
  await new Promise<void>((resolve) => {
    const count = () => ++finished === 3 && resolve();
    worker.on('completed', count);
    worker.on('failed', count);
  });
  await worker.close();
  await worker.disconnect();
  for (const day of ['2026-01-04', '2026-01-05', '2026-01-06']) {
    await queue.add('pull', { report: 'daily_campaign', periodStart: day, periodEnd: day });
  }
}

/** A page that may only talk to the dashboard on 127.0.0.1; anything else is refused at once. */
async function newPage(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
  await page.route(
    (url) => url.hostname !== '127.0.0.1',
    (route) => route.abort(),
  );
  opened.push(page);
  return page;
}

/** The status tab of the report queue, once it shows `count` (the UI polls, so wait). */
async function statusTab(page: Page, status: string, label: string, count: number): Promise<string> {
  const tab = page.locator(`a[href="/queue/${REPORT_QUEUE}?status=${status}"]`, {
    hasText: new RegExp(`^\\s*${label}\\s*${count}\\s*$`),
  });
  await tab.waitFor({ timeout: 15_000 });
  return tab.innerText();
}

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  queue = new Queue(REPORT_QUEUE, { connection: redis, prefix });
  await seed();
  readOnly = await startDashboard({
    redis: { kind: 'single', url: REDIS_URL },
    prefix,
    port: 0,
    host: '127.0.0.1',
    readOnly: true,
  });
  ({ browser } = await launchChromium());
});

afterAll(async () => {
  await Promise.all(opened.map((p) => p.close()));
  await browser?.close();
  await readOnly?.close();
  await queue?.obliterate({ force: true });
  await queue?.close();
  redis?.disconnect();
});

describe('adops dashboard in a browser', () => {
  it('shows the report-pulls queue with its waiting, completed and failed counts', async () => {
    expect(readOnly.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await newPage();
    await page.goto(readOnly.url);
    await page.getByRole('link', { name: REPORT_QUEUE, exact: true }).first().click();
    await page.waitForURL(`${readOnly.url}queue/${REPORT_QUEUE}`);

    expect(await statusTab(page, 'waiting', 'WAITING', 3)).toMatch(/WAITING\s*3/);
    expect(await statusTab(page, 'completed', 'COMPLETED', 2)).toMatch(/COMPLETED\s*2/);
    expect(await statusTab(page, 'failed', 'FAILED', 1)).toMatch(/FAILED\s*1/);
    await page.getByText('2026-01-06').first().waitFor();

    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: SCREENSHOT });
  });

  it('read-only: the page offers no retry or clean, and the API refuses a pause', async () => {
    const page = await newPage();
    await page.goto(`${readOnly.url}queue/${REPORT_QUEUE}?status=failed`);
    await page.getByText('emulated pull failure').first().waitFor();
    expect(await page.getByRole('button', { name: 'Retry all' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Clean all' }).count()).toBe(0);

    const response = await fetch(`${readOnly.url}api/queues/${REPORT_QUEUE}/pause`, { method: 'PUT' });
    expect(response.status).toBe(405);
    expect(await queue.isPaused()).toBe(false);
  });

  it('with writes allowed, the page offers retry and the API pauses the queue', async () => {
    const writable = await startDashboard({
      redis: { kind: 'single', url: REDIS_URL },
      prefix,
      port: 0,
      host: '127.0.0.1',
      readOnly: false,
    });
    try {
      const page = await newPage();
      await page.goto(`${writable.url}queue/${REPORT_QUEUE}?status=failed`);
      await page.getByRole('button', { name: 'Retry all' }).waitFor();

      // Sent by the page itself, with the browser's own Origin and Sec-Fetch-Site: the guard lets it by.
      const status = await page.evaluate(
        async (path) => (await fetch(path, { method: 'PUT' })).status,
        `/api/queues/${REPORT_QUEUE}/pause`,
      );
      expect(status).toBe(200);
      expect(await queue.isPaused()).toBe(true);
    } finally {
      await queue.resume();
      await writable.close();
    }
  });

  it('a DNS-rebound page in the browser can neither pause the queue nor read its jobs', async ({
    annotate,
  }) => {
    // rebind.evil.example resolves to this machine, as a DNS-rebinding attacker's name does once rebound.
    // Chromium 142 on also blocks a public page's requests to loopback (Local Network Access), before
    // they reach the dashboard; turned off here, so what is proven is the dashboard's own refusal, in
    // every browser (older ones and others have no such block).
    const rebinding = await launchChromium([
      `--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`,
      LOCAL_NETWORK_ACCESS_OFF,
    ]);
    await annotate(`browser: ${rebinding.description}`);
    const writable = await startDashboard({
      redis: { kind: 'single', url: REDIS_URL },
      prefix,
      port: 0,
      host: '127.0.0.1',
      readOnly: false,
    });
    const port = new URL(writable.url).port;
    const evil = `http://${REBOUND}:${port}/`;
    try {
      const page = await rebinding.browser.newPage();
      await page.route(
        (url) => url.hostname !== '127.0.0.1' && url.hostname !== REBOUND,
        (route) => route.abort(),
      );
      // The attacker's page, as first served by the attacker's server (before the name is rebound).
      await page.route(evil, (route) =>
        route.fulfill({ status: 200, contentType: 'text/html', body: '<title>cat pictures</title>' }),
      );
      await page.goto(evil);
      // Its script, same-origin with the dashboard now that the name leads to 127.0.0.1.
      const got = await page.evaluate(async (path) => {
        const pause = await fetch(`${path}/pause`, { method: 'PUT' });
        const read = await fetch('/api/queues');
        return { pause: pause.status, read: read.status, body: await read.text() };
      }, `/api/queues/${REPORT_QUEUE}`);
      expect(got).toMatchObject({ pause: 403, read: 403 });
      // The dashboard's own refusal, not a browser's or a proxy's.
      expect(got.body).toContain(`Host ${REBOUND}:${port} is not an address of this dashboard`);
      expect(got.body).not.toContain('daily_campaign');
      expect(await queue.isPaused()).toBe(false);
    } finally {
      await rebinding.browser.close();
      await writable.close();
    }
  });
});
