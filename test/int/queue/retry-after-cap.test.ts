// A server whose 429 asks for a pause of decades (Retry-After: 999999999, a date in 2100, or 10^23
// seconds written out): the pause is cut to ADOPS_MAX_RETRY_AFTER_SECONDS with a warning naming
// what the server asked, no timer overflows (Node fires a timer over 2^31-1 ms at once, with a
// TimeoutOverflowWarning, and a wait on it spins), and a worker holding such a pause still stops
// on one SIGTERM.
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClientFromConfig } from '../../../src/api/client.js';
import { ApiError } from '../../../src/api/errors.js';
import { enqueueBackfill } from '../../../src/schedule/enqueue.js';
import { enqueueEntitySync } from '../../../src/catalogue/enqueue.js';
import { spawnCli, type CliProcess } from '../../helpers/cli.js';
import { capturedLogger, createHarness, lastDays, type Harness } from '../../helpers/pipeline.js';
import { until } from '../../helpers/wait.js';

let h: Harness | undefined;
let proc: CliProcess | undefined;
afterEach(async () => {
  await proc?.kill();
  proc = undefined;
  await h?.close();
  h = undefined;
});

const CAP_MS = 15 * 60_000;
const FOREVER = ['999999999', 'Fri, 01 Jan 2100 00:00:00 GMT', '100000000000000000000000'];

/** Every API request answers 429 with `retryAfter`, until the test ends. */
function rateLimitAll(harness: Harness, retryAfter: string): void {
  harness.emulator.override({
    path: '/v2/',
    status: 429,
    body: JSON.stringify({ status: 429, error: 'rate_limited', message: 'slow down' }),
    headers: { 'content-type': 'application/json', 'retry-after': retryAfter },
    times: 100_000,
  });
}

describe('a Retry-After of decades', () => {
  it.each(FOREVER)('is cut to 15 minutes by the API client, with a warning naming %s', async (value) => {
    h = await createHarness({ env: { LOG_LEVEL: 'warn' } });
    rateLimitAll(h, value);
    const { logger, lines } = capturedLogger(h.config);
    const api = createApiClientFromConfig(h.config, logger, { on429: 'throw' });
    const { to } = lastDays(1);
    try {
      const error = await api.fetchReport({ dimensions: ['day'], period: { start: to, end: to } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toHaveProperty('name', 'RateLimitedError');
      const ms = (error as ApiError).retryAfterMs;
      expect(ms).toBeGreaterThanOrEqual(CAP_MS);
      expect(ms).toBeLessThanOrEqual(CAP_MS + 1_000);
    } finally {
      await api.close();
    }
    const warning = lines.find((l) => l.includes('Retry-After capped'));
    expect(warning).toBeDefined();
    expect(JSON.parse(warning as string)).toMatchObject({ retryAfter: value, cappedMs: CAP_MS });
  });

  it.each(FOREVER)(
    'holds a worker pulling and syncing at most 15 minutes, with no timer overflow, and one SIGTERM stops it: %s',
    async (value) => {
      h = await createHarness({ env: { ADOPS_SHUTDOWN_TIMEOUT_SECONDS: '2' } });
      rateLimitAll(h, value);
      proc = spawnCli(['worker', '--concurrency', '2'], { ...h.env, LOG_LEVEL: 'info' });
      await proc.waitFor(/"msg":"worker started"/);
      const { to } = lastDays(1);
      await enqueueBackfill(
        h.queues.pulls,
        h.jobs.reports.filter((r) => r.name === 'daily_zone'),
        to,
        to,
      );
      const paused = JSON.parse(await proc.waitFor(/API rate limit: pausing the pull queue/)) as {
        retryAfterMs: number;
      };
      expect(paused.retryAfterMs).toBeLessThanOrEqual(CAP_MS + 1_000);
      // Enqueued only now: a sync answered first would pause the shared limit, and the pull would
      // wait in it for the 15 minutes instead of meeting the 429 itself.
      const sync = await enqueueEntitySync(h.queues.syncs);
      // The sync runs, and its first request waits out the pause in the shared limiter.
      await until('the sync active', async () => (await h?.queues.syncs.getActiveCount()) === 1, 20_000);
      // An overflowing timer shows at once and then every millisecond: a moment of the pause is enough.
      await new Promise((r) => setTimeout(r, 500));
      proc.child.kill('SIGTERM');
      const exit = await Promise.race([
        proc.exited,
        new Promise((r) => setTimeout(r, 15_000, 'still running 15 s after SIGTERM')),
      ]);
      expect(exit).toBe(0);
      expect(proc.stderr()).not.toContain('TimeoutOverflowWarning');
      // Held by the pause at the shutdown deadline, the sync went back to wait, no attempt spent.
      expect(proc.stderr()).toContain('entity sync cut short by shutdown');
      const job = await h.queues.syncs.getJob(sync.jobId);
      expect(await job?.getState()).toBe('waiting');
      expect(job?.attemptsMade).toBe(0);
    },
    60_000,
  );
});
