// The per-day companion of a BI view: bi_<name>_daily sums bi_<name> per day and per its other
// dimensions, and computes its rates as ratios of those sums. A dashboard that averages bi_<name>'s
// per-row fill_rate over hours, days or campaigns weighs a row of 10 requests like a row of a
// million; summing the counters first and dividing once is the only correct aggregate. Pure.
import { COUNTERS } from '../../flatten/types.js';
import { ident } from '../pg.js';

/** The rates of the BI views, each a numerator counter over a denominator counter. */
export const RATES: Readonly<Record<string, readonly [numerator: string, denominator: string]>> = {
  fill_rate: ['filled_impressions', 'ad_requests'],
  viewability_rate: ['viewable_impressions', 'measurable_impressions'],
};

/**
 * Columns finer than a day or implied by it: the companion drops them. year, month and weekday
 * follow from the day (join dim_date for them); hour and the period bounds are what is summed over.
 */
const TIME_COLUMNS: ReadonlySet<string> = new Set([
  'day',
  'hour',
  'period_start',
  'period_end',
  'year',
  'month',
  'weekday',
]);

const COUNTER_SET: ReadonlySet<string> = new Set(COUNTERS);

/** Name of the per-day companion of a report's BI view. */
export function dailyViewName(report: string): string {
  return `bi_${report}_daily`;
}

/**
 * CREATE OR REPLACE VIEW of the companion, from the BI view's columns in order; undefined when the
 * rows have no day to group by: no `day` column, and a period other than a day (a week's row cannot
 * be split into days). Every other column is a group key: the dimensions and the entity attributes
 * that follow from them (campaign_name follows campaign_id, so it does not split a group). Rates
 * the companion cannot recompute (`*_rate` not in RATES) are left out rather than averaged.
 */
export function dailyViewSql(
  report: string,
  viewColumns: readonly string[],
  period: 'day' | 'week' | 'month' | undefined,
): string | undefined {
  const has = new Set(viewColumns);
  const day = has.has('day')
    ? 'v.day'
    : period === 'day' && has.has('period_start')
      ? 'v.period_start AS day'
      : undefined;
  if (day === undefined) return undefined;
  const keys = viewColumns.filter(
    (c) => !TIME_COLUMNS.has(c) && !COUNTER_SET.has(c) && !c.endsWith('_rate') && c !== 'loaded_at',
  );
  const counters = COUNTERS.filter((c) => has.has(c));
  const rates = Object.entries(RATES).filter(
    ([rate, [num, den]]) => has.has(rate) && has.has(num) && has.has(den),
  );
  const select = [
    day,
    ...keys.map((k) => `v.${ident(k)}`),
    ...counters.map((c) => `sum(v.${ident(c)})::bigint AS ${ident(c)}`),
    ...rates.map(
      ([rate, [num, den]]) =>
        `sum(v.${ident(num)})::double precision / NULLIF(sum(v.${ident(den)}), 0) AS ${ident(rate)}`,
    ),
    ...(has.has('loaded_at') ? ['max(v.loaded_at) AS loaded_at'] : []),
  ];
  const groupBy = [day.replace(/ AS day$/, ''), ...keys.map((k) => `v.${ident(k)}`)];
  return [
    `-- Per-day companion of bi_${report}: counters summed per day, rates as ratios of sums.`,
    `CREATE OR REPLACE VIEW ${ident(dailyViewName(report))} AS`,
    `SELECT\n  ${select.join(',\n  ')}`,
    `FROM ${ident(`bi_${report}`)} v`,
    `GROUP BY ${groupBy.join(', ')}`,
  ].join('\n');
}
