// What the commands that enqueue show on stderr while they wait: progress, and outages of the queue's store.
import cliProgress from 'cli-progress';
import { Option } from 'commander';
import { etaSeconds, progressLine, type SyncProgress } from '../catalogue/checkpoint.js';
import { describeRedisTarget } from '../platform/config/connections.js';
import { daysBetween } from '../platform/dates/calendar.js';
import { pullLabel } from '../plan/pulls.js';
import {
  waitForPulls,
  type BackfillResult,
  type EnqueueCounts,
  type PullProgress,
} from '../schedule/enqueue.js';
import { QueueOutageError, type OutageState } from '../platform/queue/connection.js';
import { pullAccount, pullPeriod } from '../platform/queue/jobs.js';
import type { Queues } from '../platform/queue/queues.js';
import { outageReason } from '../platform/retry/classify.js';
import { CommandFailed, intOption, type CliContext } from './context.js';
import { watchWorkers } from './no-worker.js';

/** Progress drawn on a stream: a cli-progress bar on a terminal, else lines now and then. */
interface View {
  readonly tty: boolean;
  /** Draws `value` of `total`; off a terminal, `line()` at most every 5 s unless `force`d. */
  update(value: number, total: number, fields: object, line?: () => string, force?: boolean): void;
  stop(): void;
}

