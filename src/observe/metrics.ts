// Prometheus metrics of one worker process: a registry of its own, so tests and the in-process
// demo can run several workers without their counters colliding.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The queue counts the depth gauge reports. */
export const DEPTH_STATES = ['waiting', 'active', 'delayed', 'failed', 'prioritized'] as const;

export interface WorkerMetrics {
  readonly registry: Registry;
  /** Pulls by report and outcome: loaded, superseded, retry, failed, rate_limited. */
  readonly pulls: Counter<'report' | 'outcome'>;
  readonly rowsLoaded: Counter<'report'>;
  /** API requests by HTTP status (or `error` when no response came). */
  readonly apiRequests: Counter<'status'>;
  /** API requests retried, by the status that caused the retry. */
  readonly apiRetries: Counter<'status'>;
  readonly pullSeconds: Histogram<'report'>;
  readonly fetchSeconds: Histogram<'report'>;
  readonly loadSeconds: Histogram<'report'>;
  readonly queueDepth: Gauge<'queue' | 'state'>;
}

/**
 * Creates the worker's metrics. `depth` is asked for the queue counts at scrape time, so the gauge
 * is never stale and costs nothing between scrapes.
 */
export function createWorkerMetrics(
  depth: () => Promise<Record<string, Partial<Record<string, number>>>>,
  options: { defaultMetrics?: boolean } = {},
): WorkerMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'adops_' });
  const buckets = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
  return {
    registry,
    pulls: new Counter({
      name: 'adops_pulls_total',
      help: 'Report pulls by report and outcome (loaded, superseded, retry, failed, rate_limited)',
      labelNames: ['report', 'outcome'],
      registers: [registry],
    }),
    rowsLoaded: new Counter({
      name: 'adops_rows_loaded_total',
      help: 'Rows written to report tables',
      labelNames: ['report'],
      registers: [registry],
    }),
    apiRequests: new Counter({
      name: 'adops_api_requests_total',
      help: 'HTTP requests to the management API by status (error: no response)',
      labelNames: ['status'],
      registers: [registry],
    }),
    apiRetries: new Counter({
      name: 'adops_api_retries_total',
      help: 'API requests retried, by the status that caused the retry',
      labelNames: ['status'],
      registers: [registry],
    }),
    pullSeconds: new Histogram({
      name: 'adops_pull_duration_seconds',
      help: 'Whole pull (fetch and load) duration',
      labelNames: ['report'],
      buckets,
      registers: [registry],
    }),
    fetchSeconds: new Histogram({
      name: 'adops_fetch_duration_seconds',
      help: 'API fetch duration of a pull, retries included',
      labelNames: ['report'],
      buckets,
      registers: [registry],
    }),
    loadSeconds: new Histogram({
      name: 'adops_load_duration_seconds',
      help: 'Postgres load duration of a pull',
      labelNames: ['report'],
      buckets,
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'adops_queue_depth',
      help: 'Jobs per queue and state',
      labelNames: ['queue', 'state'],
      registers: [registry],
      async collect() {
        const counts = await depth().catch(() => undefined);
        if (counts === undefined) return; // Redis down: keep the last values rather than fail the scrape
        for (const [queue, states] of Object.entries(counts))
          for (const state of DEPTH_STATES) this.set({ queue, state }, states[state] ?? 0);
      },
    }),
  };
}

/**
 * Counts API requests by status and retries by the status that caused them, from the API
 * client's per-attempt callback. Keeps the previous status per request path (a pull's path is
 * unique while it runs, deduplication sees to that).
 */
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

/**
 * The worker's events (src/worker/observer.ts) as metrics: pulls by outcome, rows, durations and
 * API attempts. Structurally a WorkerObserver; observe imports nothing of the worker.
 */
export function metricsObserver(metrics: WorkerMetrics): {
  pull(
    report: string,
    event:
      | { outcome: 'loaded' | 'superseded'; rows: number; fetchMs: number; loadMs: number; totalMs: number }
      | { outcome: 'retry' | 'failed' | 'rate_limited' },
  ): void;
  attempt(event: { status: number | undefined; attempt: number; path: string }): void;
} {
  return {
    pull(report, event) {
      metrics.pulls.inc({ report, outcome: event.outcome });
      if (event.outcome !== 'loaded' && event.outcome !== 'superseded') return;
      metrics.rowsLoaded.inc({ report }, event.outcome === 'loaded' ? event.rows : 0);
      metrics.fetchSeconds.observe({ report }, event.fetchMs / 1000);
      metrics.loadSeconds.observe({ report }, event.loadMs / 1000);
      metrics.pullSeconds.observe({ report }, event.totalMs / 1000);
    },
    attempt: attemptRecorder(metrics),
  };
}
