// `adops status` for people and monitors: terminal text and `--check`'s verdict; pure (reads a Status).
import { addDays } from '../platform/dates/calendar.js';
import { disagreementLine, renderDisagreements } from './agreement.js';
import { terminalSafe } from './format.js';
import type { CellState, ReportStatus, Status } from './status.js';
import type { UnconfiguredAccount } from './sql.js';
import { problemText } from '../catalogue/fields.js';
import type { EntitySyncStatus } from '../catalogue/runs.js';

const CELL: Record<CellState, string> = {
  loaded: '█',
  zero: '○',
  failed: '✗',
  missing: '·',
  dropped: '-',
  unstarted: ' ',
  provisional: '~',
};

/** Consecutive dates folded into ranges: 2026-01-01..2026-01-03, 2026-01-07. */
export function foldDates(dates: readonly string[]): string[] {
  const sorted = [...dates].sort();
  const out: string[] = [];
  let start: string | undefined;
  let prev: string | undefined;
  const flush = () => {
    if (start !== undefined && prev !== undefined) out.push(start === prev ? start : `${start}..${prev}`);
  };
  for (const d of sorted) {
    if (prev !== undefined && addDays(prev, 1) === d) {
      prev = d;
      continue;
    }
    flush();
    start = prev = d;
  }
  flush();
  return out;
}

/** The status as terminal text (no colours, so it pipes and logs cleanly). */
export function renderStatus(status: Status): string {
  const lines: string[] = [];
  // With accounts (ADOPS_ACCOUNTS_FILE), reports are grouped under each account and named with it.
  const accounts = [...new Set(status.reports.map((r) => r.account))];
  const multi = accounts.length > 1 || (accounts[0] ?? 'default') !== 'default';
  const name = (r: ReportStatus) => (multi ? `${r.account}/${r.report}` : r.report);
  const groups = (each: (r: ReportStatus) => string) =>
    accounts.flatMap((a) => [
      ...(multi ? [`  account ${a}:`] : []),
      ...status.reports.filter((r) => r.account === a).map(each),
    ]);
  const nameWidth = Math.max(6, ...status.reports.map((r) => r.report.length));
  const columns: Array<[string, (r: ReportStatus) => string | number]> = [
    ['last loaded', (r) => r.lastLoaded ?? '-'],
    ['loaded', (r) => `${r.loaded}/${r.expected}`],
    ['missing', (r) => r.missing.length],
    ['failed', (r) => r.failed.length],
    ['unreconciled', (r) => r.unreconciled.length],
    ['zero rows', (r) => r.zeroRows.length],
  ];
  const cells = (r: ReportStatus) =>
    columns.map(([h, v], i) => (i === 0 ? String(v(r)).padEnd(h.length) : String(v(r)).padStart(h.length)));
  lines.push(`Warehouse, last ${status.days} days (up to yesterday):`);
  lines.push(`  ${['report'.padEnd(nameWidth), ...columns.map(([h]) => h)].join('  ')}`);
  lines.push(...groups((r) => `  ${[r.report.padEnd(nameWidth), ...cells(r)].join('  ')}`));
  const problems: string[] = [];
  for (const r of status.reports) {
    if (r.freshness.late) problems.push(`  ${lateText({ ...r, report: name(r) })}`);
    if (r.missing.length > 0) problems.push(`  ${name(r)}: missing ${foldDates(r.missing).join(', ')}`);
    for (const f of r.failed)
      // The stored error may quote an API body: printed for a terminal, its controls are escaped.
      problems.push(`  ${name(r)} ${f.period}: failed: ${terminalSafe(f.error ?? 'no reason recorded')}`);
    for (const u of r.unreconciled) problems.push(`  ${name(r)} ${u.period}: ${unreconciledText(u)}`);
    if (r.zeroRows.length > 0)
      problems.push(`  ${name(r)}: zero rows while neighbours had rows: ${foldDates(r.zeroRows).join(', ')}`);
  }
  if (problems.length > 0)
    lines.push('', 'Problems (`adops heal` re-pulls missing and failed periods):', ...problems);
  const provisional = status.reports.flatMap((r) => [
    ...(r.today === undefined
      ? []
      : [
          `  ${name(r)} ${r.today.period}: ${r.today.rows ?? 0} rows, refreshed ${r.today.refreshedAt ?? '?'}`,
        ]),
    ...(r.provisional ?? []).map((p) => `  ${name(r)} ${p}: ended, provisional until its final pull`),
  ]);
  if (provisional.length > 0)
    lines.push(
      '',
      "Today, provisional (each pull replaces the last; final once a pull after the period's end loads it):",
      ...provisional,
    );
  lines.push(...renderDisagreements(status.disagreements ?? []));
  if (status.restatements.length > 0) {
    lines.push('', 'Re-pulls by period age (how much late data changed totals):');
    lines.push('  report'.padEnd(nameWidth + 2) + '  age  reloads  restated  max change');
    for (const s of status.restatements)
      lines.push(
        `  ${s.report.padEnd(nameWidth)}  ${String(s.age_days).padStart(3)}  ${String(s.loads).padStart(7)}  ` +
          `${String(s.restated).padStart(8)}  ${(s.max_rel_change * 100).toFixed(2).padStart(9)}%`,
      );
  }
  const retained = status.reports.filter((r) => (r.droppedByRetention ?? []).length > 0);
  if (retained.length > 0) {
    lines.push(
      '',
      "Dropped by retention (older than the report's retention_months; not missing, not re-pulled):",
    );
    for (const r of retained)
      lines.push(`  ${r.report}: dropped by retention: ${foldDates(r.droppedByRetention ?? []).join(', ')}`);
  }
  if ((status.evolutions ?? []).length > 0) {
    lines.push('', 'Changed reports (report_<name> serves the old version until the new one covers it):');
    for (const e of status.evolutions ?? [])
      lines.push(
        `  ${e.report.padEnd(nameWidth)}  version ${e.from} -> ${e.to}: ${e.covered} of ${e.periods} periods in the new shape`,
      );
  }
  lines.push(...renderEntityStatus(status.entities));
  lines.push(...renderUnconfiguredAccounts(status.unconfiguredAccounts ?? []));
  lines.push('', 'Queues:');
  if (status.queues === null)
    lines.push(`  unavailable: ${terminalSafe(status.queueError ?? 'unknown error')}`);
  else
    for (const [name, c] of Object.entries(status.queues))
      lines.push(
        `  ${name.padEnd(13)} waiting ${c.waiting}, active ${c.active}, delayed ${c.delayed}, failed ${c.failed}` +
          ((c.failedHealed ?? 0) > 0 ? ` (${c.failedHealed} more healed since)` : ''),
      );
  lines.push(
    '',
    `Coverage, one column per day (${status.gridDays[0] ?? ''} .. ${status.gridDays.at(-1) ?? ''}):`,
  );
  lines.push(`  ${''.padEnd(nameWidth)}  ${axis(status.gridDays)}`);
  lines.push(...groups((r) => `  ${r.report.padEnd(nameWidth)}  ${r.cells.map((c) => CELL[c]).join('')}`));
  lines.push(
    `  ${CELL.loaded} loaded  ${CELL.zero} zero rows  ${CELL.failed} failed  ${CELL.missing} missing` +
      (retained.length > 0 ? `  ${CELL.dropped} dropped by retention` : '') +
      (status.reports.some((r) => r.cells.includes('provisional'))
        ? `  ${CELL.provisional} provisional`
        : '') +
      (status.reports.some((r) => r.cells.includes('unstarted')) ? '  (blank) before start_date' : ''),
  );
  return `${lines.join('\n')}\n`;
}

