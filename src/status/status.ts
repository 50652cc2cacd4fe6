// `adops status`, collected: a plain JSON-able object, so scripts (--json) and the renderer read the same.
import type { JobSet, ReportJob } from '../platform/config/jobs.js';
import { readDisagreements, type Disagreement } from './agreement.js';
import { entitySyncStatus, type EntitySyncStatus } from '../catalogue/runs.js';
import { coverage } from '../evolution/evolution.js';
import { definitionsWithoutTable, readVersions } from '../schema/versions.js';
import { countHealedSince, loadStates, restatements, unreconciledPeriods } from '../pull/history.js';
import type { RestatementSummary } from '../pull/history.js';
import { addDays, localDate } from '../platform/dates/calendar.js';
import { periodContaining, periodKey, type PeriodUnit } from '../platform/dates/periods.js';
import {
  healWindow,
  periodsToHeal,
  zeroRowOutliers,
  type PeriodState,
  ONLY_DEFAULT,
  type PlanAccount,
} from '../plan/pulls.js';
import { freshnessOf, isDue } from '../plan/freshness.js';
import { beforeStart, fromStart, startOf } from '../plan/bounds.js';
import { droppedByRetention, retentionBoundary } from '../plan/retention.js';
import { COUNTED_STATES, failedPulls, jobCounts, REPORT_QUEUE } from '../platform/queue/jobs.js';
import type { Queues } from '../platform/queue/queues.js';
import { runsReport } from '../platform/config/accounts.js';
import { rowsOf, type Warehouse } from '../platform/pg/handle.js';
import { unconfiguredAccounts, type UnconfiguredAccount } from './sql.js';

const HOUR_MS = 3_600_000;

export type CellState = 'loaded' | 'zero' | 'failed' | 'missing' | 'dropped' | 'unstarted' | 'provisional';

export interface ReportStatus {
  readonly account: string; // The ad server account (ADOPS_ACCOUNTS_FILE; `default` without one).
  readonly report: string;
  readonly period: PeriodUnit;
  /** Newest period whose rows are loaded (within the window), as its start date. */
  readonly lastLoaded: string | null;
  readonly expected: number;
  readonly loaded: number;
  readonly missing: readonly string[]; // Period starts with no load on record.
  /** Period starts older than the report's retention_months: dropped, so neither expected nor missing. */
  readonly droppedByRetention?: readonly string[];
  /** Where the report starts for this account (the later start_date); no period ending before it is expected. */
  readonly startDate?: string;
  /** Periods whose last attempt failed, with its reason (the rows of an earlier load, if any, stay). */
  readonly failed: ReadonlyArray<{ readonly period: string; readonly error: string | null }>;
  /** Periods whose rows could not be reconciled with the totals: mismatch, no totals or partial totals. */
  readonly unreconciled: ReadonlyArray<{
    readonly period: string;
    readonly reason: string;
    readonly mismatch: unknown;
  }>;
  readonly zeroRows: readonly string[]; // Periods loaded with zero rows while a loaded neighbour had rows.
  readonly cells: readonly CellState[];
  /** The newest loaded period's end against the report's freshness limit (`freshness:` or its default). */
  readonly freshness: {
    readonly limitHours: number;
    /** Hours since the newest loaded period ended; null when none is loaded in the window. */
    readonly ageHours: number | null;
    readonly late: boolean;
  };
  /** Missing periods older than the freshness limit or than a loaded period: should be loaded by now. */
  readonly overdue: readonly string[];
  /** Ended periods of the window loaded only provisionally (before they ended): neither loaded nor missing. */
  readonly provisional?: readonly string[];
  /** The current, unfinished period when a provisional pull loaded it: its rows and last refresh. */
  readonly today?: { period: string; rows: number | null; refreshedAt: string | null };
}

/** Jobs of one queue by state; for pulls, `failed` leaves out those loaded since (`failedHealed`). */
export type QueueCounts = Readonly<
  Record<'waiting' | 'active' | 'delayed' | 'failed' | 'completed', number>
> & {
  readonly failedHealed?: number;
};

