import cliProgress from 'cli-progress';
import { InvalidArgumentError, type Command } from 'commander';
import type { ReportJob } from '../../config/jobs.js';
import {
  enqueueStream,
  summarize,
  waitForPulls,
  type BackfillResult,
  type EnqueueCounts,
  type PullProgress,
} from '../../queue/enqueue.js';
import { RedisOutageError, RedisUnavailableError, type OutageState } from '../../queue/connection.js';
import { outageReason } from '../../retry/classify.js';
import { describeRedisTarget } from '../../config/connections.js';
import { backfillPulls } from '../../plan/pulls.js';
import { interleaveAccounts, pullLabel } from '../../plan/pulls.js';
import { selectAccounts } from '../../config/accounts.js';
import { pullAccount, pullPeriod } from '../../queue/jobs.js';
import { DateFormatError, daysBetween, formatUtcDate, parseIsoDate } from '../../dates/calendar.js';
import { openQueues, type Queues } from '../../queue/queues.js';
import { CommandFailed, UsageError, type CliContext } from '../context.js';
import { SUMMARIES } from './summaries.js';

interface BackfillFlags {
  readonly report?: string[];
  readonly all: boolean;
  readonly from: string;
  readonly to: string;
  readonly wait: boolean;
  readonly dryRun: boolean;
  readonly oldestFirst: boolean;
  readonly account?: string;
  readonly redisOutageSeconds?: number;
}

/** `adops backfill`: one pull per report and period of a date range. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('backfill')
    .description(SUMMARIES.backfill)
    .option('--report <name...>', 'report definition(s) to backfill (repeat or comma-separate)', collect)
    .option('--all', 'every report definition', false)
    .option('--account <name>', 'only this account of ADOPS_ACCOUNTS_FILE (default: every account)')
    .requiredOption('--from <date>', 'first day, YYYY-MM-DD', date)
    .requiredOption('--to <date>', 'last day, YYYY-MM-DD (inclusive)', date)
    .option('--wait', 'show progress until every pull finished; exit 1 listing failed periods', false)
    .option(...redisOutageOption)
    .option('--dry-run', 'print the periods and the API calls it would make; enqueue nothing', false)
    .option(
      '--oldest-first',
      'queue report by report, oldest period first (default: newest period first, all reports of a period together)',
      false,
    )
    .addHelpText(
      'after',
      '\nNewest periods are pulled first, so dashboards get recent days first. ' +
        'A pull already waiting or running for the same report and period is not enqueued twice. ' +
        'Reads REDIS_URL and ADOPS_QUEUE_PREFIX; the workers (`adops worker`) do the pulls.',
    )
    .action(async (flags: BackfillFlags) => {
      const reports = selectReports(ctx, flags);
      if (flags.from > flags.to) throw new UsageError(`--from ${flags.from} is after --to ${flags.to}`);
      const order = flags.oldestFirst ? 'oldest-first' : 'newest-first';
      const accounts = selectAccounts(ctx.config().accounts, flags.account);
      // The plan, read lazily: every account's periods, interleaved, never all held at once.
      const plan = () =>
        interleaveAccounts(accounts, reports, (own) => backfillPulls(own, flags.from, flags.to, order));
      if (flags.dryRun) {
        let n = 0;
        for (const p of plan()) {
          ctx.stdout.write(`${pullLabel(p)}\n`);
          n++;
        }
        ctx.stdout.write(
          `${n} pulls over ${reports.length} report(s): ${n} API calls ` +
            '(one per pull, before retries); nothing enqueued\n',
        );
        return;
      }
      const queues = await open(ctx);
      try {
        let total = 0;
        for (const _ of plan()) total++;
        const progress = enqueueProgress(ctx, total);
        let result;
        try {
          result = await enqueueStream(queues.pulls, plan(), { keep: flags.wait, onChunk: progress.update });
        } finally {
          progress.stop();
        }
        ctx.stdout.write(`${enqueuedLine(result)}\n`);
        if (flags.wait)
          await waitWithProgress(ctx, queues, summarize(result.pulls ?? []), flags.redisOutageSeconds);
      } finally {
        await queues.close();
      }
    });
}

/**
 * A progress bar of an enqueue on stderr when it is a terminal, else a line every few seconds (so
 * a short enqueue writes nothing there).
 */
