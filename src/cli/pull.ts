// `adops pull`: one report request straight to stdout (table, CSV or JSON), no queue, no database;
// the totals and the reconciliation go to stderr.
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import Table from 'cli-table3';
import type { Command } from 'commander';
import { createApiClientFromConfig } from '../api/client.js';
import { ApiError } from '../api/errors.js';
import { DIMENSIONS, isDimension, type Dimension } from '../platform/config/dimensions.js';
import { oneAccount } from '../platform/config/accounts.js';
import { accountConfig } from '../platform/config/env.js';
import { isIsoDate } from '../platform/dates/calendar.js';
import { ReportFormatError, type UnreconciledReason } from '../flatten/errors.js';
import {
  columns,
  countersText,
  csvChunks,
  jsonChunks,
  reconciliationText,
  terminalSafe,
} from '../status/format.js';
import { parseReport, type ParsedReport } from '../flatten/parse.js';
import type { ReportQuery } from '../flatten/types.js';
import { CommandFailed, rethrowAs, SUMMARIES, usageError, type CliContext } from './context.js';

const FORMATS = ['table', 'csv', 'json'] as const;
type Format = (typeof FORMATS)[number];

interface PullFlags {
  readonly dimensions: string;
  readonly from: string;
  readonly to?: string;
  readonly format?: string;
  readonly strict: boolean;
  readonly raw?: string;
  readonly csvSafe?: boolean; // undefined: on when stdout is a terminal.
  readonly account?: string;
}

export function registerPull(program: Command, ctx: CliContext): void {
  program
    .command('pull')
    .description(SUMMARIES.pull)
    .requiredOption(
      '--dimensions <list>',
      `comma-separated, in nesting order, from: ${DIMENSIONS.join(', ')}`,
    )
    .requiredOption('--from <date>', 'first day, YYYY-MM-DD (date_from)')
    .option('--to <date>', 'last day, YYYY-MM-DD, inclusive (date_until); default: --from')
    .option('--account <name>', 'the account of ADOPS_ACCOUNTS_FILE to ask (needed when it lists several)')
    .option('--format <format>', 'table, csv or json; default: table on a terminal, csv otherwise')
    .option(
      '--strict',
      'fail (exit 1, no rows) when the rows do not sum to the totals, or there are no totals to check',
      false,
    )
    .option(
      '--csv-safe',
      'CSV: put a quote before values starting with = + - @, tab or CR, so a spreadsheet shows them as text instead of running them as formulas; default: on when stdout is a terminal',
    )
    .option(
      '--no-csv-safe',
      'CSV: write values starting with = + - @, tab or CR as the API sent them (on a terminal, control characters are still shown escaped)',
    )
    .option(
      '--raw <file>',
      "also save the API's response body to this file, as received (for a parse failure)",
    )
    .addHelpText(
      'after',
      '\nExit codes: 0 the pull succeeded, 1 it failed (API error, unusable body, --strict mismatch), ' +
        '2 bad flags or configuration. Reads ADOPS_BASE_URL, ADOPS_API_KEY(_FILE), ADOPS_AUTH, ' +
        'ADOPS_REPORT_PARAMS and ADOPS_HTTP_*.\nExample: adops pull --dimensions day,campaign_id --from 2026-01-01 --to 2026-01-07 --format csv > rows.csv',
    )
    .action((flags: PullFlags) => pull(ctx, flags));
}

async function pull(ctx: CliContext, flags: PullFlags): Promise<void> {
  const query = queryOf(flags);
  const tty = ctx.stdout.isTTY === true;
  const format = formatOf(flags.format, tty);
  const formulas = (flags.csvSafe ?? tty) ? 'safe' : 'as-sent';
  const config = ctx.config();
  const account = oneAccount(config.accounts, flags.account);
  const api = createApiClientFromConfig(accountConfig(config, account), ctx.logger());
  let parsed: ParsedReport;
  let summary: string;
  try {
    const raw = await api.fetchReport(query);
    const body = await raw.body.bytes();
    const rawFile = flags.raw;
    if (rawFile !== undefined)
      await writeFile(rawFile, body).catch((error: Error) => {
        throw new CommandFailed(`--raw: cannot write ${rawFile}: ${error.message}`, { cause: error });
      });
    parsed = parseReport(body, query.dimensions, { strict: flags.strict });
    summary =
      `rows: ${parsed.rows.length} (${query.dimensions.join(',')}, ${query.period.start}..${query.period.end}), ` +
      `${raw.body.receivedBytes} bytes, ${raw.attempts} request(s), ${Math.round(raw.fetchMs)} ms`;
  } catch (error) {
    const kinds = [ApiError, ReportFormatError];
    return rethrowAs(kinds, 'pull failed: ')(error);
  } finally {
    await api.close();
  }
  await write(ctx.stdout, chunksOf(format, query.dimensions, parsed, formulas, tty));
  ctx.stderr.write(
    `${summary}\ntotals: ${countersText(parsed.totals)}\n${reconciliationText(parsed.reconciliation)}\n`,
  );
  if (!parsed.reconciliation.ok)
    ctx.stderr.write(`warning: ${UNRECONCILED[parsed.reconciliation.reason ?? 'mismatch']}\n`);
}

