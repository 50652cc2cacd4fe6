// The commands that plan pulls and put them on the queue: `adops backfill` (a date range), `adops
// heal` (what the warehouse lacks) and `adops schedule` (the job schedulers that do it every day).
import type { Command } from 'commander';
import { reportRequest } from '../api/client.js';
import { DEFAULT_ACCOUNT, runsReport, selectAccounts, type Account } from '../platform/config/accounts.js';
import type { ReportJob } from '../platform/config/jobs.js';
import { addDays, parsePlanDate, PLAN_DATES } from '../platform/dates/calendar.js';
import { periodContaining } from '../platform/dates/periods.js';
import {
  earliestToday,
  endedFrom,
  endedOnly,
  hasEnded,
  reportTimezone,
  startedOnly,
  startOf,
} from '../plan/bounds.js';
import {
  backfillPulls,
  inRequests,
  interleaveAccounts,
  pullLabel,
  todayPulls,
  type PlannedPull,
} from '../plan/pulls.js';
import { enqueueStream, summarize, enqueuePulls, readHealPlan } from '../schedule/enqueue.js';
import { listSchedulers, syncSchedulers } from '../schedule/scheduler.js';
import {
  intOption,
  parsedBy,
  QUEUE_HELP,
  SUMMARIES,
  usageError,
  withQueues,
  withWarehouse,
  type CliContext,
} from './context.js';
import {
  enqueuedLine,
  enqueueProgress,
  queueOutageOption,
  redisOutageAlias,
  outageSecondsOf,
  waitWithProgress,
} from './progress.js';

interface BackfillFlags {
  readonly report?: string[];
  readonly all: boolean;
  readonly from?: string;
  readonly to?: string;
  readonly today: boolean;
  readonly wait: boolean;
  readonly dryRun: boolean;
  readonly oldestFirst: boolean;
  readonly account?: string;
  readonly queueOutageSeconds?: number;
  readonly redisOutageSeconds?: number; // The old name of --queue-outage-seconds.
}

