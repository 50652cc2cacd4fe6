// Rows "report params <form>": a server that misreads a form may still answer 200 (keeping one `dimensions`
// value), so the report must parse as the nested [day, campaign_id] asked for and sum to the [day] report's.
import { type Dimension, COUNTERS } from '../platform/config/dimensions.js';
import { parseReport, type ParsedReport } from '../flatten/parse.js';
import { type Period } from '../flatten/types.js';
import {
  describeAnswer,
  isSuccess,
  REPORT_FORMS,
  type FormObservation,
  type FormOutcome,
  type Observations,
  type ReportForm,
  row,
  type RowStatus,
} from './types.js';

/** The two dimensions asked for: two levels, the second keyed by ids, so misreadings show. */
export const PAIR: readonly Dimension[] = ['day', 'campaign_id'];
export const DAY: readonly Dimension[] = ['day'];

type FormJudgement = { readonly outcome: FormOutcome; readonly detail: string };
type Judged = Readonly<Record<ReportForm, FormJudgement>>;

function judgeForm(f: FormObservation | undefined, period: Period): FormJudgement {
  const judged = (outcome: FormOutcome, detail: string): FormJudgement => ({ outcome, detail });
  if (f === undefined) return judged('skipped', 'not probed');
  if (!isSuccess(f.pair)) return judged('error', describeAnswer(f.pair));
  let pair: ParsedReport;
  try {
    pair = parseReport(f.pair.body, PAIR);
  } catch (error) {
    return judged('wrong', `wrong report: ${misreading(f.pair.body) ?? shortReason(error)}`);
  }
  // Differences, not `ok`: a server that sends no totals is not misreading the parameters.
  if (pair.reconciliation.differences.length > 0)
    return judged('wrong', 'wrong report: its rows do not add up to its totals');
  const outside = pair.rows.find((r) => (r.dims[0] ?? '') < period.start || (r.dims[0] ?? '') > period.end);
  if (outside !== undefined)
    return judged(
      'wrong',
      `wrong report: a row for ${outside.dims[0]}, outside ${period.start}..${period.end}`,
    );
  const unverified = 'nested correctly, but the [day] report';
  if (!isSuccess(f.day))
    return judged(
      'unverified',
      `${unverified} to check it against answered ${f.day === undefined ? 'nothing' : describeAnswer(f.day)}`,
    );
  let day: ParsedReport;
  try {
    day = parseReport(f.day.body, DAY);
  } catch (error) {
    return judged('unverified', `${unverified} is unusable: ${shortReason(error)}`);
  }
  const difference = compareSums(pair, day);
  if (difference !== undefined) return judged('wrong', `wrong report: ${difference}`);
  if (pair.rows.length === 0)
    return judged('empty', `an empty report (no traffic ${period.start}..${period.end}): cannot tell`);
  return judged('ok', `${pair.rows.length} rows nested day > campaign_id, sums match the [day] report`);
}

export function judgeForms(forms: Observations['forms'], period: Period): Judged {
  return Object.fromEntries(REPORT_FORMS.map((f) => [f, judgeForm(forms[f], period)])) as Judged;
}

/** The form to set: the configured one when correct, else the first correct one in REPORT_FORMS order. */
export function chooseForm(
  judged: Judged,
  configured: ReportForm,
): { form: ReportForm; proven: boolean } | undefined {
  for (const accept of [['ok'], ['empty', 'unverified']] as const) {
    const fits = (f: ReportForm) => (accept as readonly FormOutcome[]).includes(judged[f].outcome);
    const form = fits(configured) ? configured : REPORT_FORMS.find(fits);
    if (form !== undefined) return { form, proven: accept[0] === 'ok' };
  }
  return undefined;
}

/** Result column of a form's row: `no` for a form this server misreads or refuses. */
const FORM_STATUS: Record<FormOutcome, RowStatus> = {
  ok: 'ok',
  wrong: 'no',
  empty: 'warn',
  unverified: 'warn',
  error: 'no',
  skipped: 'skip',
};

export function formsVerdict(o: Observations, reportsForbidden: boolean) {
  const judged = judgeForms(o.forms, o.formPeriod);
  if (
    o.scopes === undefined ||
    reportsForbidden ||
    REPORT_FORMS.every((f) => judged[f].outcome === 'skipped')
  ) {
    const why = reportsForbidden ? 'reports are forbidden to this key' : 'no header form accepted';
    return { rows: [row('report params')('skip', `not probed: ${why}`)], judged };
  }
  const choice = chooseForm(judged, o.configured.reportParams);
  return {
    rows: REPORT_FORMS.map((f) =>
      row(`report params ${f}`)(
        choice === undefined && judged[f].outcome !== 'skipped' ? 'fail' : FORM_STATUS[judged[f].outcome],
        choice?.form === f
          ? `${judged[f].detail}; use this${choice.proven ? '' : ' (not proven)'}`
          : judged[f].detail,
      ),
    ),
    judged,
    chosen: choice?.form,
    problem:
      choice === undefined
        ? 'no form of GET /reports returned a correct two-dimension report (see the "report params" ' +
          'rows): the server reads its parameters in a way adops does not know; report it with the ' +
          'output of `adops doctor --json`'
        : undefined,
  };
}

/** A one-level report keyed by one of the two dimensions: the server kept one value of the list. */
function misreading(body: Buffer): string | undefined {
  for (const [dims, which] of [
    [['campaign_id'], 'last'],
    [['day'], 'first'],
  ] as const) {
    try {
      parseReport(body, dims);
      return `a one-level report by ${dims[0]}: the server kept only the ${which} dimension`;
    } catch {
      // not this misreading
    }
  }
  return undefined;
}

/** The first difference between the pair report's sums per day and the [day] report, if any. */
function compareSums(pair: ParsedReport, day: ParsedReport): string | undefined {
  for (const [i, name] of COUNTERS.entries()) {
    if (pair.totals[name] !== day.totals[name])
      return `its totals differ from the [day] report's (${name} ${pair.totals[name]} vs ${day.totals[name]})`;
    const perDay = new Map<string, number>();
    for (const r of pair.rows)
      perDay.set(r.dims[0] ?? '', (perDay.get(r.dims[0] ?? '') ?? 0) + (r.counters[i] ?? 0));
    for (const r of day.rows) {
      const got = perDay.get(r.dims[0] ?? '') ?? 0;
      if (got !== (r.counters[i] ?? 0))
        return `${r.dims[0]} sums to ${name} ${got}, the [day] report says ${r.counters[i]}`;
      perDay.delete(r.dims[0] ?? '');
    }
    const extra = [...perDay.entries()].find(([, n]) => n !== 0);
    if (extra !== undefined)
      return `${extra[0]} has ${name} ${extra[1]} but is missing from the [day] report`;
  }
  return undefined;
}

/** A parse error without the advice that follows. */
function shortReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('; ')[0]!.split(': expected')[0]!;
}
