// `adops loads`: the recent attempts of report_loads, so that finding a load id for `adops replay`
// (or why a period failed) needs no SQL.
import { InvalidArgumentError, type Command } from 'commander';
import { ACCOUNT_NAME } from '../platform/config/accounts.js';
import { REPORT_NAME } from '../platform/config/jobs.js';
import { terminalSafe } from '../status/format.js';
import { recentLoads, type LoadListing } from '../pull/history.js';
import { intOption, SUMMARIES, withWarehouse, type CliContext } from './context.js';

interface LoadsFlags {
  readonly report?: string;
  readonly account?: string;
  readonly failed: boolean;
  readonly limit: number;
  readonly json: boolean;
}

/** Characters of an error shown in the table: its first line, cut (--json gives it whole). */
const ERROR_WIDTH = 120;

export function registerLoads(program: Command, ctx: CliContext): void {
  program
    .command('loads')
    .description(SUMMARIES.loads)
    .option('--report <name>', 'only this report', named(REPORT_NAME, 'a report name'))
    .option('--account <name>', 'only this account', named(ACCOUNT_NAME, 'an account name'))
    .option('--failed', 'only failed attempts', false)
    .option('--limit <n>', 'how many, newest first', intOption(1, 10_000), 20)
    .option('--json', 'print a JSON array for scripts (every field, errors whole)', false)
    .addHelpText(
      'after',
      '\nOne line per period of each attempt that reached the loader (report_loads): loaded (its rows are current), ' +
        'superseded (a later load replaced them) or failed (earlier rows stay; step: where it failed, ' +
        'fetch, parse, load or archive); request: the range and periods of the one API request it came in, ' +
        'when that covered several (days_per_request). `adops replay --load-id ID` ' +
        'loads an archived response again. Reads DATABASE_URL and ADOPS_SCHEMA.',
    )
    .action(async (flags: LoadsFlags) => {
      const loads = await withWarehouse(ctx, 1, (wh) => recentLoads(wh, flags));
      if (flags.json) ctx.stdout.write(`${JSON.stringify(loads, null, 2)}\n`);
      else if (loads.length === 0) ctx.stdout.write(`no loads recorded${narrowedBy(flags)}\n`);
      else ctx.stdout.write(table(loads));
    });
}

/** The table, columns padded to their widest cell; an error is its first line, escaped for a terminal. */
function table(loads: readonly LoadListing[]): string {
  const cells = loads.map((l) => [
    l.load_id,
    l.report,
    l.account,
    l.period_start === l.period_end ? l.period_start : `${l.period_start}..${l.period_end}`,
    l.provisional ? `${l.status} (provisional)` : l.status,
    l.rows === null ? '-' : String(l.rows),
    // The periods of one request (days_per_request) share its range here.
    l.request_periods > 1 ? `${l.request_start}..${l.request_end} (${l.request_periods})` : '-',
    l.failed_step ?? '',
    terminalSafe((l.error ?? '').split('\n')[0] ?? '').slice(0, ERROR_WIDTH),
  ]);
  const rows = [
    ['id', 'report', 'account', 'period', 'status', 'rows', 'request', 'step', 'error'],
    ...cells,
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  return rows.map((r) => `${line(r).trimEnd()}\n`).join('');
}

/** ` (report x, account y, failed only)` for the empty answer. */
function narrowedBy(flags: LoadsFlags): string {
  const parts = [
    ...(flags.report === undefined ? [] : [`report ${flags.report}`]),
    ...(flags.account === undefined ? [] : [`account ${flags.account}`]),
    ...(flags.failed ? ['failed only'] : []),
  ];
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

/** A commander parser accepting names of `pattern` only. */
function named(pattern: RegExp, what: string): (value: string) => string {
  return (value) => {
    if (!pattern.test(value)) throw new InvalidArgumentError(`expected ${what} (${pattern.source})`);
    return value;
  };
}
