// runPull against a real warehouse and a fake API: what it loads, what it records of a failure
// (and what it does not), and that its fencing token is taken before the request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportBody } from '../../../src/api/body.js';
import { apiHttpError, apiResponseError, rateLimitedError } from '../../../src/api/errors.js';
import { createLogger } from '../../../src/platform/log/logger.js';
import { warehouseOf } from '../../../src/platform/pg/handle.js';
import { pullDeps, runPull, type ReportFetcher } from '../../../src/pull/run.js';
import { TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { createTables, openTestDatabase, reportBody, reportJob } from '../warehouse/fixtures/reports.js';

const report = reportJob('run_pull', ['day', 'zone_id']);
const data = { report: report.name, periodStart: '2026-01-01', periodEnd: '2026-01-01' };
const logger = createLogger({ level: 'silent', secrets: [] });
const at = { apiMessage: undefined, method: 'GET', path: '/v2/reports', hint: 'h' };
const good = () => ({
  body: new ReportBody(
    reportBody([
      [
        ['2026-01-01', '7'],
        [3, 2, 2, 1, 1],
      ],
    ]),
    [],
  ),
  fetchedAt: new Date(),
  attempts: 1,
  fetchMs: 1,
});
let db: TestDatabase;

beforeAll(async () => {
  db = await openTestDatabase();
  await createTables(db.pool, [report]);
});
afterAll(async () => {
  await db?.drop();
});

function deps(fetchReport: ReportFetcher['fetchReport']) {
  return pullDeps(new Map([[report.name, report]]), { fetchReport }, warehouseOf(db.pool, TEST_SCHEMA));
}
/** The pull's report_loads rows, oldest first. */
async function loads(): Promise<Array<Record<string, unknown>>> {
  const { rows } = await db.pool.query(
    `SELECT status, http_attempts, job_id, fetch_token::text AS fetch_token, error,
            EXISTS (SELECT 1 FROM "${TEST_SCHEMA}".report_raw r WHERE r.load_id = l.load_id) AS raw_kept
       FROM "${TEST_SCHEMA}".report_loads l WHERE report = $1 ORDER BY load_id`,
    [report.name],
  );
  return rows;
}
const failedLoads = async () => (await loads()).filter((l) => l.status === 'failed');

describe('runPull', () => {
  it('loads what it fetched, under the token taken before the request', async () => {
    const before = (
      await db.pool.query<{ t: string }>(
        `SELECT (CASE WHEN is_called THEN last_value ELSE last_value - 1 END)::text AS t FROM "${TEST_SCHEMA}".fetch_tokens`,
      )
    ).rows[0]?.t;
    let tokenAtFetch: string | undefined;
    const out = await runPull(
      deps(async () => {
        tokenAtFetch = (
          await db.pool.query<{ t: string }>(
            `SELECT (CASE WHEN is_called THEN last_value ELSE last_value - 1 END)::text AS t FROM "${TEST_SCHEMA}".fetch_tokens`,
          )
        ).rows[0]?.t;
        return good();
      }),
      data,
      'j1',
      logger,
    );
    expect(out).toMatchObject({ ok: true, loaded: { rows: 1, status: 'loaded' } });
    expect(tokenAtFetch).not.toBe(before);
    const loaded = (await loads()).at(-1);
    expect(String(loaded?.fetch_token)).toBe(tokenAtFetch);
    expect(await failedLoads()).toEqual([]);
  });

  it('records a failed fetch with its attempts, so status and heal see it', async () => {
    const error = apiHttpError({ ...at, status: 500, attempts: 5, retryable: true });
    const out = await runPull(
      deps(async () => Promise.reject(error)),
      data,
      'j2',
      logger,
    );
    expect(out).toMatchObject({ ok: false, failure: { kind: 'transient' } });
    expect((await failedLoads()).at(-1)).toMatchObject({ http_attempts: 5, job_id: 'j2', raw_kept: false });
  });

  it('archives the unusable body a failed fetch carries, never putting it in the error text', async () => {
    const body = Buffer.from('<html>maintenance</html>');
    const error = apiResponseError({
      ...at,
      status: 200,
      attempts: 2,
      retryable: true,
      problem: 'an HTML page',
      excerpt: '<html>',
      body,
    });
    const out = await runPull(
      deps(async () => Promise.reject(error)),
      data,
      'j3',
      logger,
    );
    expect(out).toMatchObject({ ok: false, failure: { kind: 'transient' } });
    const failed = (await failedLoads()).at(-1);
    expect(failed).toMatchObject({ http_attempts: 2, job_id: 'j3', raw_kept: true });
    expect(String(failed?.error)).not.toContain('maintenance');
  });

  it('does not record a 429 (a pause), nor a load failure twice (the loader recorded it)', async () => {
    const before = (await failedLoads()).length;
    const limited = rateLimitedError({
      ...at,
      status: 429,
      attempts: 1,
      retryable: true,
      retryAfterMs: 10,
    });
    expect(
      await runPull(
        deps(async () => Promise.reject(limited)),
        data,
        'j',
        logger,
      ),
    ).toMatchObject({
      failure: { kind: 'rate-limited' },
    });
    expect(await failedLoads()).toHaveLength(before);
    const bad = { ...good(), body: new ReportBody(Buffer.from('{"items": {"x": 1}, "totals": {}}'), []) };
    expect(
      await runPull(
        deps(async () => bad),
        data,
        'j',
        logger,
      ),
    ).toMatchObject({ failure: { kind: 'fatal' } });
    expect(await failedLoads()).toHaveLength(before + 1);
  });

  it('records the step a failed pull failed at: fetch, parse or load', async () => {
    const stepOf = async (id: string) =>
      (
        await db.pool.query<{ failed_step: string | null }>(
          `SELECT failed_step FROM "${TEST_SCHEMA}".report_loads WHERE job_id = $1`,
          [id],
        )
      ).rows.map((r) => r.failed_step);
    const refused = apiHttpError({ ...at, status: 500, attempts: 1, retryable: true });
    await runPull(
      deps(async () => Promise.reject(refused)),
      data,
      'step-fetch',
      logger,
    );
    expect(await stepOf('step-fetch')).toEqual(['fetch']);
    const bad = { ...good(), body: new ReportBody(Buffer.from('{"items": {"x": 1}, "totals": {}}'), []) };
    await runPull(
      deps(async () => bad),
      data,
      'step-parse',
      logger,
    );
    expect(await stepOf('step-parse')).toEqual(['parse']);
    // A report whose table was never made: Postgres refuses the load.
    const tableless = reportJob('run_pull_no_table', ['day', 'zone_id']);
    const d = pullDeps(
      new Map([[tableless.name, tableless]]),
      { fetchReport: async () => good() },
      warehouseOf(db.pool, TEST_SCHEMA),
    );
    const out = await runPull(d, { ...data, report: tableless.name }, 'step-load', logger);
    expect(out).toMatchObject({ ok: false });
    expect(await stepOf('step-load')).toEqual(['load']);
    // A pull that loaded records no step.
    await runPull(
      deps(async () => good()),
      data,
      'step-none',
      logger,
    );
    expect(await stepOf('step-none')).toEqual([null]);
  });

  it('fails a pull of a report no definition has, without calling the API', async () => {
    let called = false;
    const out = await runPull(
      deps(async () => ((called = true), good())),
      { ...data, report: 'gone' },
      'j',
      logger,
    );
    expect(out).toMatchObject({
      ok: false,
      failure: { kind: 'fatal', reason: expect.stringContaining('"gone"') },
    });
    expect(called).toBe(false);
  });

  it('does not fetch when no token can be taken (Postgres down), and retries', async () => {
    let called = false;
    const down = warehouseOf(db.pool, 'no_such_schema');
    const d = { ...deps(async () => ((called = true), good())), wh: down };
    const out = await runPull(d, data, 'j', logger);
    expect(out).toMatchObject({ ok: false });
    expect(called).toBe(false);
  });
});
