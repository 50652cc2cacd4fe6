// bi_campaign_pacing: each campaign's goal against its delivery, made by migrate from the catalogue and the
// report with day and campaign_id and the fewest other dimensions (or ADOPS_PACING_REPORT's).
import type { ClientBase } from 'pg';
import type { PacingSettings } from '../platform/config/env.js';
import { type Warehouse, execute, firstRow, reportTable, rowsOf } from '../platform/pg/handle.js';
import { regrantBiViews } from './bi-role.js';
import { columnsOf, comment } from './sql.js';
import { SchemaRefusal } from './versions.js';
import { dimensionsOf, dropView } from './views-sql.js';
import { inSchema, replaceView } from './views.js';
import * as psql from './pacing-sql.js';

/** The report read, or why there is none; `changed` when this run made or changed the view. */
export interface PacingOutcome {
  readonly report?: string;
  readonly why?: string;
  readonly named?: boolean; // ADOPS_PACING_REPORT named the report.
  readonly changed: boolean;
}

const DEFAULT_PACING: PacingSettings = { behind: 0.9, ahead: 1.1 };

/** Which report to read among those with a table (their dimensions as found): `named`, or the one with day
 * and campaign_id and the fewest other dimensions, the first by name on a tie; pure. */
export function choosePacingReport(
  reports: readonly { readonly name: string; readonly dimensions: readonly string[] }[],
  named?: string,
): { readonly report: string } | { readonly why: string } {
  const fits = (r: { dimensions: readonly string[] }) =>
    r.dimensions.includes('day') && r.dimensions.includes('campaign_id');
  if (named !== undefined) {
    const found = reports.find((r) => r.name === named);
    if (found !== undefined && fits(found)) return { report: named };
    throw new SchemaRefusal(
      `ADOPS_PACING_REPORT=${named}: ` +
        (found === undefined
          ? 'no job definition of that name has a table'
          : `its table lacks ${['day', 'campaign_id'].filter((d) => !found.dimensions.includes(d)).join(' and ')}`) +
        '; name a report with the day and campaign_id dimensions, or unset it to let migrate choose',
    );
  }
  const best = reports
    .filter(fits)
    .sort((a, b) => a.dimensions.length - b.dimensions.length || (a.name < b.name ? -1 : 1))[0];
  return best === undefined
    ? { why: 'no report has both the day and campaign_id dimensions, so impressions goals show no_data' }
    : { report: best.name };
}

/** Makes bi_campaign_pacing (always: without a report its impressions are unknown) and comments it. */
export async function ensurePacingView(
  client: ClientBase,
  wh: Warehouse,
  reports: readonly { readonly name: string; readonly schedule?: { readonly timezone: string } }[],
  settings: PacingSettings = DEFAULT_PACING,
): Promise<PacingOutcome> {
  const found = [];
  for (const r of reports) {
    const columns = (await rowsOf(client, columnsOf(wh.schema, reportTable(r.name)))).map((c) => c.name);
    if (columns.includes('impressions')) found.push({ ...r, dimensions: dimensionsOf(columns) });
  }
  const choice = choosePacingReport(found, settings.report);
  const job = 'report' in choice ? found.find((r) => r.name === choice.report) : undefined;
  const source = job && {
    report: job.name,
    table: reportTable(job.name),
    timezone: job.schedule?.timezone ?? 'UTC',
  };
  const before = await firstRow(client, psql.pacingDefinition(wh.schema));
  await inSchema(client, wh, () =>
    replaceView(client, psql.pacingViewSql(source, settings), [psql.PACING_VIEW]),
  );
  await describePacing(client, wh);
  const after = await firstRow(client, psql.pacingDefinition(wh.schema));
  return {
    ...choice,
    named: settings.report !== undefined,
    changed: before?.definition !== after?.definition,
  };
}

/** Runs `work` (an evolution swap of `report`) with the view dropped when it reads the report, then makes it
 * again as it was: the swap renames and drops what the view reads. */
export async function asidePacing<T>(
  client: ClientBase,
  wh: Warehouse,
  report: string,
  work: () => Promise<T>,
): Promise<T> {
  const held = await firstRow(client, psql.pacingDefinition(wh.schema, reportTable(report)));
  if (held?.reads !== true) return work();
  await execute(client, dropView(psql.PACING_VIEW, wh.schema));
  const result = await work();
  await execute(client, psql.createPacingView(wh.schema, held.definition));
  await describePacing(client, wh);
  await regrantBiViews(client, wh);
  return result;
}

/** Campaigns with a goal and those behind, per account (adops_campaigns_behind). */
export async function campaignsBehind(wh: Warehouse): Promise<{ account: string; behind: number }[]> {
  return rowsOf(wh, psql.behindByAccount(wh.schema));
}

const TEXT: Readonly<Record<string, string>> = {
  account: 'The ad server account (ADOPS_ACCOUNTS_FILE; default for a single account)',
  campaign_id: 'Campaign id (bigint); join campaigns ON (account, campaign_id) for the rest of it',
  name: 'Campaign name as last synced',
  ad_format: 'Ad format of the campaign (text)',
  is_active: 'True when the campaign is active on the ad server',
  goal_event: 'What the goal counts: impressions, clicks or conversions',
  goal_period: 'due_date: one goal over the whole flight; day: the goal is per day',
  goal_speed:
    'spread: evenly over the flight (or the day); asap: as fast as possible, so the whole goal is due at once',
  goal_value: 'The goal: events over the flight (due_date) or per day (day)',
  flight_start:
    "Start of delivery (timestamptz); NULL: it started at once (the campaign's created time is used)",
  flight_end: 'End of delivery (timestamptz); NULL: it runs without end',
  as_of:
    'What delivered covers: the end of the newest loaded day of the report (now while that day is today); for ' +
    'clicks goals, when adops sync read the counter',
  delivered:
    'Events delivered in the flight up to as_of: impressions summed from the report; clicks from the ' +
    "campaign's lifetime counter (campaigns.event_clicks, not a report); NULL for conversions (no source) or " +
    'when nothing of the report is loaded. A day goal counts from the first loaded day on',
  expected:
    'Events due by as_of: spread, the goal times the elapsed share of the flight; asap, the whole goal; day goals, ' +
    "the goal per day, the last day prorated by its elapsed share in the report's time zone (asap: whole)",
  pace: 'delivered / expected (ratio; 1 is on pace); NULL when nothing is expected yet',
  projected:
    'Events delivered by the flight end at the pace so far (delivered once the flight ended); NULL without an end',
  state:
    'not_started, ended, no_end (a due_date spread goal without an end), no_data (nothing to measure yet), or ' +
    'by pace: behind, on_pace, ahead (bands ADOPS_PACING_BEHIND and ADOPS_PACING_AHEAD at adops migrate)',
  provisional: "True when as_of includes today's unfinished period: the figures still move",
};

async function describePacing(client: ClientBase, wh: Warehouse): Promise<void> {
  const view = psql.PACING_VIEW;
  await execute(
    client,
    comment(
      'VIEW',
      wh.schema,
      view,
      'Pacing of each campaign with a goal: delivered against expected to date, pace, projected and state. ' +
        'Its clock is now(), or the setting adops.now when set (SET adops.now = ...). adops migrate says which report it reads.',
    ),
  );
  for (const { name } of await rowsOf(client, columnsOf(wh.schema, view)))
    await execute(client, comment('COLUMN', wh.schema, view, `${TEXT[name] ?? name}.`, name));
}
