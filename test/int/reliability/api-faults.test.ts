// API faults against the whole pipeline (emulator -> API client -> BullMQ worker -> loader):
// transient faults must end loaded exactly, permanent ones as failed pulls with their reason.
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import type { FaultOptions, OverrideOptions } from '../../../src/emulator/index.js';
import {
  enqueueBackfill,
  enqueuePulls,
  readHealPlan,
  waitForPulls,
  type FailedPull,
} from '../../../src/schedule/enqueue.js';
import { figureBook } from '../../helpers/reliability/figures.js';
import { startPipeline } from '../../helpers/pipeline.js';
import {
  EACH_PERIOD,
  FROM,
  HEAL_DAYS,
  HEAL_NOW,
  lastLoad,
  openSuite,
  reportRequests,
  TO,
  type Suite,
} from '../../helpers/reliability/suite.js';
import { verify, type Verdict } from '../../helpers/reliability/truth.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';

let suite: Suite;
const book = figureBook('api-faults');

beforeAll(async () => {
  suite = await openSuite();
});
afterAll(async () => {
  book.flush(inject('runId'));
  await suite?.close();
});

interface Run {
  verdict: Verdict;
  failed: readonly FailedPull[];
  /** The latest report_loads row of each failed pull, before any heal. */
  failedLoads: Array<Awaited<ReturnType<typeof lastLoad>>>;
  completed: number;
  requests: number;
  faults: Record<string, number>;
  ms: number;
  /** The verdict after a fault-free heal of what failed (only when asked). */
  healed?: Verdict;
}

/** Backfills FROM..TO through a worker while the emulator injects `faults`, then compares with the truth. */
async function backfillUnder(
  faults: FaultOptions,
  o: {
    overrides?: OverrideOptions[];
    client?: Record<string, number>;
    healAfter?: boolean;
    concurrency?: number;
  } = {},
): Promise<Run> {
  const { db, env } = await suite.newCase();
  const p = await startPipeline({
    env,
    pool: db.pool,
    jobs: suite.jobs,
    client: o.client ?? {},
    concurrency: o.concurrency ?? 2,
  });
  try {
    suite.emulator.resetStats();
    suite.emulator.setFaults(faults);
    for (const ov of o.overrides ?? []) suite.emulator.override(ov);
    const started = Date.now();
    const { pulls } = await enqueueBackfill(
      p.queues.pulls,
      suite.reports,
      FROM,
      TO,
      'newest-first',
      EACH_PERIOD,
    );
    const result = await waitForPulls(p.queues.pulls, pulls, { pollMs: 50 });
    const ms = Date.now() - started;
    const requests = reportRequests(suite.emulator);
    const faultsSeen = suite.emulator.stats().faults;
    suite.emulator.setFaults({});
    const verdict = await verify(db.pool, TEST_SCHEMA, suite.reports, suite.truth, (r, period) =>
      result.completed.some((c) => c.data.report === r && c.data.periodStart === period.start),
    );
    // The record of each failed pull, read before any heal replaces it.
    const failedLoads = await Promise.all(
      result.failed.map((f) => lastLoad(db.pool, f.pull.data.report, f.pull.data.periodStart)),
    );
    let healed: Verdict | undefined;
    if (o.healAfter === true) {
      const plan = await readHealPlan(
        warehouseOf(db.pool, TEST_SCHEMA),
        suite.reports,
        HEAL_DAYS,
        HEAL_NOW,
        EACH_PERIOD,
      );
      const heal = await enqueuePulls(p.queues.pulls, plan);
      const again = await waitForPulls(p.queues.pulls, heal, { pollMs: 50 });
      expect(again.failed).toEqual([]);
      healed = await verify(db.pool, TEST_SCHEMA, suite.reports, suite.truth);
    }
    return {
      verdict,
      failed: result.failed,
      failedLoads,
      completed: result.completed.length,
      requests,
      faults: faultsSeen,
      ms,
      ...(healed === undefined ? {} : { healed }),
    };
  } finally {
    suite.emulator.setFaults({});
    await p.close();
    suite.logLines.push(...p.lines);
  }
}

const TOTAL = 12; // 6 days x 2 reports

/** Asserts a transient-only run ended with every period loaded exactly, and records its figures. */
function expectExact(run: Run, id: string, title: string, injected: string, faultKind: string): void {
  expect(run.failed).toEqual([]);
  expect(run.verdict.problems).toEqual([]);
  expect(run.verdict).toMatchObject({ exact: TOTAL, total: TOTAL, duplicates: 0 });
  // The faults really happened: a case whose injection misses proves nothing.
  expect(run.faults[faultKind] ?? 0).toBeGreaterThan(0);
  book.add({
    id,
    title,
    injected,
    periodsExact: run.verdict.exact,
    periodsTotal: run.verdict.total,
    duplicates: run.verdict.duplicates,
    retries: run.requests - TOTAL,
    failedAsExpected: 0,
    notes: `${run.faults[faultKind]} ${faultKind} faults in ${run.requests} report requests`,
    ms: run.ms,
  });
}

