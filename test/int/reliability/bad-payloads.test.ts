// Bad report bodies served with status 200: each must end as a failed pull with a clear message,
// its raw body archived, and the period's previously loaded rows untouched.
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import type { ReportJob } from '../../../src/platform/config/jobs.js';
import { enqueuePulls, waitForPulls } from '../../../src/schedule/enqueue.js';
import { readArchivedBody } from '../../../src/pull/archive.js';
import { qualified, reportTable, warehouseOf } from '../../../src/platform/pg/handle.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { figureBook } from '../../helpers/reliability/figures.js';
import { startPipeline, type Pipeline } from '../../helpers/pipeline.js';
import { lastLoad, openSuite, reportRequests, type Suite } from '../../helpers/reliability/suite.js';
import { day, verify } from '../../helpers/reliability/truth.js';

const PERIOD = day('2026-01-02');
const D = PERIOD.start;
const counters = (n: number) => ({
  ad_requests: n,
  filled_impressions: n,
  impressions: n,
  measurable_impressions: n,
  viewable_impressions: n,
});
const leaf = (over: Record<string, unknown> = {}) => JSON.stringify({ ...counters(5), ...over });
const TOTALS = JSON.stringify(counters(5));
/** A body for [day, campaign_id] whose one leaf is `leafJson`. */
const oneLeaf = (leafJson: string, totals = TOTALS) =>
  `{"items":{"${D}":{"101":${leafJson}}},"totals":${totals}}`;

/**
 * Each kind: the body served with status 200, and what the failure must say. Malformed bodies
 * (truncated, HTML, empty) are not here: they are retried, see MALFORMED below.
 */
const KINDS: ReadonlyArray<{ kind: string; body: string; reason: RegExp; contentType?: string }> = [
  {
    kind: 'counter of the wrong type',
    body: oneLeaf(leaf({ impressions: 'ten' })),
    reason: /impressions: the counter is string "ten"/,
  },
  {
    kind: 'counter missing',
    body: oneLeaf(JSON.stringify({ ad_requests: 5, impressions: 5 })),
    reason: /filled_impressions: the counter is missing/,
  },
  {
    kind: 'negative counter',
    body: oneLeaf(leaf({ impressions: -3 })),
    reason: /impressions: the counter is number -3/,
  },
  {
    kind: 'fractional counter',
    body: oneLeaf(leaf({ impressions: 2.5 })),
    reason: /impressions: the counter is number 2\.5/,
  },
  {
    kind: 'boolean counter',
    body: oneLeaf(leaf({ viewable_impressions: true })),
    reason: /viewable_impressions: the counter is boolean/,
  },
  {
    kind: 'null counter',
    body: oneLeaf(leaf({ ad_requests: null })),
    reason: /ad_requests: the counter is null/,
  },
  {
    kind: 'number beyond 2^53',
    body: oneLeaf(leaf({ impressions: 1 }).replace('"impressions":1', '"impressions":123456789012345678901')),
    reason: /impressions: the counter is number 1234567890123456\d{5}\b/,
  },
  {
    kind: 'unknown key at the day level',
    body: `{"items":{"yesterday":{"101":${leaf()}}},"totals":${TOTALS}}`,
    reason: /dimension day: value "yesterday" is not a date/,
  },
  {
    kind: 'unknown key at the campaign_id level',
    body: `{"items":{"${D}":{"campaign-7":${leaf()}}},"totals":${TOTALS}}`,
    reason: /dimension campaign_id: value "campaign-7"/,
  },
  {
    kind: 'campaign id beyond bigint',
    body: `{"items":{"${D}":{"${'9'.repeat(25)}":${leaf()}}},"totals":${TOTALS}}`,
    reason: /dimension campaign_id: value "9{25}"/,
  },
  {
    kind: 'depth too shallow',
    body: `{"items":{"${D}":${leaf()}},"totals":${TOTALS}}`,
    reason: /has no campaign_id/,
  },
  {
    kind: 'depth too deep',
    body: `{"items":{"${D}":{"101":{"7":${leaf()}}}},"totals":${TOTALS}}`,
    reason: /expected counters .* after 2 level\(s\)/,
  },
  {
    kind: 'totals of the wrong type',
    body: oneLeaf(leaf(), JSON.stringify({ ...counters(5), impressions: '5x' })),
    reason: /totals\.impressions/,
  },
  { kind: 'items null', body: `{"items":null,"totals":${TOTALS}}`, reason: /at items: expected an object/ },
  {
    kind: 'top level an array',
    body: `[${leaf()}]`,
    reason: /not a JSON object|expected an object with items and totals/,
  },
  {
    kind: 'duplicate rows (same dimension values twice)',
    body: `{"items":[{"day":"${D}","campaign_id":"101",${leaf().slice(1, -1)}},{"day":"${D}","campaign_id":"101",${leaf().slice(1, -1)}}],"totals":${JSON.stringify(counters(10))}}`,
    reason: /two rows have the same dimension values/,
  },
  {
    kind: 'duplicate keys (same JSON key twice)',
    body: `{"items":{"${D}":{"101":${leaf()},"101":${leaf()}}},"totals":${JSON.stringify(counters(10))}}`,
    reason: /same dimension values|duplicate/i,
  },
  {
    kind: 'totals twice (the second one matching the rows)',
    body: `{"items":{"${D}":{"101":${leaf()}}},"totals":${JSON.stringify(counters(9))},"totals":${TOTALS}}`,
    reason: /at totals: duplicate key: it appears twice in its object/,
  },
  {
    kind: 'a counter twice in one row',
    body: oneLeaf(leaf().replace('{', '{"ad_requests":1,')),
    reason: /at items\["2026-01-02"\]\["101"\]\.ad_requests: duplicate key/,
  },
  {
    kind: 'a dimension twice in one row',
    body: `{"items":[{"day":"${D}","campaign_id":"102","campaign_id":"101",${leaf().slice(1, -1)}}],"totals":${TOTALS}}`,
    reason: /at items\[0\]\.campaign_id: duplicate key/,
  },
  {
    kind: 'rows of a day outside the period',
    body: `{"items":{"2026-01-03":{"101":${leaf()}}},"totals":${TOTALS}}`,
    reason: /2026-01-03.*(outside|not in|period)/,
  },
];

