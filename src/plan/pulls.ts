// The plans of a backfill, a heal and a scheduler tick, made without Redis or Postgres so every plan can be
// printed (--dry-run) and tested.
import {
  type Period,
  periodContaining,
  periodsBetween,
  previousPeriod,
  type PeriodUnit,
  periodKey,
  nextPeriod,
} from '../platform/dates/periods.js';
import { addDays, daysBetween, localDate, parseIsoDate } from '../platform/dates/calendar.js';
import { TerminalError } from '../platform/retry/errors.js';
import type { ReportJob } from '../platform/config/jobs.js';
import { DEFAULT_DAYS_PER_REQUEST } from '../platform/config/accounts.js';
import { retained } from './retention.js';
import { reportTimezone, startedOnly } from './bounds.js';

export interface PlannedPull {
  readonly account?: string; // The ad server account; DEFAULT_ACCOUNT when absent.
  readonly report: string;
  readonly period: Period;
  /** The table version the pull is planned for, when a report is evolving (see PullJobData). */
  readonly version?: number;
  readonly provisional?: true; // the current, unfinished period (see PullJobData)
  /** The last period's end when one request covers the consecutive periods from `period` on. */
  readonly until?: string | undefined;
}

/** A short label for logs and messages: `daily_campaign 2026-01-05` or `... 2026-01-05..2026-01-11`. */
export function pullLabel(pull: PlannedPull): string {
  const { start } = pull.period;
  const end = pull.until ?? pull.period.end;
  const who = pull.account === undefined || pull.account === 'default' ? '' : `${pull.account}/`;
  return `${who}${pull.report} ${start === end ? start : `${start}..${end}`}`;
}

/** `reports` undefined: all; `startDate`: see plan/bounds.ts. */
export type PlanAccount = {
  readonly name: string;
  readonly reports: readonly string[] | undefined;
  readonly startDate?: string | undefined;
  readonly daysPerRequest?: number | undefined; // its days_per_request (ADOPS_DAYS_PER_REQUEST)
};

/** Days one request of `report` may cover: its job's days_per_request, else its account's, else 7; 1 without
 * the day dimension (nothing in a row would tell its period). */
export function requestDays(
  report: Pick<ReportJob, 'dimensions' | 'daysPerRequest'>,
  account?: Pick<PlanAccount, 'daysPerRequest'>,
): number {
  if (!report.dimensions.includes('day')) return 1;
  return report.daysPerRequest ?? account?.daysPerRequest ?? DEFAULT_DAYS_PER_REQUEST;
}

/** `pulls` with consecutive periods of one account, report and version joined into requests spanning at most
 * requestDays days (at least one period each), lazily: a request is let go once full or its run breaks. */
export function* inRequests(
  pulls: Iterable<PlannedPull>,
  reports: readonly Pick<ReportJob, 'name' | 'dimensions' | 'daysPerRequest'>[],
  accounts: readonly PlanAccount[] = ONLY_DEFAULT,
): Generator<PlannedPull> {
  const days = (pull: PlannedPull) => {
    const report = reports.find((r) => r.name === pull.report);
    const account = accounts.find((a) => a.name === (pull.account ?? 'default'));
    return report === undefined ? 1 : requestDays(report, account);
  };
  type Run = PlannedPull & { until: string };
  const open = new Map<string, Run>();
  const done = ({ until, ...pull }: Run) => (until === pull.period.end ? pull : { ...pull, until });
  for (const pull of pulls) {
    const key = `${pull.account ?? ''}/${pull.report}/${pull.version ?? ''}`;
    const max = days(pull);
    const p = pull.period;
    const run = open.get(key);
    let grown: Run | undefined;
    // Backfills plan newest first, ticks oldest first: a run grows either way.
    if (run !== undefined && addDays(run.until, 1) === p.start) grown = { ...run, until: p.end };
    else if (run !== undefined && addDays(p.end, 1) === run.period.start) grown = { ...run, period: p };
    if (grown !== undefined && daysBetween(grown.period.start, grown.until) >= max) grown = undefined;
    if (run !== undefined && grown === undefined) yield done(run);
    const next = grown ?? { ...pull, until: p.end };
    // A run as long as a request may be goes at once: the plan's order holds, and it streams.
    if (daysBetween(next.period.start, next.until) + 1 >= max) {
      open.delete(key);
      yield done(next);
    } else open.set(key, next);
  }
  for (const run of open.values()) yield done(run);
}

/** The periods of `unit` one pull covers, `first` through `until` (absent: `first` alone, a job of 1.0);
 * undefined when they are not whole periods of `unit` (the report's period changed since it was planned). */