describe('transient API faults end with every period loaded exactly', () => {
  it('30% of report requests answered 500', async () => {
    const run = await backfillUnder({ failRate: 0.3, seed: 3 });
    expectExact(run, 'faults/500', '30% HTTP 500', 'failRate 0.3 on GET /v2/reports', 'fail');
  });

  it('30% of connections dropped without a response', async () => {
    const run = await backfillUnder({ dropRate: 0.3, seed: 4 });
    expectExact(
      run,
      'faults/drop',
      'dropped connections',
      'dropRate 0.3 (socket destroyed, no response)',
      'drop',
    );
  });

  it('429 bursts with Retry-After pause the queue and spend no attempt', async () => {
    const run = await backfillUnder({ rateLimitRate: 0.25, retryAfterSeconds: 1, seed: 5 });
    expectExact(
      run,
      'faults/429',
      '429 with Retry-After',
      'rateLimitRate 0.25, Retry-After: 1',
      'rate_limit',
    );
    // Each 429 pauses the whole queue for Retry-After: the run cannot be faster than one pause.
    expect(run.ms).toBeGreaterThanOrEqual(1_000);
  });

  it('latency spikes beyond the client timeout', async () => {
    const run = await backfillUnder(
      { latencyMs: [0, 3000], seed: 6 },
      // undici checks timeouts on a coarse timer (about 0.5-1 s late), so the timeout is 1 s, not less,
      // and the spikes reach 3 s so that a third of the requests outlast it however late the timer fires.
      { client: { headersTimeoutMs: 1000 }, concurrency: 4 },
    );
    expectExact(
      run,
      'faults/latency',
      'latency beyond the timeout',
      'latency uniform 0-3000 ms, headers timeout 1000 ms',
      'latency',
    );
    // A third of the requests last over 2 s, beyond any firing of the timeout: there were retries.
    expect(run.requests).toBeGreaterThan(TOTAL);
  });
});

describe('permanent API faults end as failed pulls with their reason', () => {
  it('malformed bodies are retried and fail a pull only when the same one comes twice in a row (raw body kept); heal completes the rest', async () => {
    const run = await backfillUnder({ malformedRate: 0.2, truncateRate: 0.3, seed: 2 }, { healAfter: true });
    expect(run.faults.truncate ?? 0).toBeGreaterThan(0);
    expect(run.faults.malformed ?? 0).toBeGreaterThan(0);
    // The emulator's broken body is always the same bytes: it fails a pull only when it comes
    // twice in a row, so most of them were retried away.
    expect(run.failed.length).toBeLessThan(run.faults.malformed ?? 0);
    expect(run.failed.length + run.completed).toBe(TOTAL);
    // Every completed pull is exact; every failed one says why and kept its body.
    expect(run.verdict).toMatchObject({ exact: run.completed, total: run.completed, duplicates: 0 });
    for (const [i, f] of run.failed.entries()) {
      expect(f.reason).toMatch(/the same body twice in a row/);
      const load = run.failedLoads[i];
      expect(load).toMatchObject({ status: 'failed', raw: true });
      expect(load?.error).toMatch(/ApiResponseError: .*the same body twice in a row/);
    }
    expect(run.healed).toMatchObject({ exact: TOTAL, total: TOTAL, duplicates: 0 });
    book.add({
      id: 'faults/malformed',
      title: 'malformed and truncated bodies',
      injected:
        'malformedRate 0.2 (200 with broken JSON, always the same bytes), truncateRate 0.3 (cut mid-body)',
      periodsExact: run.healed?.exact ?? 0,
      periodsTotal: TOTAL,
      duplicates: run.healed?.duplicates ?? -1,
      retries: run.requests - TOTAL,
      failedAsExpected: run.failed.length,
      notes: `${run.faults.malformed} malformed (retried; ${run.failed.length} pulls failed for good on a repeat, body archived) and ${run.faults.truncate} truncated (retried); exact after heal with faults off`,
      ms: run.ms,
    });
  });

  it('a 400 fails its pull once, without retries, naming the status', async () => {
    const body = JSON.stringify({ error: 'bad_request', message: 'date_until is invalid' });
    const run = await backfillUnder(
      {},
      {
        overrides: [
          { path: '/v2/reports', status: 400, body, headers: { 'content-type': 'application/json' } },
        ],
      },
    );
    expect(run.failed).toHaveLength(1);
    const f = run.failed[0] as FailedPull;
    expect(f.reason).toMatch(/HTTP 400/);
    expect(f.reason).toMatch(/date_until is invalid/);
    const load = run.failedLoads[0];
    expect(load?.status).toBe('failed');
    expect(load?.error).toMatch(/HTTP 400/);
    expect(run.requests).toBe(TOTAL); // never retried
    expect(run.verdict).toMatchObject({ exact: TOTAL - 1, total: TOTAL - 1, duplicates: 0 });
    book.add({
      id: 'faults/400',
      title: 'permanent 400',
      injected: 'one report request answered 400 with a JSON error',
      periodsExact: run.verdict.exact,
      periodsTotal: TOTAL,
      duplicates: run.verdict.duplicates,
      retries: run.requests - TOTAL,
      failedAsExpected: run.failed.length,
      notes: 'the 400 pull failed at once with "HTTP 400" and the API message; the other 11 loaded exactly',
      ms: run.ms,
    });
  });
});

describe('the API key', () => {
  it('appears in no log line, Redis key or value, or database dump of these runs', async () => {
    const scans = await suite.scan();
    expect(scans.flatMap((s) => s.found)).toEqual([]);
    expect(scans.reduce((n, s) => n + s.searched.redisKeys, 0)).toBeGreaterThan(0);
    expect(suite.logLines.length).toBeGreaterThan(0);
  });
});