function unreconciledText(u: Status['reports'][number]['unreconciled'][number]): string {
  if (u.reason === 'no totals') return 'no totals: the API sent none, so the rows are loaded unchecked';
  if (u.reason === 'partial totals')
    return `partial totals: the API left some counters out, the rest were checked: ${JSON.stringify(u.mismatch)}`;
  return `rows do not add up to totals: ${JSON.stringify(u.mismatch)}`;
}

/** A day axis: the day of month every 7 columns, aligned over the grid. */
function axis(days: readonly string[]): string {
  let out = '';
  for (let i = 0; i < days.length; i++) {
    if (out.length > i) continue;
    out += i % 7 === 0 ? (days[i] ?? '').slice(8, 10) : ' ';
  }
  return out.slice(0, days.length);
}

/** One line saying a report is late: how old its newest data is against its freshness limit. */
function lateText(r: Pick<ReportStatus, 'report' | 'freshness' | 'lastLoaded'>): string {
  const hours = r.freshness.limitHours;
  // A limit under an hour (`freshness: 30m`) in minutes, not as a fraction of an hour.
  const limit = `freshness ${hours >= 1 ? `${hours}h` : `${Math.round(hours * 60)}m`}`;
  if (r.freshness.ageHours === null) return `${r.report}: late: nothing loaded in the window (${limit})`;
  return (
    `${r.report}: late: newest loaded period ${r.lastLoaded ?? '?'} ended ${r.freshness.ageHours}h ago ` +
    `(${limit})`
  );
}

/** Problems listed in full under the per-field counts. */
const SHOWN = 5;