export function requestPeriods(
  first: Period,
  until: string | undefined,
  unit: PeriodUnit,
): Period[] | undefined {
  if (until === undefined) return [first];
  if (
    periodKey(periodContaining(first.start, unit)) !== periodKey(first) ||
    daysBetween(first.end, until) > 366
  )
    return undefined;
  const out = [first];
  for (let p = first; p.end < until; out.push(p)) p = nextPeriod(p, unit);
  return out.at(-1)?.end === until ? out : undefined;
}

/** The one account of a deployment without ADOPS_ACCOUNTS_FILE. */
export const ONLY_DEFAULT: readonly PlanAccount[] = [{ name: 'default', reports: undefined }];

/** interleaveAccounts, held whole. */
export function planForAccounts<R extends { readonly name: string }>(
  accounts: readonly PlanAccount[],
  reports: readonly R[],
  plan: (reports: readonly R[], account: string) => readonly PlannedPull[],
): PlannedPull[] {
  return [...interleaveAccounts(accounts, reports, plan)];
}

/** Every account's pulls in turn (a,b,c,a,b,c...), so a queue serves every account from the start; lazy. */
export function* interleaveAccounts<R extends { readonly name: string }>(
  accounts: readonly PlanAccount[],
  reports: readonly R[],
  plan: (reports: readonly R[], account: string) => Iterable<PlannedPull>,
): Generator<PlannedPull> {
  let live = accounts.map((a) => ({
    name: a.name,
    pulls: plan(
      reports.filter((r) => a.reports === undefined || a.reports.includes(r.name)),
      a.name,
    )[Symbol.iterator](),
  }));
  while (live.length > 0) {
    const still: typeof live = [];
    for (const a of live) {
      const next = a.pulls.next();
      if (next.done === true) continue;
      yield { ...next.value, account: a.name };
      still.push(a);
    }
    live = still;
  }
}

/** Each account's pull of each report's current, unfinished period at `now` in the report's time zone,
 * provisional; none before a start_date. */
export function todayPulls(
  reports: readonly ReportJob[],
  now: Date,
  accounts: readonly PlanAccount[] = ONLY_DEFAULT,
): PlannedPull[] {
  return planForAccounts(accounts, reports, (own, name) => [
    ...startedOnly(
      own.map((r) => ({
        report: r.name,
        period: periodContaining(localDate(now, reportTimezone(r)), r.period),
        provisional: true as const,
      })),
      own,
      accounts.find((a) => a.name === name),
    ),
  ]);
}

/** A tick's periods, oldest first: the one holding yesterday (in `timezone`) and `lookback` before it. */
export function scheduledWindow(tick: Date, timezone: string, unit: PeriodUnit, lookback: number): Period[] {
  let p = periodContaining(addDays(localDate(tick, timezone), -1), unit);
  const out: Period[] = [p];
  for (let i = 0; i < lookback; i++) {
    p = previousPeriod(p, unit);
    out.unshift(p);
  }
  return out;
}

/** The periods heal and gap repair watch: those overlapping the last `days` days up to yesterday. */
export function healWindow(now: Date, timezone: string, unit: PeriodUnit, days: number): Period[] {
  const today = localDate(now, timezone);
  return periodsBetween(addDays(today, -Math.max(1, days)), addDays(today, -1), unit);
}

/** What the warehouse knows of one period of one report. */
export interface PeriodState {
  readonly start: string;
  readonly end: string;
  readonly lastStatus: 'loaded' | 'failed' | 'superseded';
  readonly rows: number | null;
  readonly lastLoadedAt: Date | null;
  readonly error: string | null;
  /** Its rows are a provisional load's: not final (heal pulls it again once the period has ended). */
  readonly provisional?: boolean;
}

/** The periods of `expected` with no attempt on record, a failed last one (superseded counts as loaded), or
 * only provisional rows (`expected` holds ended periods). */
export function periodsToHeal(expected: readonly Period[], states: readonly PeriodState[]): Period[] {
  const byKey = new Map(states.map((s) => [periodKey(s), s]));
  return expected.filter((p) => {
    const s = byKey.get(periodKey(p));
    return s === undefined || s.lastStatus === 'failed' || s.provisional === true;
  });
}

/** Loaded zero-row periods whose nearest loaded neighbour had rows: an API outage, not a quiet day. */
export function zeroRowOutliers(states: readonly PeriodState[]): PeriodState[] {
  const loaded = states
    .filter((s) => s.lastStatus !== 'failed' && s.rows !== null)
    .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  return loaded.filter((s, i) => {
    if (s.rows !== 0) return false;
    const before = loaded[i - 1];
    const after = loaded[i + 1];
    return (before?.rows ?? 0) > 0 || (after?.rows ?? 0) > 0;
  });
}

export type BackfillOrder = 'newest-first' | 'oldest-first';