/** The warning for rows that could not be reconciled, by reason. */
const UNRECONCILED: Readonly<Record<UnreconciledReason, string>> = {
  mismatch: 'the rows do not add up to the totals; re-pull later, or use --strict to fail',
  'no totals': 'the API sent no totals, so the rows are unchecked; use --strict to fail',
  'partial totals': 'the API left some totals out, so the rows are only partly checked; use --strict to fail',
};

function queryOf(flags: PullFlags): ReportQuery {
  const names = flags.dimensions.split(',').map((s) => s.trim());
  const dimensions: Dimension[] = [];
  for (const name of names) {
    if (!isDimension(name))
      throw usageError(`--dimensions: "${name}" is not a dimension; allowed: ${DIMENSIONS.join(', ')}`);
    if (dimensions.includes(name)) throw usageError(`--dimensions: "${name}" is listed twice`);
    dimensions.push(name);
  }
  const start = flags.from;
  const end = flags.to ?? flags.from;
  if (!isIsoDate(start)) throw usageError(`--from: "${start}" is not a date YYYY-MM-DD`);
  if (!isIsoDate(end)) throw usageError(`--to: "${end}" is not a date YYYY-MM-DD`);
  if (end < start) throw usageError(`--to ${end} is before --from ${start}`);
  return { dimensions, period: { start, end } };
}

function formatOf(flag: string | undefined, tty: boolean): Format {
  if (flag === undefined) return tty ? 'table' : 'csv';
  const format = FORMATS.find((f) => f === flag);
  if (format === undefined)
    throw usageError(`--format: "${flag}" is not allowed; allowed: ${FORMATS.join(', ')}`);
  return format;
}

function chunksOf(
  format: Format,
  dimensions: readonly Dimension[],
  parsed: ParsedReport,
  formulas: 'safe' | 'as-sent',
  tty: boolean,
): Iterable<string> {
  // On a terminal an API value's control characters must not drive it; into a pipe CSV stays exact.
  if (format === 'csv') return csvChunks(dimensions, parsed.rows, { formulas, terminal: tty });
  if (format === 'json') return jsonChunks(dimensions, parsed.rows);
  const table = gridTable(columns(dimensions));
  // A table is for a terminal: an API value's control characters must not drive it.
  for (const row of parsed.rows) table.push([...row.dims.map(terminalSafe), ...row.counters.map(String)]);
  const lines = table.toString().split('\n');
  // Put back the rule under the header alone, drawn like the top border.
  const top = lines[0] ?? '';
  lines.splice(2, 0, top.replace('┌', '├').replaceAll('┬', '┼').replace('┐', '┤'));
  return [`${lines.join('\n')}\n`];
}

/** Writes chunks, waiting for 'drain' when the stream buffers, so a big report does not pile up in memory. */
async function write(out: NodeJS.WritableStream, chunks: Iterable<string>): Promise<void> {
  for (const chunk of chunks)
    if (!out.write(chunk))
      // A closed pipe (`adops pull ... | head`) never drains: its error rejects the wait instead.
      await once(out, 'drain').catch((error: Error) => {
        throw new CommandFailed(`cannot write the rows: ${error.message}`, { cause: error });
      });
}

/** A terminal table without colours (it may be copied or piped) nor rules between its many body rows. */
export function gridTable(head: string[], colAligns?: Array<'left' | 'right'>): Table.Table {
  return new Table({
    head,
    style: { head: [], border: [] },
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    ...(colAligns === undefined ? {} : { colAligns }),
  });
}
