// Prometheus metrics of one worker, in its own registry (workers in one process must not collide), and the
// per-report gauges, read from the warehouse so every worker reports the same values (no aggregation).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { JobSet, ReportJob } from '../platform/config/jobs.js';
import { startOfLocalDate } from '../platform/dates/calendar.js';
import { periodContaining } from '../platform/dates/periods.js';
import { freshnessLimitMs, periodEndInstant } from '../plan/freshness.js';
import { lastRestatements } from '../pull/history.js';
import type { PlanAccount } from '../plan/pulls.js';
import { collectStatus, type ReportStatus } from '../status/status.js';
import type { Warehouse } from '../platform/pg/handle.js';

const DEPTH_STATES = ['waiting', 'active', 'delayed', 'failed', 'prioritized'] as const;

export interface WorkerMetrics {
  readonly registry: Registry;
  /** Periods pulled by report and outcome: loaded, superseded, retry, failed, rate_limited. */
  readonly pulls: Counter<'report' | 'outcome'>;
  readonly requests: Counter<'report'>; // report requests that loaded (one may carry several periods)
  readonly splits: Counter<'report'>; // requests of several periods split in two after a failure
  readonly rowsLoaded: Counter<'report'>;
  readonly apiRequests: Counter<'status'>; // API requests by HTTP status (or `error` when no response came).
  readonly apiRetries: Counter<'status'>; // API requests retried, by the status that caused the retry.
  readonly pullSeconds: Histogram<'report'>;
  readonly fetchSeconds: Histogram<'report'>;
  readonly loadSeconds: Histogram<'report'>;
  readonly queueDepth: Gauge<'queue' | 'state'>;
}

/** Creates the worker's metrics; `depth` is asked for the queue counts at scrape time. */
export function createWorkerMetrics(
  depth: () => Promise<Record<string, Partial<Record<string, number>>>>,
  options: { defaultMetrics?: boolean } = {},
): WorkerMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'adops_' });
  const counter = <L extends string>(name: string, help: string, label: L) =>
    new Counter<L>({ name, help, labelNames: [label], registers: [registry] });
  const histogram = (name: string, help: string) =>
    new Histogram<'report'>({
      name,
      help,
      labelNames: ['report'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers: [registry],
    });
  return {
    registry,
    pulls: new Counter({
      name: 'adops_pulls_total',
      help: 'Report periods pulled, by report and outcome (loaded, superseded, retry, failed, rate_limited)',
      labelNames: ['report', 'outcome'],
      registers: [registry],
    }),
    requests: counter(
      'adops_report_requests_total',
      'Report requests that loaded, by report (one covers up to days_per_request periods)',
      'report',
    ),
    splits: counter(
      'adops_request_splits_total',
      'Report requests of several periods split in two after a failure a smaller one may not meet',
      'report',
    ),
    rowsLoaded: counter('adops_rows_loaded_total', 'Rows written to report tables', 'report'),
    apiRequests: counter(
      'adops_api_requests_total',
      'HTTP requests to the management API by status (error: no response)',
      'status',
    ),
    apiRetries: counter(
      'adops_api_retries_total',
      'API requests retried, by the status that caused the retry',
      'status',
    ),
    pullSeconds: histogram('adops_pull_duration_seconds', 'Whole pull (fetch and load) duration'),
    fetchSeconds: histogram('adops_fetch_duration_seconds', 'API fetch duration of a pull, retries included'),
    loadSeconds: histogram('adops_load_duration_seconds', 'Postgres load duration of a pull'),
    queueDepth: new Gauge({
      name: 'adops_queue_depth',
      help: 'Jobs per queue and state',
      labelNames: ['queue', 'state'],
      registers: [registry],
      async collect() {
        const counts = await depth().catch(() => undefined);
        if (counts === undefined) return; // the store is down: keep the last values rather than fail the scrape
        for (const [queue, states] of Object.entries(counts))
          for (const state of DEPTH_STATES) this.set({ queue, state }, states[state] ?? 0);
      },
    }),
  };
}