export interface Status {
  readonly generatedAt: string;
  readonly days: number;
  readonly gridDays: readonly string[]; // The grid's days, oldest first (UTC dates).
  readonly reports: readonly ReportStatus[];
  /** How much re-pulls changed periods' totals, by report and age in days. */
  readonly restatements: readonly RestatementSummary[];
  /** Counts per queue; null when the queue store could not be read (the warehouse part still shows). */
  readonly queues: Readonly<Record<string, QueueCounts>> | null;
  readonly queueError?: string;
  /** The catalogue syncs: the last written and a newer one running, interrupted or failed. */
  readonly entities?: EntitySyncStatus;
  /** Reports of one grain whose totals differ on a period of the window (status/agreement.ts). */
  readonly disagreements?: readonly Disagreement[];
  /** Reports whose dimensions changed: how far the new table version has come. */
  readonly evolutions?: readonly EvolutionProgress[];
  /** Accounts holding rows that are not configured (readUnconfiguredAccounts); read without --account. */
  readonly unconfiguredAccounts?: readonly UnconfiguredAccount[];
  /** Definitions whose dimensions no table has (`adops migrate` not run since they changed): none can load. */
  readonly unmigrated?: ReadonlyArray<{ readonly report: string; readonly dimensions: readonly string[] }>;
}

/** The accounts holding loads or campaigns that are not in `configured`, each with what it holds. */
export function readUnconfiguredAccounts(
  wh: Warehouse,
  configured: readonly string[],
): Promise<UnconfiguredAccount[]> {
  return rowsOf(wh, unconfiguredAccounts(wh.schema, configured));
}

/** A report loading a new version of its table beside the one report_<name> serves. */
export interface EvolutionProgress {
  readonly report: string;
  readonly from: number;
  readonly to: number;
  readonly periods: number; // Periods the serving version holds, and of those, loaded in the new shape.
  readonly covered: number;
}

async function evolutions(wh: Warehouse, jobs: JobSet): Promise<EvolutionProgress[]> {
  const building = new Set(
    (await readVersions(wh)).filter((v) => v.state === 'building').map((v) => v.report),
  );
  const names = jobs.reports.map((r) => r.name).filter((n) => building.has(n));
  const states = await Promise.all(names.map((n) => coverage(wh, n)));
  return states
    .filter((c) => c !== undefined)
    .map((c) => ({
      report: c.report,
      from: c.serving.version,
      to: c.building.version,
      periods: c.periods,
      covered: c.covered,
    }));
}

/** Collects the status of every report over the last `days` days; `queues` undefined when unreachable. */
export async function collectStatus(
  wh: Warehouse,
  jobs: JobSet,
  queues: QueueSource | Promise<QueueSource | undefined> | undefined,
  days: number,
  now: Date = new Date(),
  accounts: readonly PlanAccount[] = ONLY_DEFAULT,
): Promise<Status> {
  const yesterday = addDays(localDate(now, 'UTC'), -1);
  const gridDays = Array.from({ length: days }, (_, i) => addDays(yesterday, i - days + 1));
  // Grouped by account: each account's reports together, in the order the accounts are listed.
  const pairs = accounts.flatMap((a) =>
    jobs.reports.filter((r) => runsReport(a, r.name)).map((r) => [a, r] as const),
  );
  const [reports, restated, entities, evolving, queueCounts, disagreements, unmigrated] = await Promise.all([
    Promise.all(pairs.map(([a, r]) => reportStatus(wh, r, days, gridDays, now, a.name, startOf(r, a)))),
    restatements(wh),
    entitySyncStatus(wh),
    evolutions(wh, jobs),
    // Awaited inside, so that no promise above waits without a handler meanwhile.
    readQueueCounts(queues, wh),
    readDisagreements(
      wh,
      jobs.reports,
      gridDays[0] ?? yesterday,
      yesterday,
      accounts.map((a) => a.name),
    ),
    definitionsWithoutTable(wh, [...new Map(pairs.map(([, r]) => [r.name, r])).values()]),
  ]);
  return {
    generatedAt: now.toISOString(),
    days,
    gridDays,
    reports,
    restatements: restated,
    queues: queueCounts.counts,
    entities,
    evolutions: evolving,
    disagreements,
    unmigrated,
    ...(queueCounts.error === undefined ? {} : { queueError: queueCounts.error }),
  };
}

export type QueueSource = Pick<Queues, 'pulls' | 'ticks' | 'syncs'>;

async function readQueueCounts(
  source: QueueSource | Promise<QueueSource | undefined> | undefined,
  wh: Warehouse,
): Promise<{ counts: Record<string, QueueCounts> | null; error?: string }> {
  const queues = await source;
  if (queues === undefined) return { counts: null, error: 'the queue store (ADOPS_QUEUE) is not reachable' };
  try {
    const read = await jobCounts(queues, ...COUNTED_STATES);
    const counts: Record<string, QueueCounts> = Object.fromEntries(
      Object.entries(read).map(([name, c]) => [name, toCounts(c)]),
    );
    // BullMQ keeps a failed pull for 14 days: one whose period loaded since is no failure any more.
    const pulls = counts[REPORT_QUEUE];
    if (pulls !== undefined) {
      const healed = pulls.failed === 0 ? 0 : await countHealedSince(wh, await failedPulls(queues.pulls));
      counts[REPORT_QUEUE] = { ...pulls, failed: pulls.failed - healed, failedHealed: healed };
    }
    return { counts };
  } catch (error) {
    return { counts: null, error: error instanceof Error ? error.message : String(error) };
  }
}