/** backfillPulls, held whole. */
export function planBackfill(
  reports: readonly ReportJob[],
  from: string,
  to: string,
  order: BackfillOrder = 'newest-first',
): PlannedPull[] {
  return [...backfillPulls(reports, from, to, order)];
}

/** A backfill's pulls, lazily (any length costs the same memory): `newest-first` by period end, so
 * dashboards get recent days first, or `oldest-first` report by report. Throws for an empty range. */
export function backfillPulls(
  reports: readonly ReportJob[],
  from: string,
  to: string,
  order: BackfillOrder = 'newest-first',
): Generator<PlannedPull, void, undefined> {
  if (parseIsoDate(from) > parseIsoDate(to))
    throw new TerminalError(`the range ${from}..${to} is empty: --from must not be after --to`);
  return order === 'oldest-first' ? oldestFirst(reports, from, to) : newestFirst(reports, from, to);
}

function* oldestFirst(reports: readonly ReportJob[], from: string, to: string): Generator<PlannedPull> {
  for (const r of reports)
    for (let p = periodContaining(from, r.period); p.start <= to; p = nextPeriod(p, r.period))
      yield { report: r.name, period: p };
}

/** Every report's periods merged by period end, newest first; of equal ends, the report defined first. */
function* newestFirst(reports: readonly ReportJob[], from: string, to: string): Generator<PlannedPull> {
  const heads: Array<Period | undefined> = reports.map((r) => periodContaining(to, r.period));
  for (;;) {
    let pick = -1;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i];
      if (head === undefined) continue;
      const best = pick < 0 ? undefined : heads[pick];
      if (best === undefined || head.end > best.end) pick = i;
    }
    const report = reports[pick];
    const period = heads[pick];
    if (report === undefined || period === undefined) return;
    yield { report: report.name, period };
    // Compared before stepping back: the period before the calendar's first is not a date.
    heads[pick] = period.start > from ? previousPeriod(period, report.period) : undefined;
  }
}

/** The periods heal watches for `report`, less those past its retention (dropped on purpose). */
export function healWindowOf(report: ReportJob, now: Date, days: number): Period[] {
  return retained(report, healWindow(now, report.schedule?.timezone ?? 'UTC', report.period, days), now);
}

export function planHeal(
  report: ReportJob,
  window: readonly Period[],
  states: readonly PeriodState[],
): PlannedPull[] {
  return periodsToHeal(window, states).map((period) => ({ report: report.name, period }));
}

/** The scheduled job's facts a tick needs (a subset of a BullMQ Job). */
export interface TickJob {
  readonly id?: string | undefined;
  readonly data: { report?: unknown; today?: unknown };
  readonly timestamp: number;
  readonly delay?: number;
  readonly opts: { prevMillis?: number | undefined };
}

/** The instant a tick was scheduled for (`prevMillis`, or the job id's `repeat:<scheduler>:<millis>`). */
export function scheduledTime(job: TickJob): Date {
  if (typeof job.opts.prevMillis === 'number') return new Date(job.opts.prevMillis);
  const fromId = /:(\d{10,})$/.exec(job.id ?? '');
  if (fromId !== null) return new Date(Number(fromId[1]));
  return new Date(job.timestamp + (job.delay ?? 0));
}

/** The periods a tick pulls again (`window`), and those whose gaps it repairs (`watched`). */
interface TickWindows {
  readonly window: Period[];
  readonly watched: Period[];
}

/** The windows of a tick scheduled at `at`, run `now`: a tick that waited days for a worker heals up
 * to yesterday, while its window stays that of its own night. */
export function tickWindows(report: ReportJob, at: Date, now: Date, healDays: number): TickWindows {
  const tz = report.schedule?.timezone ?? 'UTC';
  // Periods past the report's retention_months are dropped on purpose: neither pulled nor healed.
  return {
    window: retained(report, scheduledWindow(at, tz, report.period, report.lookbackDays), now),
    watched: retained(report, healWindow(now > at ? now : at, tz, report.period, healDays), now),
  };
}

/** A tick's whole window (pulled again for late data), then the watched gaps outside it, newest first, at
 * most `gapCap`, so a long outage heals over several nights. */
export function planTick(
  windows: TickWindows,
  states: readonly PeriodState[],
  gapCap: number,
): { window: Period[]; gaps: Period[] } {
  const inWindow = new Set(windows.window.map(periodKey));
  const gaps = gapCap <= 0 ? [] : periodsToHeal(windows.watched, states);
  const extra = gaps
    .filter((p) => !inWindow.has(periodKey(p)))
    .sort((a, b) => (a.start < b.start ? 1 : a.start > b.start ? -1 : 0))
    .slice(0, gapCap);
  return { window: [...windows.window], gaps: extra };
}