/** Counts API requests by status and retries by the status that caused them, keyed by path (unique while a pull runs). */
export function attemptRecorder(
  metrics: Pick<WorkerMetrics, 'apiRequests' | 'apiRetries'>,
): (a: { status: number | undefined; attempt: number; path: string }) => void {
  const previous = new Map<string, string>();
  return ({ status, attempt, path }) => {
    const label = status === undefined ? 'error' : String(status);
    metrics.apiRequests.inc({ status: label });
    if (attempt > 1) metrics.apiRetries.inc({ status: previous.get(path) ?? 'unknown' });
    if (status !== undefined && status < 300) previous.delete(path);
    else previous.set(path, label);
  };
}

/** The worker's events as metrics (pull-worker.ts' WorkerObserver is this type). */
export function metricsObserver(metrics: WorkerMetrics): {
  pull(
    report: string,
    event:
      | {
          outcome: 'loaded' | 'superseded';
          rows: number;
          fetchMs: number;
          loadMs: number;
          totalMs: number;
          periods?: readonly { readonly status: 'loaded' | 'superseded' }[]; // default: one, of `outcome`
          requests?: number;
          splits?: number;
        }
      | { outcome: 'retry' | 'failed' | 'rate_limited'; periods?: number },
  ): void;
  attempt(event: { status: number | undefined; attempt: number; path: string }): void;
} {
  return {
    pull(report, event) {
      if (!('rows' in event)) {
        metrics.pulls.inc({ report, outcome: event.outcome }, event.periods ?? 1);
        return;
      }
      for (const p of event.periods ?? [{ status: event.outcome }])
        metrics.pulls.inc({ report, outcome: p.status });
      metrics.requests.inc({ report }, event.requests ?? 1);
      metrics.splits.inc({ report }, event.splits ?? 0);
      metrics.rowsLoaded.inc({ report }, event.outcome === 'loaded' ? event.rows : 0);
      metrics.fetchSeconds.observe({ report }, event.fetchMs / 1000);
      metrics.loadSeconds.observe({ report }, event.loadMs / 1000);
      metrics.pullSeconds.observe({ report }, event.totalMs / 1000);
    },
    attempt: attemptRecorder(metrics),
  };
}

/** What the gauges say of one report. */
export interface ReportFreshness {
  readonly account?: string; // The account; the gauges label it only when it is not `default`.
  readonly report: string;
  /** End of the newest loaded period (the midnight after its last day, in the report's time zone), in ms; null if none. */
  readonly lastPeriodEndMs: number | null;
  readonly freshnessMs: number; // How old its newest data may get (`freshness:` or its default), in ms.
  /** With nothing loaded in the window: the start of its oldest missing period, its data age's origin; else null. */
  readonly neverLoadedSinceMs?: number | null;
  readonly missing: number;
  /** Missing periods past the freshness limit, or older than the newest loaded one (status' `overdue`). */
  readonly overdue?: number;
  readonly failed: number;
  readonly unreconciled: number;
  /** Periods where it disagrees with another report of its grain beyond restatement (agreement.ts). */
  readonly disagreeing?: number;
  /** Largest relative change of a total at the latest re-pull; null if never re-pulled. */
  readonly lastRestatement: number | null;
}

/** The gauge values of one report from its definition and its status (pure). */
export function gaugeValues(
  job: Pick<ReportJob, 'period' | 'schedule' | 'freshnessMs'>,
  status: ReportStatus,
  lastRestatement: number | null,
): ReportFreshness {
  const timezone = job.schedule?.timezone ?? 'UTC';
  const end =
    status.lastLoaded === null
      ? null
      : periodEndInstant(periodContaining(status.lastLoaded, job.period), timezone);
  const oldestMissing = [...status.missing].sort()[0];
  return {
    ...(status.account === 'default' ? {} : { account: status.account }),
    report: status.report,
    lastPeriodEndMs: end === null ? null : end.getTime(),
    neverLoadedSinceMs:
      end === null && oldestMissing !== undefined
        ? startOfLocalDate(oldestMissing, timezone).getTime()
        : null,
    freshnessMs: freshnessLimitMs(job),
    missing: status.missing.length,
    overdue: status.overdue.length,
    failed: status.failed.length,
    unreconciled: status.unreconciled.length,
    lastRestatement,
  };
}

