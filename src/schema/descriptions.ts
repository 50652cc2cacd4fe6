// COMMENT ON the per-report objects code makes, as BI tools show it; sql/001_baseline.sql describes the rest.
import type { ClientBase } from 'pg';
import { COUNTERS } from '../platform/config/dimensions.js';
import { RATES, dailyViewName } from './views-sql.js';
import { type Warehouse, execute, firstRow, reportTable, rowsOf } from '../platform/pg/handle.js';
import { partitionDescription, partitionsOf } from './partitions.js';
import { readVersions } from './versions.js';
import * as sql from './sql.js';

/** The objects of one report that carry descriptions, and what each is. */
type Role = 'table' | 'view' | 'daily';

const COUNTER_TEXT: Readonly<Record<string, string>> = {
  ad_requests: 'Ad requests received',
  filled_impressions: 'Ad requests answered with an ad',
  impressions: 'Ads rendered',
  measurable_impressions: 'Impressions whose viewability could be measured',
  viewable_impressions: 'Measurable impressions seen by the user (viewable)',
};

/** Columns other than counters and rates: what each is, with its unit where it has one. */
const COLUMN_TEXT: Readonly<Record<string, string>> = {
  account: 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account). Filter or group by it',
  period_start: 'First day of the period the row was pulled for (date, inclusive: the pull date_from)',
  period_end: 'Last day of the period the row was pulled for (date, inclusive: the pull date_until)',
  day: 'Day of the traffic (date). Join dim_date ON dim_date.date = day for week, month, quarter, weekday',
  hour: 'Hour of the day, 0 to 23 (smallint)',
  year: 'Year of the traffic (dimension as the API returns it)',
  month: 'Month of the traffic (dimension as the API returns it)',
  weekday: 'Weekday of the traffic (dimension as the API returns it)',
  campaign_id: 'Campaign id (bigint); join campaigns ON (account, campaign_id) for its attributes',
  creative_id: 'Creative id (bigint); join creatives ON (account, creative_id) for its attributes',
  zone_id: 'Zone (ad placement) id (bigint)',
  ad_format: 'Ad format (text)',
  ad_size: 'Ad size (text, as the API returns it)',
  landing_url: 'Landing page URL of the ad (text)',
  tier: 'Campaign tier (smallint): delivery priority',
  country: 'Country of the viewer (text, as the API returns it)',
  region: 'Region of the viewer (text)',
  city: 'City of the viewer (text)',
  language: 'Language of the viewer (text)',
  domain: 'Domain of the page the ad was shown on (text)',
  device: 'Device class of the viewer, e.g. desktop, mobile, tablet (text)',
  browser: 'Browser of the viewer (text)',
  campaign_name:
    'Campaign name from the catalogue (campaigns.name as last synced; kept after deletion); null until adops sync saw the campaign',
  advertiser_id: 'Advertiser of the campaign (bigint, from the catalogue)',
  folder_id: 'Folder of the campaign (bigint, from the catalogue)',
  pricing_model: 'Pricing model of the campaign, e.g. cpm (text, from the catalogue)',
  pricing_value: 'Price of the campaign in its pricing model (numeric, from the catalogue); not additive',
  campaign_deleted: 'True when the campaign is gone from the ad server (soft-deleted in campaigns)',
  creative_name:
    'Creative name from the catalogue (creatives.name as last synced); null until adops sync saw it',
  ad_type: 'Ad type of the creative (text, from the catalogue)',
  creative_deleted: 'True when the creative is gone from the ad server (soft-deleted in creatives)',
  data_width: 'Width of the creative in pixels (from the catalogue)',
  data_height: 'Height of the creative in pixels (from the catalogue)',
  campaigns_assigned:
    'Campaigns assigned to the zone and not deleted, from campaign_zones as last synced (count, bigint); ' +
    'an attribute of the zone, the same on each of its rows: never sum it across rows or days',
  load_id: 'The report_loads row of the pull that loaded this period (bigint); not additive',
  provisional:
    "True when the row's period had not ended when it was pulled (today, in the report's time zone): its " +
    "counts grow with each refresh until the pull after the period's end makes them final. NOT provisional: final figures only",
};