/** The status of one report over its window of `days` days (up to yesterday in its time zone). */
async function reportStatus(
  wh: Warehouse,
  r: ReportJob,
  days: number,
  gridDays: readonly string[],
  now: Date,
  account: string,
  start: string | undefined,
): Promise<ReportStatus> {
  const yesterday = gridDays.at(-1) ?? addDays(localDate(now, 'UTC'), -1);
  const whole = healWindow(now, r.schedule?.timezone ?? 'UTC', r.period, days);
  const boundary = retentionBoundary(r, now);
  const dropped = whole.filter((p) => droppedByRetention(p, boundary));
  const window = fromStart(
    whole.filter((p) => !dropped.includes(p)),
    start,
  );
  const from = window[0]?.start ?? yesterday;
  const to = window.at(-1)?.end ?? yesterday;
  const current = periodContaining(localDate(now, r.schedule?.timezone ?? 'UTC'), r.period);
  const [states, unrec] = await Promise.all([
    loadStates(wh, r, from, current.end > to ? current.end : to, account),
    unreconciledPeriods(wh, r, from, to, account),
  ]);
  const byKey = new Map(states.map((s) => [periodKey(s), s]));
  const heal = new Set(periodsToHeal(window, states).map(periodKey));
  const failed = states.filter((s) => s.lastStatus === 'failed');
  const loadedStates = window
    .map((p) => byKey.get(periodKey(p)))
    .filter((s): s is PeriodState => s !== undefined && s.rows !== null && s.provisional !== true);
  const zero = new Set(zeroRowOutliers(loadedStates).map((s) => s.start));
  const cell = (day: string): CellState => {
    const p = periodContaining(day, r.period);
    if (droppedByRetention(p, boundary)) return 'dropped';
    if (beforeStart(p, start)) return 'unstarted';
    const s = byKey.get(periodKey(p));
    if (s === undefined) return 'missing';
    if (s.lastStatus === 'failed') return 'failed';
    if (s.provisional === true) return 'provisional';
    return s.rows === 0 ? 'zero' : 'loaded';
  };
  const newest = loadedStates.at(-1);
  // Nothing loaded yet is late only once the first period from the start should be in.
  const fresh = freshnessOf(r, newest, now);
  const early =
    newest === undefined &&
    start !== undefined &&
    !isDue(r, periodContaining(start, r.period), now, fresh.limitMs);
  const missing = window.filter((p) => heal.has(periodKey(p)) && !byKey.has(periodKey(p)));
  const today = byKey.get(periodKey(current));
  return {
    account,
    report: r.name,
    period: r.period,
    lastLoaded: newest?.start ?? null,
    expected: window.length,
    loaded: loadedStates.length,
    missing: missing.map((p) => p.start),
    droppedByRetention: dropped.map((p) => p.start),
    ...(start === undefined ? {} : { startDate: start }),
    failed: failed.map((s) => ({ period: s.start, error: s.error })),
    unreconciled: unrec.map((u) => ({
      period: u.start,
      reason: u.reason ?? 'mismatch',
      mismatch: u.mismatch,
    })),
    zeroRows: [...zero],
    cells: gridDays.map(cell),
    freshness: {
      limitHours: fresh.limitMs / HOUR_MS,
      ageHours: fresh.ageMs === null ? null : Math.round((fresh.ageMs / HOUR_MS) * 10) / 10,
      late: fresh.late && !early,
    },
    overdue: missing
      .filter((p) => isDue(r, p, now, fresh.limitMs) || (newest !== undefined && p.start < newest.start))
      .map((p) => p.start),
    provisional: window
      .filter((p) => p.start < current.start && byKey.get(periodKey(p))?.provisional === true)
      .map((p) => p.start),
    ...(today && {
      today: {
        period: today.start,
        rows: today.rows,
        refreshedAt: today.lastLoadedAt?.toISOString() ?? null,
      },
    }),
  };
}

function toCounts(c: Record<string, number>): QueueCounts {
  return {
    waiting: (c.waiting ?? 0) + (c.prioritized ?? 0),
    active: c.active ?? 0,
    delayed: c.delayed ?? 0,
    failed: c.failed ?? 0,
    completed: c.completed ?? 0,
  };
}