/** Reads every report's freshness over the last `days` days from the warehouse. */
export async function readFreshness(
  wh: Warehouse,
  jobs: JobSet,
  days: number,
  now: Date = new Date(),
  accounts?: readonly PlanAccount[],
): Promise<ReportFreshness[]> {
  const names = jobs.reports.map((r) => r.name);
  const [status, restated] = await Promise.all([
    collectStatus(wh, jobs, undefined, days, now, accounts),
    lastRestatements(wh, names),
  ]);
  const byName = new Map(jobs.reports.map((r) => [r.name, r]));
  return status.reports.flatMap((r) => {
    const job = byName.get(r.report);
    const disagreeing = (status.disagreements ?? []).filter(
      (d) => !d.explained && d.account === r.account && [d.side.report, d.other.report].includes(r.report),
    ).length;
    return job === undefined ? [] : [{ ...gaugeValues(job, r, restated.get(r.report) ?? null), disagreeing }];
  });
}

/** `read` at most once per `cacheMs` (default 30 s); if it fails, the last values stay. */
function cachedRead<T>(
  read: () => Promise<T>,
  options: { readonly cacheMs?: number; readonly now?: () => number },
): () => Promise<T | undefined> {
  const cacheMs = options.cacheMs ?? 30_000;
  const now = options.now ?? Date.now;
  let lastGood: T | undefined;
  let cached: { at: number; value: Promise<T | undefined> } | undefined;
  return () => {
    if (cached === undefined || now() - cached.at >= cacheMs) {
      const value = read().then(
        (values) => (lastGood = values),
        () => lastGood,
      );
      cached = { at: now(), value };
    }
    return cached.value;
  };
}

/** Registers adops_campaigns_behind{account}, from bi_campaign_pacing as `read` gives it (cached as above). */
export function registerPacingGauge(
  registry: Registry,
  read: () => Promise<readonly { account: string; behind: number }[]>,
  options: { readonly cacheMs?: number; readonly now?: () => number } = {},
): void {
  const current = cachedRead(read, options);
  new Gauge({
    name: 'adops_campaigns_behind',
    help: 'Campaigns with a goal that bi_campaign_pacing calls behind (pace below ADOPS_PACING_BEHIND), per account',
    labelNames: ['account'],
    registers: [registry],
    async collect() {
      const all = await current();
      if (all === undefined) return;
      this.reset();
      for (const r of all) this.set({ account: r.account }, r.behind);
    },
  });
}

/** Registers the per-report gauges; `read` at most once per `cacheMs`; if it fails, the last values stay. */
export function registerReportGauges(
  registry: Registry,
  read: () => Promise<readonly ReportFreshness[]>,
  options: { readonly cacheMs?: number; readonly now?: () => number } = {},
): void {
  const now = options.now ?? Date.now;
  const current = cachedRead(read, options);
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
    'Age of the newest data of each report: now minus the end of its newest loaded period; with none loaded in ' +
      'the window, now minus the start of its oldest missing period (adops_report_never_loaded is then 1)',
    (f) => {
      const from = f.lastPeriodEndMs ?? f.neverLoadedSinceMs ?? null;
      return from === null ? null : (now() - from) / 1000;
    },
  );
  gauge(
    'adops_report_never_loaded',
    '1 when no period of the status window is loaded (a report that never loaded, or nothing lately), else 0',
    (f) => (f.lastPeriodEndMs === null ? 1 : 0),
  );
  gauge(
    'adops_report_overdue_periods',
    'Missing periods of the status window past the freshness limit, or older than the newest loaded one',
    (f) => f.overdue ?? 0,
  );
  gauge(
    'adops_report_freshness_seconds',
    'How old the newest data of each report may get before it is late (freshness: or its default)',
    (f) => f.freshnessMs / 1000,
  );
  gauge(
    'adops_report_disagreeing_periods',
    'Periods of the status window where the totals of the report and another of its grain differ beyond restatement',
    (f) => f.disagreeing ?? 0,
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
