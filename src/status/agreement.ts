// Reports must agree: per account and period, reports of one grain total the same unless late data explains.
import type { Totals } from '../flatten/types.js';
import { COUNTERS, type CounterName } from '../platform/config/dimensions.js';
import { addDays } from '../platform/dates/calendar.js';
import { rowsOf, type Warehouse } from '../platform/pg/handle.js';
import { sidesOf, type SideRow } from './sql.js';
import { claimAnnouncement } from '../webhooks/events.js';
import type { ReportDisagreesEvent } from '../platform/queue/jobs.js';

/** One report's totals over a period: its own period's row, or the sum of its rows inside it. */
export interface Side {
  readonly report: string;
  readonly totals: Totals;
  readonly firstLoadedAt: string; // ISO instants of the oldest and newest load of its rows of the period.
  readonly lastLoadedAt: string;
  /** True when the report's period is the compared period itself (not a sum of shorter ones). */
  readonly exact: boolean;
}

export interface Disagreement {
  readonly account: string;
  readonly periodStart: string;
  readonly periodEnd: string;
  /** The report that differs from the others, and the one it is compared with (the majority's). */
  readonly side: Side;
  readonly other: Side;
  readonly counters: readonly CounterName[];
  /** True when late data explains it: the smaller numbers were loaded earlier, inside the window. */
  readonly explained: boolean;
  readonly why: string;
}

export interface AgreeingReport {
  readonly name: string;
  readonly lookbackDays: number;
}