/** Broken answers that are transient: the pull retries them and loads the next answer. */
const MALFORMED: ReadonlyArray<{ kind: string; body: string; contentType?: string }> = [
  { kind: 'truncated JSON', body: oneLeaf(leaf()).slice(0, 40) },
  {
    kind: 'HTML with status 200',
    body: '<html><body><h1>502 Bad Gateway</h1></body></html>',
    contentType: 'text/html',
  },
  { kind: 'empty body', body: '' },
  { kind: 'JSON cut short at a closing brace', body: oneLeaf(leaf()).slice(0, -1) },
];

let suite: Suite;
let db: TestDatabase;
let pipeline: Pipeline;
/** The env of the case's pipeline. */
let env: Record<string, string>;
let report: ReportJob;
let baseline: { loadId: string; rows: number };
const book = figureBook('bad-payloads');

/** The load ids owning the period's rows, and how many rows there are. */
async function periodState(): Promise<{ loadIds: string[]; rows: number }> {
  const { rows } = await db.pool.query<{ load_id: string; n: string }>(
    `SELECT load_id::text, count(*)::text AS n FROM ${qualified(TEST_SCHEMA, reportTable(report.name))} WHERE period_start = $1 GROUP BY load_id`,
    [D],
  );
  return { loadIds: rows.map((r) => r.load_id), rows: rows.reduce((s, r) => s + Number(r.n), 0) };
}

/** One pull of the period through the queue and worker. */
async function pullOnce() {
  const [pull] = await enqueuePulls(pipeline.queues.pulls, [{ report: report.name, period: PERIOD }]);
  return waitForPulls(pipeline.queues.pulls, [pull!], { pollMs: 50 });
}

/** Loads the period's good rows (again) and remembers them as the rows every bad body must keep. */
async function restoreBaseline(): Promise<void> {
  const done = await pullOnce();
  if (done.failed.length > 0) throw new Error(`baseline pull failed: ${done.failed[0]?.reason}`);
  const state = await periodState();
  baseline = { loadId: state.loadIds[0] ?? '', rows: state.rows };
}