export function columnDescription(column: string, role: Role): string {
  const counter = COUNTER_TEXT[column];
  if (counter !== undefined)
    return role === 'daily'
      ? `${counter}, summed over the day (count, bigint). Sum it across rows, days and dimensions.`
      : `${counter} (count, bigint). A counter: sum it across rows, days and dimensions.`;
  const rate = RATES[column];
  if (rate !== undefined) {
    const [num, den] = rate;
    const of = role === 'daily' ? "the day's sums" : 'this row';
    return (
      `${num} / ${den} of ${of} (ratio 0..1; null when ${den} is 0). Never average it: over several ` +
      `rows use sum(${num})::float / nullif(sum(${den}), 0).`
    );
  }
  if (column === 'loaded_at')
    return role === 'daily'
      ? 'When the newest row of the group was loaded (timestamptz); take max(), never sum.'
      : 'When the period of this row was loaded (timestamptz); take max(), never sum.';
  const text = COLUMN_TEXT[column];
  // A dimension or attribute the lists above do not know (a newer spec, a user's view file).
  return text === undefined ? `${column}: a dimension of the report; group or filter by it.` : `${text}.`;
}

/** What a version's table of `report` is: `table` text of the version, as report_versions records it. Pure. */
export function versionDescription(report: string, version: number, dimensions: readonly string[]): string {
  return (
    `Version ${version} of report ${report} (dimensions: ${dimensions.join(', ')}), as pulled from the ad ` +
    `server API: one row per account, period and dimension values. report_${report} shows the serving ` +
    `version (report_versions says which); dashboards read bi_${report}.`
  );
}

/** What the object of `report` in each role is, and how to read it. Pure. */
const OBJECT_TEXT: Readonly<Record<Role, (report: string) => string>> = {
  table: (report) =>
    `Report ${report} as pulled from the ad server API: one row per account, period and dimension ` +
    `values; counters (${COUNTERS.join(', ')}) are counts to sum. Dashboards read bi_${report} instead.`,
  view: (report) =>
    `BI view of report ${report}: its rows with campaign/creative names and per-row fill_rate and ` +
    `viewability_rate. Sum the counters; compute rates as ratios of sums, never average them.`,
  daily: (report) =>
    `bi_${report} summed per day and per its other columns, rates computed as ratios of the day's ` +
    `sums. Sum its counters over days; never average its rates.`,
};

/** Comments each report's objects and columns after each (re)creation (a DROP loses them). */
export async function describeReportObjects(
  client: ClientBase,
  wh: Warehouse,
  reports: readonly { readonly name: string }[],
): Promise<void> {
  const { schema } = wh;
  const describe = async (name: string, text: string) => {
    const relation = await firstRow(client, sql.relation(schema, name));
    if (relation !== undefined && relation.comment !== text)
      await execute(client, sql.comment(relation.kind, schema, name, text));
    return relation;
  };
  for (const report of reports) {
    const stable = reportTable(report.name);
    const versions = await readVersions(wh, report.name, client);
    const objects: Array<[name: string, role: Role, text: string]> = [
      [stable, 'table', OBJECT_TEXT.table(report.name)],
      ...versions
        .filter((v) => v.table !== stable)
        .map((v): [string, Role, string] => [
          v.table,
          'table',
          versionDescription(report.name, v.version, v.dimensions),
        ]),
      [`bi_${report.name}`, 'view', OBJECT_TEXT.view(report.name)],
      [dailyViewName(report.name), 'daily', OBJECT_TEXT.daily(report.name)],
    ];
    for (const [name, role, text] of objects) {
      const relation = await describe(name, text);
      if (relation === undefined) continue;
      for (const column of await rowsOf(client, sql.columnsOf(schema, name))) {
        const wanted = columnDescription(column.name, role);
        if (column.comment !== wanted)
          await execute(client, sql.comment('COLUMN', schema, name, wanted, column.name));
      }
      if (relation.kind === 'VIEW') continue;
      // Partitions made before their comment was (ensurePartitions comments those it makes).
      for (const p of await partitionsOf(wh, name, client))
        await describe(p.name, partitionDescription(name, p.from));
    }
  }
}
