import { COUNTERS } from '../../flatten/types.js';
import { ident, reportTable } from '../pg.js';

/** Columns of every report table that are not dimensions. */
const NOT_DIMENSIONS: ReadonlySet<string> = new Set([
  'period_start',
  'period_end',
  ...COUNTERS,
  'load_id',
  'loaded_at',
  'account',
]);

/**
 * The BI view of a report that has no file in sql/views/: its table's columns in order, campaign
 * and creative names joined when the report has those dimensions, and the two derived rates.
 * Built from the table as it exists, so it fits whatever definition created it. Pure.
 */
export function generatedViewSql(report: string, tableColumns: readonly string[]): string {
  const dims = tableColumns.filter((c) => !NOT_DIMENSIONS.has(c));
  const hasCampaign = dims.includes('campaign_id');
  const hasCreative = dims.includes('creative_id');
  const select = [
    'r.account',
    'r.period_start',
    'r.period_end',
    ...dims.map((d) => `r.${ident(d)}`),
    ...(hasCampaign ? ['c.name AS campaign_name', 'c.ad_format'] : []),
    ...(hasCreative ? ['k.name AS creative_name', 'k.ad_type'] : []),
    ...COUNTERS.map((c) => `r.${ident(c)}`),
    'r.filled_impressions::double precision / NULLIF(r.ad_requests, 0) AS fill_rate',
    'r.viewable_impressions::double precision / NULLIF(r.measurable_impressions, 0) AS viewability_rate',
    'r.loaded_at',
  ];
  return [
    `-- Generated for report ${report}: it has no file in sql/views/.`,
    `CREATE OR REPLACE VIEW ${ident(`bi_${report}`)} AS`,
    `SELECT\n  ${select.join(',\n  ')}`,
    `FROM ${ident(reportTable(report))} r`,
    ...(hasCampaign
      ? ['LEFT JOIN campaigns c ON c.account = r.account AND c.campaign_id = r.campaign_id']
      : []),
    ...(hasCreative
      ? ['LEFT JOIN creatives k ON k.account = r.account AND k.creative_id = r.creative_id']
      : []),
  ].join('\n');
}
