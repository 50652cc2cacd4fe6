// adops replay: re-flatten and reload an archived response without calling the API, so a parser
// fix never needs a re-pull.
import type { Pool } from 'pg';
import type { ReportJob } from '../config/jobs.js';
import { ReplayError } from './errors.js';
import { loadPulledPeriod, type LoadOptions, type LoadOutcome } from './load.js';
import { readArchivedBody } from './raw.js';
import { qualified } from './pg.js';

interface LoadRow {
  account: string;
  report: string;
  period_start: string;
  period_end: string;
  dimensions: string[];
  http_attempts: number;
  fetch_ms: number | null;
  fetched_at: Date | null;
  fetch_token: string | null;
  archived_at: Date | null;
  job_id: string | null;
}

/**
 * Reloads the period of `loadId` from its archived body under the original's fetch token: a replay
 * is as old as the fetch that got its body, so replaying it over the load of a later fetch is
 * recorded as superseded, while replaying the period's current load (or an older body once the
 * newer load is gone) loads.
 * Throws ReplayError when the load, its definition or its body is not available.
 */
export async function replayLoad(
  pool: Pool,
  schema: string,
  reports: readonly ReportJob[],
  loadId: number,
  opts: Omit<LoadOptions, 'replayOf'> = {},
): Promise<LoadOutcome> {
  const { rows } = await pool.query<LoadRow>(
    `SELECT l.account, l.report, l.period_start::text, l.period_end::text, l.dimensions, l.http_attempts, l.fetch_ms,
            l.fetched_at, l.fetch_token::text, r.archived_at
       FROM ${qualified(schema, 'report_loads')} l
       LEFT JOIN ${qualified(schema, 'report_raw')} r ON r.account = l.account AND r.load_id = l.load_id
      WHERE l.load_id = $1`,
    [loadId],
  );
  const load = rows[0];
  if (load === undefined)
    throw new ReplayError(`load ${loadId} is not in ${schema}.report_loads; pick a load_id from that table`);
  const report = reports.find((r) => r.name === load.report);
  if (report === undefined)
    throw new ReplayError(
      `load ${loadId} is of report ${load.report}, which has no job definition in ADOPS_JOBS_DIR; restore its definition to replay it`,
    );
  if (report.dimensions.join(',') !== load.dimensions.join(','))
    throw new ReplayError(
      `load ${loadId} was pulled with dimensions ${load.dimensions.join(',')} but ${report.file} now has ${report.dimensions.join(',')}; ` +
        `its body cannot fill the current table: re-pull the period instead (adops backfill --report ${report.name} --from ${load.period_start} --to ${load.period_end})`,
    );
  const body = await readArchivedBody(pool, schema, loadId);
  if (body === undefined)
    throw new ReplayError(
      `the raw body of load ${loadId} is not kept (no response, or older than ADOPS_RAW_RETENTION_DAYS); ` +
        `re-pull the period instead (adops backfill --report ${report.name} --from ${load.period_start} --to ${load.period_end})`,
    );
  return loadPulledPeriod(
    pool,
    schema,
    {
      // The replay belongs to the account of the load it re-flattens.
      account: load.account,
      report,
      period: { start: load.period_start, end: load.period_end },
      body,
      fetchedAt: load.fetched_at ?? load.archived_at ?? new Date(0),
      // A load without a token (a failed fetch that never took one) counts as older than any.
      fetchToken: load.fetch_token === null ? 0 : Number(load.fetch_token),
      attempts: load.http_attempts,
      bytes: body.length,
      fetchMs: load.fetch_ms ?? 0,
      ...(load.job_id === null ? {} : { jobId: load.job_id }),
    },
    { ...opts, replayOf: loadId },
  );
}