export function registerBackfill(program: Command, ctx: CliContext): void {
  program
    .command('backfill')
    .description(SUMMARIES.backfill)
    .option('--report <name...>', 'report definition(s) to backfill (repeat or comma-separate)', collect)
    .option('--all', 'every report definition', false)
    .option('--account <name>', 'only this account of ADOPS_ACCOUNTS_FILE (default: every account)')
    .option(
      '--from <date>',
      `first day, YYYY-MM-DD (${PLAN_DATES.first} or later)`,
      parsedBy((s) => parsePlanDate(s, '--from')),
    )
    .option(
      '--to <date>',
      'last day, YYYY-MM-DD (inclusive)',
      parsedBy((s) => parsePlanDate(s, '--to')),
    )
    .option(
      '--today',
      "instead of --from/--to: pull each report's current, unfinished period now, recorded provisional",
      false,
    )
    .option('--wait', 'show progress until every pull finished; exit 1 listing failed periods', false)
    .option(...queueOutageOption)
    .addOption(redisOutageAlias())
    .option('--dry-run', 'print the periods and the API request each would make; enqueue nothing', false)
    .option(
      '--oldest-first',
      'queue report by report, oldest period first (default: newest period first, all reports of a period together)',
      false,
    )
    .addHelpText(
      'after',
      '\nNewest periods are pulled first, so dashboards get recent days first. ' +
        'A pull already waiting or running for the same report and period is not enqueued twice. ' +
        `The workers (\`adops worker\`) do the pulls. ${QUEUE_HELP}`,
    )
    .action(async (flags: BackfillFlags) => {
      const reports = selectReports(ctx, flags);
      const { from = '', to = '' } = flags;
      if (flags.today && (from !== '' || to !== ''))
        throw usageError('--today pulls the current period: give it without --from and --to');
      if (!flags.today && (from === '' || to === ''))
        throw usageError('backfill needs the periods to pull: give --from and --to, or --today');
      if (from > to) throw usageError(`--from ${from} is after --to ${to}`);
      const now = new Date();
      const accounts = selectAccounts(ctx.config().accounts, flags.account);
      // The range's checks and notes (--today has neither).
      if (!flags.today) refuseUnended(reports, to, now);
      // Week and month periods overlapping an ended --to may not have ended yet: left for later.
      for (const r of flags.today ? [] : reports) {
        const last = periodContaining(to, r.period);
        if (!hasEnded(last, reportTimezone(r), now))
          ctx.stderr.write(
            `note: ${r.name} ${last.start}..${last.end} has not ended (${reportTimezone(r)}): left out; ` +
              `backfill it from ${endedFrom(last)}, or pull it provisionally with --today\n`,
          );
      }
      const order = flags.oldestFirst ? 'oldest-first' : 'newest-first';
      // Nothing before a start_date: --from is clamped to it, once per report and account, saying so.
      for (const a of flags.today ? [] : accounts)
        for (const r of reports) {
          const start = runsReport(a, r.name) ? startOf(r, a) : undefined;
          if (start === undefined || from >= start) continue;
          const who = `${a.name === DEFAULT_ACCOUNT ? '' : `${a.name}/`}${r.name}`;
          ctx.stderr.write(
            start > to
              ? `note: ${who} starts at ${start} (start_date), after --to ${to}: nothing to pull\n`
              : `note: ${who} starts at ${start} (start_date): --from ${from} clamped to it\n`,
          );
        }
      // The plan, read lazily: every account's periods, interleaved, never all held at once.
      // Consecutive periods of a report with the day dimension share one request (days_per_request).
      const plan = () =>
        flags.today
          ? todayPulls(reports, now, accounts)
          : inRequests(
              interleaveAccounts(accounts, reports, (own, name) =>
                startedOnly(
                  endedOnly(backfillPulls(own, from, to, order), own, now),
                  own,
                  accounts.find((a) => a.name === name),
                ),
              ),
              reports,
              accounts,
            );
      if (flags.dryRun) {
        let n = 0;
        const request = dryRunRequest(accounts, reports);
        for (const p of plan()) {
          ctx.stdout.write(`${pullLabel(p)}: ${request(p)}\n`);
          n++;
        }
        ctx.stdout.write(
          `${n} pulls over ${reports.length} report(s): ${n} API calls ` +
            '(one per pull, before retries; days_per_request joins consecutive days); nothing enqueued\n',
        );
        return;
      }
      await withQueues(ctx, async (queues) => {
        let total = 0;
        for (const _ of plan()) total++;
        const progress = enqueueProgress(ctx, total);
        const result = await enqueueStream(queues.pulls, plan(), {
          keep: flags.wait,
          onChunk: progress.update,
        }).finally(progress.stop);
        ctx.stdout.write(`${enqueuedLine(result)}\n`);
        if (flags.wait)
          await waitWithProgress(ctx, queues, summarize(result.pulls ?? []), outageSecondsOf(ctx, flags));
      });
    });
}

type HealFlags = Pick<
  BackfillFlags,
  'wait' | 'dryRun' | 'account' | 'queueOutageSeconds' | 'redisOutageSeconds'
> & {
  readonly days?: number;
};

export function registerHeal(program: Command, ctx: CliContext): void {
  program
    .command('heal')
    .description(SUMMARIES.heal)
    .option('--days <n>', 'days to look back (default ADOPS_HEAL_DAYS, 30)', intOption(1, 3660, 'days'))
    .option('--wait', 'show progress until every pull finished; exit 1 listing failed periods', false)
    .option(...queueOutageOption)
    .addOption(redisOutageAlias())
    .option('--dry-run', 'print the periods it would pull; enqueue nothing', false)
    .option('--account <name>', 'only this account of ADOPS_ACCOUNTS_FILE (default: every account)')
    .addHelpText(
      'after',
      '\nPostgres (report_loads) is the record of what is loaded, so heal works after the queue was lost. ' +
        `Reads DATABASE_URL and ADOPS_SCHEMA. ${QUEUE_HELP}`,
    )
    .action(async (flags: HealFlags) => {
      const config = ctx.config();
      const reports = ctx.jobs().reports;
      const accounts = selectAccounts(config.accounts, flags.account);
      const days = flags.days ?? config.healDays;
      const plan = await withWarehouse(ctx, 2, (wh) => readHealPlan(wh, reports, days, new Date(), accounts));
      if (flags.dryRun) {
        for (const p of plan) ctx.stdout.write(`${pullLabel(p)}\n`);
        ctx.stdout.write(`${plan.length} pulls would heal the last ${days} days\n`);
        return;
      }
      await withQueues(ctx, async (queues) => {
        const result = summarize(await enqueuePulls(queues.pulls, plan));
        ctx.stdout.write(`${enqueuedLine(result)}\n`);
        if (flags.wait) await waitWithProgress(ctx, queues, result, outageSecondsOf(ctx, flags));
      });
    });
}

