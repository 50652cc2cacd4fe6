// Per-report freshness gauges for Prometheus: how new each report's data is and what its window
// lacks, read from the warehouse (not from this worker's own pulls), so every worker of a
// deployment reports the same values and an alert needs no aggregation across workers.
import type { Pool } from 'pg';
import { Gauge, type Registry } from 'prom-client';
import type { JobSet, ReportJob } from '../config/jobs.js';
import { periodContaining } from '../dates/periods.js';
import { freshnessLimitMs, periodEndInstant } from '../plan/freshness.js';
import { lastRestatements } from '../warehouse/loads-query.js';
import type { PlanAccount } from '../plan/pulls.js';
import { collectStatus, type ReportStatus } from './status.js';

/** What the gauges say of one report. */
export interface ReportFreshness {
  /** The account; the gauges label it only when it is not `default`. */
  readonly account?: string;
  readonly report: string;
  /** End of the newest loaded period (the midnight after its last day, in the report's time zone), in ms; null if none. */
  readonly lastPeriodEndMs: number | null;
  /** How old its newest data may get (`freshness:` or its default), in ms. */
  readonly freshnessMs: number;
  readonly missing: number;
  readonly failed: number;
  readonly unreconciled: number;
  /** Largest relative change of a total at the latest re-pull; null if never re-pulled. */
  readonly lastRestatement: number | null;
}

/** The gauge values of one report from its definition and its status (pure). */
export function gaugeValues(
  job: Pick<ReportJob, 'period' | 'schedule' | 'freshnessMs'>,
  status: ReportStatus,
  lastRestatement: number | null,
): ReportFreshness {
  const end =
    status.lastLoaded === null
      ? null
      : periodEndInstant(periodContaining(status.lastLoaded, job.period), job.schedule?.timezone ?? 'UTC');
  return {
    ...(status.account === 'default' ? {} : { account: status.account }),
    report: status.report,
    lastPeriodEndMs: end === null ? null : end.getTime(),
    freshnessMs: freshnessLimitMs(job),
    missing: status.missing.length,
    failed: status.failed.length,
    unreconciled: status.unreconciled.length,
    lastRestatement,
  };
}

/** Reads every report's freshness over the last `days` days from the warehouse. */
export async function readFreshness(
  pool: Pool,
  schema: string,
  jobs: JobSet,
  days: number,
  now: Date = new Date(),
  accounts?: readonly PlanAccount[],
): Promise<ReportFreshness[]> {
  const [status, restated] = await Promise.all([
    collectStatus(pool, schema, jobs, undefined, days, now, accounts),
    lastRestatements(
      pool,
      schema,
      jobs.reports.map((r) => r.name),
    ),
  ]);
  const byName = new Map(jobs.reports.map((r) => [r.name, r]));
  return status.reports.flatMap((r) => {
    const job = byName.get(r.report);
    return job === undefined ? [] : [gaugeValues(job, r, restated.get(r.report) ?? null)];
  });
}

/**
 * Registers the per-report gauges on `registry`. `read` is asked at scrape time, at most once per
 * `cacheMs` (the status queries are not free); when it fails (Postgres down) the gauges keep the
 * last values read rather than fail the scrape, and the data's age goes on growing.
 */
export function registerReportGauges(
  registry: Registry,
  read: () => Promise<readonly ReportFreshness[]>,
  options: { readonly cacheMs?: number; readonly now?: () => number } = {},
): void {
  const cacheMs = options.cacheMs ?? 30_000;
  const now = options.now ?? Date.now;
  let lastGood: readonly ReportFreshness[] | undefined;
  let cached: { at: number; value: Promise<readonly ReportFreshness[] | undefined> } | undefined;
  const current = (): Promise<readonly ReportFreshness[] | undefined> => {
    if (cached === undefined || now() - cached.at >= cacheMs) {
      const value = read().then(
        (values) => (lastGood = values),
        () => lastGood,
      );
      cached = { at: now(), value };
    }
    return cached.value;
  };
  // The account label only for accounts other than `default`: a single-account deployment's series stay as they were.
  const labels = (f: ReportFreshness) =>
    f.account === undefined ? { report: f.report } : { report: f.report, account: f.account };
  const gauge = (
    name: string,
    help: string,
    value: (f: ReportFreshness) => number | null,
  ): Gauge<'report' | 'account'> =>
    new Gauge({
      name,
      help,
      labelNames: ['report', 'account'],
      registers: [registry],
      async collect() {
        const all = await current();
        if (all === undefined) return;
        for (const f of all) {
          const v = value(f);
          if (v === null) this.remove(labels(f));
          else this.set(labels(f), v);
        }
      },
    });
  gauge(
    'adops_report_last_period_end_timestamp_seconds',
    'End of the newest loaded period of each report (the midnight after its last day, in its time zone)',
    (f) => (f.lastPeriodEndMs === null ? null : f.lastPeriodEndMs / 1000),
  );
  gauge(
    'adops_report_data_age_seconds',
    'Age of the newest data of each report: now minus the end of its newest loaded period',
    (f) => (f.lastPeriodEndMs === null ? null : (now() - f.lastPeriodEndMs) / 1000),
  );
  gauge(
    'adops_report_freshness_seconds',
    'How old the newest data of each report may get before it is late (freshness: or its default)',
    (f) => f.freshnessMs / 1000,
  );
  gauge('adops_report_missing_periods', 'Periods of the status window never loaded', (f) => f.missing);
  gauge(
    'adops_report_failed_periods',
    'Periods of the status window whose last attempt failed',
    (f) => f.failed,
  );
  gauge(
    'adops_report_unreconciled_periods',
    'Periods of the status window whose rows do not reconcile with the totals (or had none)',
    (f) => f.unreconciled,
  );
  gauge(
    'adops_report_last_restatement_ratio',
    'Largest relative change of a total at the latest re-pull of each report',
    (f) => f.lastRestatement,
  );
}