export function enqueueProgress(
  ctx: CliContext,
  total: number,
): { update(done: EnqueueCounts): void; stop(): void } {
  const started = Date.now();
  if (ctx.stderr.isTTY === true) {
    const bar = new cliProgress.SingleBar(
      {
        stream: ctx.stderr,
        format: 'enqueue |{bar}| {value}/{total} pulls | {already} already queued | {rate}/s',
        hideCursor: true,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, { already: 0, rate: '0' });
    return {
      update: (d) =>
        bar.update(d.added + d.alreadyQueued, {
          already: d.alreadyQueued,
          rate: rate(d.added + d.alreadyQueued, started),
        }),
      stop: () => bar.stop(),
    };
  }
  let lastLine = started;
  return {
    update: (d) => {
      if (Date.now() - lastLine < 5_000) return;
      lastLine = Date.now();
      const n = d.added + d.alreadyQueued;
      ctx.stderr.write(`enqueued ${n}/${total} pulls, ${rate(n, started)}/s\n`);
    },
    stop: () => undefined,
  };
}

function rate(n: number, since: number): string {
  const seconds = (Date.now() - since) / 1000;
  return seconds > 0 ? (n / seconds).toFixed(0) : '0';
}

/** One line saying what was enqueued. */
export function enqueuedLine(r: EnqueueCounts): string {
  return (
    `enqueued ${r.added} pulls` +
    (r.alreadyQueued > 0 ? ` (${r.alreadyQueued} already waiting or running)` : '')
  );
}

/** Opens the queues, turning an unreachable Redis into a one-line failure. */
export async function open(ctx: CliContext): Promise<Queues> {
  try {
    return await openQueues(ctx.config());
  } catch (error) {
    if (error instanceof RedisUnavailableError) throw new CommandFailed(error.message, { cause: error });
    throw error;
  }
}

/** The `--redis-outage-seconds` option of the commands that wait (`backfill`, `heal`, `sync`). */
export const redisOutageOption = [
  '--redis-outage-seconds <s>',
  'with --wait: how long to ride out a Redis that cannot be reached before giving up (default ADOPS_REDIS_OUTAGE_SECONDS, 120)',
  (value: string) => {
    if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 86_400)
      throw new InvalidArgumentError('expected a whole number of seconds from 1 to 86400');
    return Number(value);
  },
] as const;

/** The outage bound of a wait in milliseconds: the flag, else ADOPS_REDIS_OUTAGE_SECONDS. */
export function outageMs(ctx: CliContext, flag: number | undefined): number {
  return (flag ?? ctx.config().queue.redisOutageSeconds) * 1000;
}

/**
 * Tells the person waiting that Redis is away, and when it is back: on a terminal in the progress
 * bar's own line (`note`), else a line on stderr at the start and at the end of the outage.
 */
export function outageNotice(
  ctx: CliContext,
  boundMs: number,
  note?: (text: string) => void,
): (state: OutageState) => void {
  const where = describeRedisTarget(ctx.config().redis);
  let away = false;
  return (state) => {
    const seconds = Math.round(state.awayMs / 1000);
    if (note !== undefined) {
      note(state.away ? ` | Redis not answering for ${seconds} s, retrying up to ${boundMs / 1000} s` : '');
      return;
    }
    if (state.away && !away)
      ctx.stderr.write(
        `Redis at ${where} is not answering (${outageReason(state.error)}): still waiting, for up to ${boundMs / 1000} s\n`,
      );
    else if (!state.away) ctx.stderr.write(`Redis answers again after ${seconds} s: still waiting\n`);
    away = state.away;
  };
}

/**
 * The one line of a wait that gave up on Redis: where Redis is (no password), how long it was
 * away, what was awaited, and what finishes the job.
 */
export function outageFailure(
  ctx: CliContext,
  error: RedisOutageError,
  awaited: string,
  next: string,
): CommandFailed {
  return new CommandFailed(
    `Redis at ${describeRedisTarget(ctx.config().redis)} ${error.message.replace(/^Redis /, '')} ` +
      `while waiting for ${awaited}: ${next}`,
    { cause: error },
  );
}

/**
 * Waits for the pulls with a progress bar on stderr (a line every few seconds when stderr is not
 * a terminal); throws CommandFailed listing the failed periods and their reasons. Redis going away
 * is ridden out for `redisOutageSeconds` (default ADOPS_REDIS_OUTAGE_SECONDS), the bar kept.
 */