beforeAll(async () => {
  suite = await openSuite();
  report = suite.reports[0] as ReportJob;
  const c = await suite.newCase();
  db = c.db;
  env = c.env;
  pipeline = await startPipeline({ env, pool: db.pool, jobs: suite.jobs, concurrency: 1 });
  // The period's good rows, which every bad body below must leave alone.
  await restoreBaseline();
});
afterAll(async () => {
  book.flush(inject('runId'));
  await pipeline?.close();
  if (pipeline !== undefined) suite.logLines.push(...pipeline.lines);
  await suite?.close();
});

/**
 * Serves `body` once with status 200 for the loaded period and checks the pull fails for good,
 * saying `reason`, with the body archived byte for byte and the period's rows untouched.
 */
async function expectCleanFailure(
  kind: string,
  body: string,
  reason: RegExp,
  contentType?: string,
): Promise<{ loadId: string }> {
  const started = Date.now();
  suite.emulator.resetStats();
  suite.emulator.override({
    path: '/v2/reports',
    status: 200,
    body,
    headers: { 'content-type': contentType ?? 'application/json' },
    times: 1,
  });
  const result = await pullOnce();
  const requests = reportRequests(suite.emulator);
  const load = await lastLoad(db.pool, report.name, D);
  const state = await periodState();
  const archived =
    load === undefined
      ? undefined
      : await readArchivedBody(warehouseOf(db.pool, TEST_SCHEMA), Number(load.load_id));
  const v = await verify(db.pool, TEST_SCHEMA, [report], suite.truth, (_r, p) => p.start === D);
  book.add({
    id: `payload/${kind.replace(/\W+/g, '-')}`,
    title: `bad payload: ${kind}`,
    injected: `the next answer is 200 with this body (${body.length} bytes), on a loaded period`,
    periodsExact: v.exact,
    periodsTotal: 1,
    duplicates: v.duplicates,
    retries: requests - 1,
    failedAsExpected:
      result.failed.length === 1 && load?.status === 'failed' && archived !== undefined ? 1 : 0,
    notes: (result.failed[0]?.reason ?? 'NOT FAILED: loaded').slice(0, 160),
    ms: Date.now() - started,
  });
  // A body that was wrongly loaded must not spill into the next kind's check: restore the period.
  if (result.completed.length > 0 || state.loadIds.join() !== baseline.loadId) await restoreBaseline();
  // A failed pull, not retried (a re-pull would return the same body), saying what is wrong.
  expect(result.completed).toEqual([]);
  expect(result.failed[0]?.reason).toMatch(reason);
  expect(requests).toBe(1);
  // Recorded as failed, with the same reason and the raw body archived byte for byte.
  expect(load?.status).toBe('failed');
  expect(load?.error).toMatch(reason);
  expect(archived?.toString('utf8')).toBe(body);
  // The rows loaded before are untouched: same load, same rows, still equal to the truth.
  expect(state).toEqual({ loadIds: [baseline.loadId], rows: baseline.rows });
  expect(v).toMatchObject({ exact: 1, total: 1, duplicates: 0 });
  return { loadId: load?.load_id ?? '' };
}

describe('a bad report body fails its pull, keeps the body, and leaves the loaded period alone', () => {
  it('the baseline period is loaded exactly', async () => {
    const v = await verify(db.pool, TEST_SCHEMA, [report], suite.truth, (_r, p) => p.start === D);
    expect(v).toMatchObject({ exact: 1, total: 1, duplicates: 0 });
    expect(baseline.rows).toBeGreaterThan(0);
  });

  it.each(KINDS)('$kind', async ({ kind, body, reason, contentType }) => {
    await expectCleanFailure(kind, body, reason, contentType);
  });

  it('covers at least 15 kinds of bad payload', () => {
    expect(KINDS.length).toBeGreaterThanOrEqual(15);
  });
});

describe('a malformed body is retried, and the next answer loads the period', () => {
  it.each(MALFORMED)('$kind', async ({ kind, body, contentType }) => {
    const started = Date.now();
    suite.emulator.resetStats();
    suite.emulator.override({
      path: '/v2/reports',
      status: 200,
      body,
      headers: { 'content-type': contentType ?? 'application/json' },
      times: 1,
    });
    const result = await pullOnce();
    const requests = reportRequests(suite.emulator);
    const v = await verify(db.pool, TEST_SCHEMA, [report], suite.truth, (_r, p) => p.start === D);
    book.add({
      id: `payload/malformed-${kind.replace(/\W+/g, '-')}`,
      title: `malformed payload: ${kind}`,
      injected: `the next answer is 200 with this body (${body.length} bytes), once`,
      periodsExact: v.exact,
      periodsTotal: 1,
      duplicates: v.duplicates,
      retries: requests - 1,
      failedAsExpected: result.completed.length,
      notes: 'retried like a 5xx; the next answer loaded',
      ms: Date.now() - started,
    });
    expect(result.failed).toEqual([]);
    expect(result.completed).toHaveLength(1);
    expect(requests).toBe(2);
    expect(v).toMatchObject({ exact: 1, total: 1, duplicates: 0 });
    expect((await lastLoad(db.pool, report.name, D))?.status).toBe('loaded');
    // The period now belongs to a new load: the next cases compare against it.
    await restoreBaseline();
  });
});