function renderEntityStatus(e: EntitySyncStatus | undefined): string[] {
  if (e === undefined || (e.lastWritten === null && e.latest === null)) return [];
  const lines = ['', 'Catalogue (adops sync):'];
  const w = e.lastWritten;
  if (w === null) lines.push('  never written');
  else {
    const r = w.result;
    lines.push(
      `  last written ${w.finishedAt} (run ${w.runId}): ${r.campaigns ?? 0} campaigns, ${r.creatives ?? 0} creatives, ` +
        `${r.deleted ?? 0} newly deleted, ${r.revived ?? 0} revived`,
    );
    const p = w.problems;
    if (p !== null && p.count > 0) {
      const skipped = p.skipped > 0 ? `; ${p.skipped} entities with an unreadable id were skipped` : '';
      const repaired = p.repaired ?? 0;
      if (p.count > repaired)
        lines.push(
          `  ${p.count - repaired} fields could not be read and were stored as NULL (raw keeps them)${skipped}:`,
        );
      if (repaired > 0)
        lines.push(
          `  ${repaired} text fields held NUL characters or unpaired surrogates, which Postgres cannot store: ` +
            'stored with the NULs removed and U+FFFD for each surrogate, in their columns and in raw:',
        );
      for (const [field, n] of Object.entries(p.byField)) lines.push(`    ${field}: ${n}`);
      for (const problem of p.examples.slice(0, SHOWN)) lines.push(`    e.g. ${problemText(problem)}`);
    }
  }
  const l = e.latest;
  if (l !== null) {
    const of = `${l.campaignsDone}/${l.campaignsTotal ?? '?'} campaigns, ${l.requests} requests, try ${l.tries}`;
    if (l.state === 'failed')
      lines.push(`  run ${l.runId} failed: ${terminalSafe(l.error ?? 'no reason recorded')}`);
    else if (l.state === 'running') lines.push(`  run ${l.runId} running since ${l.startedAt}: ${of}`);
    else
      lines.push(
        `  run ${l.runId} interrupted at ${l.updatedAt} (${of}); it resumes from its checkpoint when its job runs again`,
      );
  }
  return lines;
}

/** One reason the warehouse is not fresh and complete: names the report and, when one, the period. */
export interface CheckProblem {
  readonly report: string;
  readonly kind: 'late' | 'missing' | 'failed' | 'unreconciled' | 'disagrees' | 'unmigrated' | 'queues';
  readonly period?: string;
  readonly line: string;
}

/** The problems of a status: queues, unmigrated, late, overdue, failed, unreconciled, disagreeing. */
export function checkProblems(status: Status): CheckProblem[] {
  const out: CheckProblem[] = [];
  const add = (report: string, kind: CheckProblem['kind'], line: string, period?: string) =>
    out.push({ report, kind, ...(period === undefined ? {} : { period }), line });
  // Fresh tables say nothing of tomorrow: without the queues nothing is scheduled, pulled or loaded.
  if (status.queues === null)
    add(
      'queues',
      'queues',
      `queues: cannot be read (${status.queueError ?? 'unknown error'}): nothing can be queued or loaded`,
    );
  for (const u of status.unmigrated ?? [])
    add(
      u.report,
      'unmigrated',
      `${u.report}: no table has its dimensions (${u.dimensions.join(', ')}): run \`adops migrate\``,
    );
  // Named with its account when the status covers accounts other than `default`.
  const named = status.reports.some((r) => r.account !== 'default');
  for (const r of status.reports) {
    const report = named ? `${r.account}/${r.report}` : r.report;
    if (r.freshness.late) add(report, 'late', lateText({ ...r, report }));
    for (const period of r.overdue) add(report, 'missing', `${report} ${period}: missing`, period);
    for (const { period, error } of r.failed)
      add(
        report,
        'failed',
        `${report} ${period}: failed: ${(error ?? 'no reason recorded').split('\n')[0]}`,
        period,
      );
    for (const u of r.unreconciled)
      add(report, 'unreconciled', `${report} ${u.period}: unreconciled (${u.reason})`, u.period);
  }
  for (const d of status.disagreements ?? [])
    if (!d.explained) add(d.side.report, 'disagrees', disagreementLine(d), d.periodStart);
  return out;
}

/** The status lines naming each unconfigured account holding rows, and what to do about it. */
function renderUnconfiguredAccounts(accounts: readonly UnconfiguredAccount[]): string[] {
  return accounts.flatMap((a) => [
    '',
    `account ${a.account} holds rows but is not configured (ADOPS_ACCOUNTS_FILE): ${a.loads} loads ` +
      `(${a.loadedPeriods} periods loaded${a.first === null ? '' : `, ${a.first} to ${a.last ?? a.first}`}), ` +
      `${a.campaigns} campaigns; the bi_ views count them beside the configured accounts.`,
    `  If it is a configured account's server under its old name: stop the workers, then ` +
      `adops accounts rename ${a.account} NAME (--merge when NAME holds rows too).`,
  ]);
}
