// What the commands that enqueue show while they wait, on stderr so stdout keeps their result
// lines: progress bars on a terminal (a line every few seconds elsewhere), and Redis outages ridden
// out and reported, with the command that finishes the job when the wait gives up.
import cliProgress from 'cli-progress';
import { etaSeconds, progressLine, type SyncProgress } from '../catalogue/checkpoint.js';
import type { Config } from '../config/env.js';
import { describeRedisTarget } from '../config/connections.js';
import { daysBetween } from '../dates/calendar.js';
import { pullLabel } from '../plan/pulls.js';
import {
  waitForPulls,
  type BackfillResult,
  type EnqueueCounts,
  type PullProgress,
} from '../queue/enqueue.js';
import { RedisOutageError, RedisUnavailableError, type OutageState } from '../queue/connection.js';
import { pullAccount, pullPeriod } from '../queue/jobs.js';
import { openQueues, type Queues } from '../queue/queues.js';
import { outageReason } from '../retry/classify.js';
import { CommandFailed, intOption, type CliContext } from './context.js';

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
    const bar = progressBar(
      ctx.stderr,
      'enqueue |{bar}| {value}/{total} pulls | {already} already queued | {rate}/s',
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

/** Opens the queues, turning an unreachable Redis into a one-line failure ending with `hint`. */
export async function open(config: Config, hint = ''): Promise<Queues> {
  try {
    return await openQueues(config);
  } catch (error) {
    if (error instanceof RedisUnavailableError)
      throw new CommandFailed(`${error.message}${hint}`, { cause: error });
    throw error;
  }
}

/** The `--redis-outage-seconds` option of the commands that wait (`backfill`, `heal`, `sync`). */
export const redisOutageOption = [
  '--redis-outage-seconds <s>',
  'with --wait: how long to ride out a Redis that cannot be reached before giving up (default ADOPS_REDIS_OUTAGE_SECONDS, 120)',
  intOption(1, 86_400, 'seconds'),
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
    ? progressBar(
        ctx.stderr,
        'pulls |{bar}| {finished}/{total} done {done} failed {failed} | {rate}/s | ETA {eta_s}{redis}',
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
  const days = Math.min(3660, daysBetween(oldest, new Date().toISOString().slice(0, 10)) + 1);
  return days > healDays ? `adops heal --days ${days}` : 'adops heal';
}

/** Draws a sync's progress on stderr while it runs. */
interface ProgressView {
  update(progress: SyncProgress): void;
  stop(): void;
}

/**
 * A progress bar of campaigns listed (with requests and an ETA) when `stream` is a terminal; else
 * a line every `lineEveryMs` (none for a sync quicker than that, so logs stay quiet). Only ever
 * writes to `stream` (stderr): stdout keeps the command's one summary line.
 */
export function syncProgressView(
  stream: NodeJS.WritableStream & { isTTY?: boolean },
  lineEveryMs = 5_000,
): ProgressView {
  const bar =
    stream.isTTY === true
      ? progressBar(
          stream,
          'sync {phase} |{bar}| {value}/{total} campaigns | {requests} requests | ETA {eta_s}',
        )
      : undefined;
  let started = false;
  let lastLine = Date.now();
  return {
    update(p) {
      const now = Date.now();
      if (bar === undefined) {
        if (now - lastLine < lineEveryMs) return;
        lastLine = now;
        stream.write(`${progressLine(p, now)}\n`);
        return;
      }
      // The bar needs its total: nothing is drawn while the campaigns are still being listed.
      if (p.campaignsTotal === null) return;
      const eta = etaSeconds(p, now);
      const fields = {
        phase: p.phase,
        requests: p.requests,
        // Not `eta`: cli-progress fills that name with its own estimate.
        eta_s: eta === undefined ? '?' : `${Math.ceil(eta)}s`,
      };
      const total = p.campaignsTotal;
      if (!started) {
        bar.start(total, p.campaignsDone, fields);
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(p.campaignsDone, fields);
      }
    },
    stop() {
      if (started) bar?.stop();
    },
  };
}

/** A progress bar on `stream` (a terminal), drawn in the house style. */
function progressBar(stream: NodeJS.WritableStream, format: string): cliProgress.SingleBar {
  return new cliProgress.SingleBar({ stream, format, hideCursor: true }, cliProgress.Presets.shades_classic);
}