/**
 * A body of over a megabyte (about 10,000 campaigns on the period), its totals matching the rows,
 * with `twice` spliced into the last row: a counter given twice, the last value the one that
 * reconciles, so a parser keeping the last value would load it, reconciled.
 */
function bigBody(twice: 'counter' | 'totals'): string {
  const ids = Array.from({ length: 10_000 }, (_, i) => String(200_000 + i));
  const rows = ids.map(
    (id, i) =>
      `"${id}":${i === ids.length - 1 && twice === 'counter' ? leaf().replace('{', '{"impressions":0,') : leaf()}`,
  );
  const totals = JSON.stringify(counters(5 * ids.length));
  const body = `{"items":{"${D}":{${rows.join(',')}}},"totals":${twice === 'totals' ? `${JSON.stringify(counters(1))},"totals":${totals}` : totals}}`;
  if (body.length < 1_100_000) throw new Error(`bigBody: only ${body.length} bytes`);
  return body;
}

const BIG: ReadonlyArray<{ kind: string; body: string; reason: RegExp }> = [
  {
    kind: 'a counter twice in the last row',
    body: bigBody('counter'),
    reason: /at items\["2026-01-02"\]\["209999"\]\.impressions: duplicate key: it appears twice/,
  },
  { kind: 'totals twice after the items', body: bigBody('totals'), reason: /at totals: duplicate key/ },
];

/** Whether the archived body of `loadId` went to parts (streamed) or one gzip (held whole), and its size. */
async function archivedAs(loadId: string): Promise<{ streamed: boolean; bytes: number }> {
  const { rows } = await db.pool.query<{ streamed: boolean; bytes: string }>(
    `SELECT spool_id IS NOT NULL AS streamed, body_bytes::text AS bytes FROM ${qualified(TEST_SCHEMA, 'report_raw')} WHERE load_id = $1`,
    [loadId],
  );
  return { streamed: rows[0]?.streamed ?? false, bytes: Number(rows[0]?.bytes ?? 0) };
}

describe('a key given twice in a body of over a megabyte fails the pull the same way', () => {
  describe('held whole and loaded through COPY', () => {
    it.each(BIG)('$kind', async ({ kind, body, reason }) => {
      const { loadId } = await expectCleanFailure(`${kind}, held whole`, body, reason);
      // Past the inline limit (1 MiB): the rows went into a COPY, rolled back.
      expect(await archivedAs(loadId)).toEqual({ streamed: false, bytes: body.length });
    });
  });

  describe('streamed as it arrives (past ADOPS_STREAM_BODY_MB)', () => {
    beforeAll(async () => {
      // The same worker, now streaming every body from 1 MB on, as ADOPS_STREAM_BODY_MB=1 does.
      await pipeline.close();
      suite.logLines.push(...pipeline.lines.splice(0));
      pipeline = await startPipeline({
        env,
        pool: db.pool,
        jobs: suite.jobs,
        concurrency: 1,
        streamFromBytes: 1_000_000,
      });
    });

    it.each(BIG)('$kind', async ({ kind, body, reason }) => {
      const { loadId } = await expectCleanFailure(`${kind}, streamed`, body, reason);
      expect(await archivedAs(loadId)).toEqual({ streamed: true, bytes: body.length });
    });
  });
});

describe('the API key', () => {
  it('appears in no log line, Redis key or value, or database dump of these runs', async () => {
    suite.logLines.push(...pipeline.lines.splice(0));
    const scans = await suite.scan();
    expect(scans.flatMap((s) => s.found)).toEqual([]);
    expect(scans[0]?.searched.rawBodies).toBeGreaterThan(0);
  });
});