/** The disagreements of `reports` inside from..to: each period against every report whose periods tile it. */
export async function readDisagreements(
  wh: Warehouse,
  reports: readonly AgreeingReport[],
  from: string,
  to: string,
  accounts?: readonly string[],
): Promise<Disagreement[]> {
  if (reports.length < 2) return [];
  const names = reports.map((r) => r.name);
  const rows = await rowsOf(wh, sidesOf(wh.schema, names, from, to, accounts ?? null));
  const lookback = new Map(reports.map((r) => [r.name, r.lookbackDays]));
  const groups = new Map<string, SideRow[]>();
  for (const row of rows) {
    const key = `${row.account} ${row.period_start} ${row.period_end}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const out: Disagreement[] = [];
  for (const group of groups.values()) {
    const first = group[0];
    if (first === undefined) continue;
    for (const found of compareSides(group.map(toSide), lookback, first.period_end))
      out.push({
        account: first.account,
        periodStart: first.period_start,
        periodEnd: first.period_end,
        ...found,
      });
  }
  return out;
}

function toSide(row: SideRow): Side {
  return {
    report: row.report,
    totals: row.totals,
    firstLoadedAt: row.first_loaded.toISOString(),
    lastLoadedAt: row.last_loaded.toISOString(),
    exact: row.exact,
  };
}

/** Sides of a period that differ from the majority (ties: newest load) and whether late data explains it. */
export function compareSides(
  sides: readonly Side[],
  lookbackDays: ReadonlyMap<string, number>,
  periodEnd: string,
): Array<Omit<Disagreement, 'account' | 'periodStart' | 'periodEnd'>> {
  if (sides.length < 2 || !sides.some((s) => s.exact)) return [];
  const key = (s: Side) => COUNTERS.map((c) => s.totals[c] ?? '').join(',');
  const count = new Map<string, number>();
  for (const s of sides) count.set(key(s), (count.get(key(s)) ?? 0) + 1);
  const ranked = [...sides].sort(
    (a, b) =>
      (count.get(key(b)) ?? 0) - (count.get(key(a)) ?? 0) ||
      Number(b.exact) - Number(a.exact) ||
      b.lastLoadedAt.localeCompare(a.lastLoadedAt) ||
      a.report.localeCompare(b.report),
  );
  const other = ranked[0];
  if (other === undefined) return [];
  const out: Array<Omit<Disagreement, 'account' | 'periodStart' | 'periodEnd'>> = [];
  for (const side of sides) {
    if (side === other || (!side.exact && !other.exact)) continue;
    const counters = COUNTERS.filter((c) => {
      const a = side.totals[c];
      const b = other.totals[c];
      return a !== null && b !== null && a !== b;
    });
    if (counters.length === 0) continue;
    const days = Math.max(lookbackDays.get(side.report) ?? 0, lookbackDays.get(other.report) ?? 0);
    out.push({ side, other, counters, ...explain(side, other, counters, windowEnd(periodEnd, days)) });
  }
  return out;
}

/** The instant the late-data window of a period closes: its last day plus lookback days, then midnight UTC. */
function windowEnd(periodEnd: string, lookbackDays: number): string {
  return `${addDays(periodEnd, lookbackDays + 1)}T00:00:00.000Z`;
}

/** Late data explains the gap when the smaller side loaded first, while the period was inside its window. */
function explain(
  side: Side,
  other: Side,
  counters: readonly CounterName[],
  closes: string,
): { explained: boolean; why: string } {
  const signs = counters.map((c) => Math.sign((side.totals[c] ?? 0) - (other.totals[c] ?? 0)));
  if (new Set(signs).size > 1) return { explained: false, why: 'counters differ in both directions' };
  const [smaller, larger] = (signs[0] ?? 0) < 0 ? [side, other] : [other, side];
  if (smaller.firstLoadedAt >= larger.lastLoadedAt) {
    const when = smaller.firstLoadedAt === larger.lastLoadedAt ? 'at the same time' : 'earlier';
    return { explained: false, why: `the larger numbers (${larger.report}) were loaded ${when}` };
  }
  if (smaller.firstLoadedAt >= closes)
    return { explained: false, why: 'both were loaded after the late-data window' };
  return {
    explained: true,
    why: `late data: ${smaller.report} was loaded earlier, inside the late-data window; a re-pull restates it`,
  };
}

/** One line naming account, period, both reports, their sums and load times. */
export function disagreementLine(d: Disagreement): string {
  const period = d.periodStart === d.periodEnd ? d.periodStart : `${d.periodStart}..${d.periodEnd}`;
  const sums = d.counters.map((c) => `${c} ${d.side.totals[c] ?? '-'} vs ${d.other.totals[c] ?? '-'}`);
  return (
    `${d.account} ${period}: ${d.side.report} and ${d.other.report} disagree: ${sums.join(', ')} ` +
    `(loaded ${stamp(d.side.lastLoadedAt)} and ${stamp(d.other.lastLoadedAt)}; ${d.why})`
  );
}

function stamp(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')}Z`;
}

/** The status section: every disagreement, those restatement cannot explain first. */
export function renderDisagreements(list: readonly Disagreement[]): string[] {
  if (list.length === 0) return [];
  const ordered = [...list].sort((a, b) => Number(a.explained) - Number(b.explained));
  return [
    '',
    'Reports that disagree (totals of one account and period; `adops backfill` re-pulls a period):',
    ...ordered.map((d) => `  ${disagreementLine(d)}`),
  ];
}

/** Events of unexplained disagreements not yet announced: claimed in the warehouse (keyed by its sums). */
export async function disagreementEvents(
  wh: Warehouse,
  list: readonly Disagreement[],
): Promise<ReportDisagreesEvent[]> {
  const events: ReportDisagreesEvent[] = [];
  for (const d of list) {
    if (d.explained) continue;
    const sums = `${COUNTERS.map((c) => d.side.totals[c]).join(',')}/${COUNTERS.map((c) => d.other.totals[c]).join(',')}`;
    const key = [d.account, d.periodStart, d.periodEnd, d.side.report, d.other.report, sums] as const;
    if (!(await claimAnnouncement(wh, key))) continue;
    events.push({
      type: 'report.disagrees',
      ...(d.account === 'default' ? {} : { account: d.account }),
      report: d.side.report,
      other_report: d.other.report,
      period_start: d.periodStart,
      period_end: d.periodEnd,
      counters: d.counters,
      totals: d.side.totals,
      other_totals: d.other.totals,
      loaded_at: d.side.lastLoadedAt,
      other_loaded_at: d.other.lastLoadedAt,
      reason: d.why,
    });
  }
  return events;
}