export function registerSchedule(program: Command, ctx: CliContext): void {
  program
    .command('schedule')
    .description(SUMMARIES.schedule)
    .addHelpText(
      'after',
      '\nRunning it again changes nothing. Each report tick pulls yesterday and its lookback_days ' +
        'periods, plus missing or failed periods of the last ADOPS_HEAL_DAYS days; a `today:` tick pulls ' +
        'the current period, provisional. Reads ' +
        `ADOPS_JOBS_DIR. ${QUEUE_HELP}`,
    )
    .action(async () => {
      const jobs = ctx.jobs();
      await withQueues(ctx, async (queues) => {
        const r = await syncSchedulers(queues, jobs, ctx.config().accounts);
        const verb = new Map<string, string>();
        for (const word of ['created', 'updated', 'unchanged'] as const)
          for (const id of r[word]) verb.set(id, word);
        for (const s of await listSchedulers(queues))
          ctx.stdout.write(
            `${verb.get(s.id) ?? 'kept'} ${s.id}: ` +
              (s.every === undefined
                ? `"${s.cron ?? '?'}" ${s.timezone ?? 'UTC'}`
                : `every ${s.every / 60_000}m`) +
              `, next ${s.next ?? '?'}\n`,
          );
        for (const id of r.removed) ctx.stdout.write(`removed ${id}\n`);
        ctx.stdout.write(
          `${r.created.length} created, ${r.updated.length} updated, ${r.unchanged.length} unchanged, ${r.removed.length} removed\n`,
        );
      });
    });
}

/** Bad usage (exit 2) when --to is a day not yet over for one of `reports`: only ended periods are final. */
function refuseUnended(reports: readonly ReportJob[], to: string, now: Date): void {
  const first = earliestToday(reports, now);
  if (first === undefined || to < first.today) return;
  throw usageError(
    `--to ${to} has not ended for ${first.report} (${first.timezone}, where it is ${first.today}): ` +
      `backfill pulls only periods that have ended; use --to ${addDays(first.today, -1)} or earlier`,
  );
}

function selectReports(ctx: CliContext, flags: BackfillFlags): ReportJob[] {
  const names = flags.report ?? [];
  if (!flags.all && names.length === 0)
    throw usageError('backfill needs the reports to pull: give --report NAME or --all (neither was given)');
  if (flags.all && names.length > 0)
    throw usageError('--report and --all were both given: give --report NAME or --all, not both');
  const all = ctx.jobs().reports;
  if (flags.all) return [...all];
  const known = new Map(all.map((r) => [r.name, r]));
  return [...new Set(names)].map((n) => {
    const r = known.get(n);
    if (r === undefined)
      throw usageError(
        `--report ${n}: no such report definition in ${ctx.config().jobsDir}; known: ${[...known.keys()].join(', ')}`,
      );
    return r;
  });
}

/** The API request a pull would make, as --dry-run prints it: base URL (if set), ADOPS_REPORT_PARAMS form. */
function dryRunRequest(
  accounts: readonly Account[],
  reports: readonly ReportJob[],
): (pull: PlannedPull) => string {
  return (pull) => {
    const account = accounts.find((a) => a.name === (pull.account ?? DEFAULT_ACCOUNT));
    const report = reports.find((r) => r.name === pull.report);
    const dimensions = report?.dimensions ?? [];
    const period = { start: pull.period.start, end: pull.until ?? pull.period.end };
    const { path, body } = reportRequest({ dimensions, period }, account?.reportParams);
    const line = `GET ${account?.baseUrl ?? ''}${path}`;
    return body === undefined ? line : `${line} ${JSON.stringify(body)}`;
  };
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').flatMap((s) => (s.trim() === '' ? [] : [s.trim()]))];
}