export async function waitWithProgress(
  ctx: CliContext,
  queues: Queues,
  result: BackfillResult,
  redisOutageSeconds?: number,
): Promise<void> {
  const total = result.pulls.length;
  if (total === 0) return;
  const tty = ctx.stderr.isTTY === true;
  const bar = tty
    ? new cliProgress.SingleBar(
        {
          stream: ctx.stderr,
          format:
            'pulls |{bar}| {finished}/{total} done {done} failed {failed} | {rate}/s | ETA {eta_s}{redis}',
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let latest: PullProgress = { total, done: 0, failed: 0, ratePerSecond: 0, etaSeconds: undefined };
  let redis = '';
  const fields = (p: PullProgress) => ({
    done: p.done,
    failed: p.failed,
    finished: p.done + p.failed,
    rate: p.ratePerSecond.toFixed(1),
    eta_s: p.etaSeconds === undefined ? '?' : `${Math.ceil(p.etaSeconds)}s`,
    redis,
  });
  bar?.start(total, 0, fields(latest));
  let lastLine = 0;
  const controller = new AbortController();
  const stop = () => controller.abort();
  const bound = outageMs(ctx, redisOutageSeconds);
  process.once('SIGINT', stop);
  let outcome;
  try {
    outcome = await waitForPulls(queues.pulls, result.pulls, {
      signal: controller.signal,
      outageMs: bound,
      onOutage: outageNotice(
        ctx,
        bound,
        bar === undefined
          ? undefined
          : (text) => {
              redis = text;
              bar.update(latest.done + latest.failed, fields(latest));
            },
      ),
      onProgress: (p) => {
        latest = p;
        const f = fields(p);
        if (bar !== undefined) bar.update(f.finished, f);
        else if (Date.now() - lastLine > 5_000 || f.finished === total) {
          lastLine = Date.now();
          ctx.stderr.write(
            `pulls ${f.finished}/${total}: done ${f.done}, failed ${f.failed}, ${f.rate}/s, ETA ${f.eta_s}\n`,
          );
        }
      },
    });
  } catch (error) {
    if (!(error instanceof RedisOutageError)) throw error;
    const finished = latest.done + latest.failed;
    throw outageFailure(
      ctx,
      error,
      `${total - finished} of ${total} pulls to finish`,
      `they go on in the workers once Redis is back; run \`${healCommand(ctx, result)}\` to finish the job`,
    );
  } finally {
    process.off('SIGINT', stop);
    bar?.stop();
  }
  if (controller.signal.aborted)
    throw new CommandFailed('stopped waiting; the pulls go on in the workers (see `adops status`)');
  ctx.stdout.write(`${outcome.completed.length} pulls done, ${outcome.failed.length} failed\n`);
  if (outcome.failed.length > 0) {
    const lines = outcome.failed.map(
      (f) =>
        `  ${pullLabel({ account: pullAccount(f.pull.data), report: f.pull.data.report, period: pullPeriod(f.pull.data) })}: ${f.reason}`,
    );
    throw new CommandFailed(
      `${outcome.failed.length} of ${total} pulls failed:\n${lines.join('\n')}\n` +
        'fix the cause, then `adops heal` (or backfill those periods again)',
    );
  }
}

/**
 * `adops heal`, with `--days` reaching back to the oldest of `result`'s periods when the default
 * window (ADOPS_HEAL_DAYS) does not, plus a day for time zones ahead of UTC.
 */
function healCommand(ctx: CliContext, result: BackfillResult): string {
  const healDays = ctx.config().healDays;
  const starts = result.pulls.map((p) => p.data.periodStart).sort();
  const oldest = starts[0];
  if (oldest === undefined) return 'adops heal';
  const days = Math.min(3660, daysBetween(oldest, formatUtcDate(new Date())) + 1);
  return days > healDays ? `adops heal --days ${days}` : 'adops heal';
}

function selectReports(ctx: CliContext, flags: BackfillFlags): ReportJob[] {
  const names = flags.report ?? [];
  if (flags.all === names.length > 0) throw new UsageError('give either --report NAME or --all (not both)');
  const all = ctx.jobs().reports;
  if (flags.all) return [...all];
  const known = new Map(all.map((r) => [r.name, r]));
  return [...new Set(names)].map((n) => {
    const r = known.get(n);
    if (r === undefined)
      throw new UsageError(
        `--report ${n}: no such report definition in ${ctx.config().jobsDir}; known: ${[...known.keys()].join(', ')}`,
      );
    return r;
  });
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [
    ...(previous ?? []),
    ...value
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  ];
}

function date(value: string): string {
  try {
    return parseIsoDate(value);
  } catch (error) {
    if (error instanceof DateFormatError) throw new InvalidArgumentError(error.message);
    throw error;
  }
}