/** A View on `stream`, its bar drawn in `format`; `barAnywhere` draws it off a terminal too, every 2 s (the demo's). */
export function progressView(
  stream: NodeJS.WritableStream & { isTTY?: boolean },
  format: string,
  lastLine = Date.now(),
  barAnywhere = false,
): View {
  const tty = stream.isTTY === true;
  const bar =
    tty || barAnywhere
      ? new cliProgress.SingleBar(
          { stream, format, hideCursor: true, noTTYOutput: !tty, notTTYSchedule: 2000 },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
  let started = false;
  return {
    tty: bar !== undefined,
    update(value, total, fields, line, force = false) {
      if (bar === undefined) {
        if (line === undefined || (!force && Date.now() - lastLine < 5_000)) return;
        lastLine = Date.now();
        stream.write(`${line()}\n`);
      } else if (started) {
        bar.setTotal(total);
        bar.update(value, fields);
      } else {
        bar.start(total, value, fields);
        started = true;
      }
    },
    stop: () => {
      if (started) bar?.stop();
    },
  };
}

/** An ETA for a bar, as `12s` or `?` (not `eta`: cli-progress fills that name with its own, INF at first). */
export function etaText(seconds: number | undefined): string {
  return seconds === undefined ? '?' : `${Math.ceil(seconds)}s`;
}

export function enqueueProgress(ctx: CliContext, total: number) {
  const started = Date.now();
  const view = progressView(
    ctx.stderr,
    'enqueue |{bar}| {value}/{total} pulls | {already} already queued | {rate}/s',
    started,
  );
  view.update(0, total, { already: 0, rate: '0' });
  return {
    update: (d: EnqueueCounts) => {
      const n = d.added + d.alreadyQueued;
      const seconds = (Date.now() - started) / 1000;
      const rate = seconds > 0 ? (n / seconds).toFixed(0) : '0';
      view.update(
        n,
        total,
        { already: d.alreadyQueued, rate },
        () => `enqueued ${n}/${total} pulls, ${rate}/s`,
      );
    },
    stop: view.stop,
  };
}

export function enqueuedLine(r: EnqueueCounts): string {
  return (
    `enqueued ${r.added} pulls` +
    (r.alreadyQueued > 0 ? ` (${r.alreadyQueued} already waiting or running)` : '')
  );
}

/** The `--queue-outage-seconds` option of the commands that wait (`backfill`, `heal`, `sync`). */
export const queueOutageOption = [
  '--queue-outage-seconds <s>',
  "with --wait: how long to ride out the queue's store (Redis, or Postgres with ADOPS_QUEUE=postgres) not answering before giving up (default ADOPS_REDIS_OUTAGE_SECONDS, 120)",
  intOption(1, 86_400, 'seconds'),
] as const;

/** `--redis-outage-seconds`, the old name of `--queue-outage-seconds`: still accepted, not listed in the help. */
export function redisOutageAlias(): Option {
  return new Option('--redis-outage-seconds <s>').argParser(intOption(1, 86_400, 'seconds')).hideHelp();
}

/** The outage bound a command's flags give, if any; the old flag's name earns a one-line note on stderr. */
export function outageSecondsOf(
  ctx: CliContext,
  flags: { readonly queueOutageSeconds?: number; readonly redisOutageSeconds?: number },
): number | undefined {
  if (flags.redisOutageSeconds !== undefined)
    ctx.stderr.write(
      'adops: --redis-outage-seconds is now --queue-outage-seconds; the old name still works\n',
    );
  return flags.queueOutageSeconds ?? flags.redisOutageSeconds;
}

/** How a wait rides out a queue store outage, said in the bar (`note`) or on stderr; `gaveUp`: one line. */
export function outageWatch(ctx: CliContext, flagSeconds: number | undefined, note?: (text: string) => void) {
  const { queue, redis } = ctx.config();
  const boundS = flagSeconds ?? queue.redisOutageSeconds;
  // Named by what it is: on ADOPS_QUEUE=postgres there is no Redis to blame.
  const [name, where] =
    queue.backend === 'postgres'
      ? ["the queue's Postgres", `the queue's Postgres (schema ${queue.schema})`]
      : ['Redis', `Redis at ${describeRedisTarget(redis)}`];
  let away = false;
  return {
    outageMs: boundS * 1000,
    store: where,
    onOutage: (state: OutageState) => {
      const seconds = Math.round(state.awayMs / 1000);
      if (note !== undefined) {
        note(state.away ? ` | ${name} not answering for ${seconds} s, retrying up to ${boundS} s` : '');
        return;
      }
      if (state.away && !away)
        ctx.stderr.write(
          `${where} is not answering (${outageReason(state.error)}): still waiting, for up to ${boundS} s\n`,
        );
      else if (!state.away) ctx.stderr.write(`${name} answers again after ${seconds} s: still waiting\n`);
      away = state.away;
    },
    gaveUp:
      (awaited: string, next: (store: string) => string) =>
      (error: unknown): never => {
        if (!(error instanceof QueueOutageError)) throw error;
        throw new CommandFailed(`${error.message} while waiting for ${awaited}: ${next(name)}`, {
          cause: error,
        });
      },
  };
}

/** Waits for the pulls with progress on stderr; throws CommandFailed listing the failed periods and why. */
export async function waitWithProgress(
  ctx: CliContext,
  queues: Queues,
  result: BackfillResult,
  outageSeconds?: number,
): Promise<void> {
  const total = result.pulls.length;
  if (total === 0) return;
  const view = progressView(
    ctx.stderr,
    'pulls |{bar}| {finished}/{total} done {done} failed {failed} | {rate}/s | ETA {eta_s}{redis}{worker}',
    0,
  );
  let latest: PullProgress = { total, done: 0, failed: 0, ratePerSecond: 0, etaSeconds: undefined };
  let redis = '';
  let worker = '';
  // Off a terminal, progress is a line every few seconds and one at the end.
  const draw = (p: PullProgress, withLine = false) => {
    const progressed = p.done + p.failed > latest.done + latest.failed;
    latest = p;
    // A pull finished: someone works the queue (and the bar's no-worker note goes).
    if (progressed) workers.progressed();
    const [finished, rate, eta] = [p.done + p.failed, p.ratePerSecond.toFixed(1), etaText(p.etaSeconds)];
    const fields = { done: p.done, failed: p.failed, finished, rate, eta_s: eta, redis, worker };
    const line = () =>
      `pulls ${finished}/${total}: done ${p.done}, failed ${p.failed}, ${rate}/s, ETA ${eta}`;
    view.update(finished, total, fields, withLine ? line : undefined, finished === total);
  };
  // Nobody taking the pulls is said on the bar, or off a terminal in a line when it starts and one when it ends.
  let saidNoWorker = false;
  const workers = watchWorkers(ctx, queues, (n) => {
    if (view.tty) {
      worker = n.state === 'away' ? n.short : '';
      draw(latest);
      return;
    }
    if (n.state === 'back' || !saidNoWorker) ctx.stderr.write(`${n.line}\n`);
    saidNoWorker = n.state === 'away';
  });
  draw(latest);
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  const watch = outageWatch(
    ctx,
    outageSeconds,
    view.tty
      ? (text) => {
          redis = text;
          draw(latest);
        }
      : undefined,
  );
  const outcome = await waitForPulls(queues.pulls, result.pulls, {
    signal: controller.signal,
    ...watch,
    onProgress: (p) => draw(p, true),
  })
    .catch((error: unknown) => {
      const finished = latest.done + latest.failed;
      return watch.gaveUp(
        `${total - finished} of ${total} pulls to finish`,
        (store) =>
          `they go on in the workers once ${store} is back; run \`${healCommand(ctx, result)}\` to finish the job`,
      )(error);
    })
    .finally(() => {
      workers.stop();
      process.off('SIGINT', stop);
      view.stop();
    });
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

/** `adops heal`, its `--days` reaching `result`'s oldest period (plus a day for time zones ahead of UTC). */
function healCommand(ctx: CliContext, result: BackfillResult): string {
  const oldest = result.pulls.map((p) => p.data.periodStart).sort()[0];
  if (oldest === undefined) return 'adops heal';
  const days = Math.min(3660, daysBetween(oldest, new Date().toISOString().slice(0, 10)) + 1);
  return days > ctx.config().healDays ? `adops heal --days ${days}` : 'adops heal';
}

/** A sync's progress on `stream`: a bar of campaigns listed on a terminal, else a line every 5 s. */
export function syncProgressView(stream: CliContext['stderr']) {
  const view = progressView(
    stream,
    'sync {phase} |{bar}| {value}/{total} campaigns | {requests} requests | ETA {eta_s}',
  );
  return {
    update(p: SyncProgress) {
      // The bar needs its total: nothing is drawn while the campaigns are still being listed.
      if (view.tty && p.campaignsTotal === null) return;
      const now = Date.now();
      const fields = { phase: p.phase, requests: p.requests, eta_s: etaText(etaSeconds(p, now)) };
      view.update(p.campaignsDone, p.campaignsTotal ?? 0, fields, () => progressLine(p, now));
    },
    stop: view.stop,
  };
}
