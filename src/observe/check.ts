// `adops status --check`: the status as a verdict for monitoring and cron, one line per problem.
import { disagreementLine } from './agreement.js';
import { lateText } from './status-render.js';
import type { Status } from './status.js';

/** One reason the warehouse is not fresh and complete: names the report and, when one, the period. */
export interface CheckProblem {
  readonly report: string;
  readonly kind: 'late' | 'missing' | 'failed' | 'unreconciled' | 'disagrees';
  readonly period?: string;
  readonly line: string;
}

/**
 * The problems of a status: each late report, each overdue missing period (one not yet due, like
 * yesterday before the night's tick, is not one), each period whose last attempt failed and each
 * whose rows do not reconcile with the API's totals. None means all is fresh and complete.
 */
export function checkProblems(status: Status): CheckProblem[] {
  const out: CheckProblem[] = [];
  // Named with its account when the status covers accounts other than `default`.
  const named = status.reports.some((r) => r.account !== 'default');
  for (const r of status.reports) {
    const report = named ? `${r.account}/${r.report}` : r.report;
    if (r.freshness.late) out.push({ report, kind: 'late', line: lateText({ ...r, report }) });
    for (const period of r.overdue)
      out.push({ report, kind: 'missing', period, line: `${report} ${period}: missing` });
    for (const f of r.failed)
      out.push({
        report,
        kind: 'failed',
        period: f.period,
        line: `${report} ${f.period}: failed: ${firstLine(f.error ?? 'no reason recorded')}`,
      });
    for (const u of r.unreconciled)
      out.push({
        report,
        kind: 'unreconciled',
        period: u.period,
        line: `${report} ${u.period}: unreconciled (${u.reason})`,
      });
  }
  for (const d of status.disagreements ?? [])
    if (!d.explained)
      out.push({
        report: d.side.report,
        kind: 'disagrees',
        period: d.periodStart,
        line: disagreementLine(d),
      });
  return out;
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? '';
}
