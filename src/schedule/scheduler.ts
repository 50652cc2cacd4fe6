// `adops schedule`: one BullMQ job scheduler per job definition, kept idempotently, and the tick job such a
// scheduler creates, which enqueues the real pulls (scheduler jobs cannot be deduplicated themselves).
import { DEFAULT_ACCOUNT, runsReport } from '../platform/config/accounts.js';
import { fromStart, startOf } from '../plan/bounds.js';
import type { JobSet, Schedule, ReportJob, ReportLookup } from '../platform/config/jobs.js';
import {
  ONLY_DEFAULT,
  type PlanAccount,
  type PlannedPull,
  type PeriodState,
  inRequests,
  planTick,
  scheduledTime,
  todayPulls,
  tickWindows,
  type TickJob,
} from '../plan/pulls.js';
import { isOurScheduler, schedulerId, SYNC_JOB, TICK_JOB } from '../platform/queue/jobs.js';
import type { Queues, PullQueue } from '../platform/queue/queues.js';
import type { Period } from '../platform/dates/periods.js';
import { enqueuePulls } from './enqueue.js';

/** A scheduler's repeat: a cron `pattern` in time zone `tz`, or `every` so many ms (`today:`). */
type Repeat = { readonly pattern?: string; readonly tz?: string; readonly every?: number };

interface Wanted {
  readonly id: string;
  readonly queue: 'ticks' | 'syncs';
  readonly repeat: Repeat;
  readonly name: string;
  readonly data: Record<string, string>;
}

const cronOf = (s: Schedule): Repeat => ({ pattern: s.cron, tz: s.timezone });

/** The schedulers the definitions ask for: reports tick on TICK_QUEUE (and `today:` ticks), entities sync
 * on ENTITY_QUEUE. */
export function wantedSchedulers(jobs: JobSet, accounts: readonly PlanAccount[] = ONLY_DEFAULT): Wanted[] {
  const out: Wanted[] = [];
  const want = (id: string, queue: Wanted['queue'], repeat: Repeat, name: string, data: Wanted['data']) =>
    out.push({ id, queue, repeat, name, data });
  for (const { name, schedule, today } of jobs.reports) {
    if (schedule !== undefined)
      want(schedulerId('report', name), 'ticks', cronOf(schedule), TICK_JOB, { report: name });
    if (today !== undefined)
      want(schedulerId('today', name), 'ticks', { every: today.everyMs }, TICK_JOB, {
        report: name,
        today: 'yes',
      });
  }
  // A report's tick enqueues the pulls of every account; each account syncs its own catalogue.
  for (const { name, schedule } of jobs.entities)
    if (schedule !== undefined)
      for (const { name: account } of accounts)
        want(
          schedulerId('entities', name, account),
          'syncs',
          cronOf(schedule),
          SYNC_JOB,
          account === DEFAULT_ACCOUNT ? {} : { account },
        );
  return out;
}

/** Upserts a scheduler per scheduled definition, removes ours without one; a second run changes nothing. */
export async function syncSchedulers(
  queues: Pick<Queues, 'ticks' | 'syncs'>,
  jobs: JobSet,
  accounts: readonly PlanAccount[] = ONLY_DEFAULT,
): Promise<Record<'created' | 'updated' | 'unchanged' | 'removed', string[]>> {
  const wanted = wantedSchedulers(jobs, accounts);
  const [created, updated, unchanged, removed]: [string[], string[], string[], string[]] = [[], [], [], []];
  for (const kind of ['ticks', 'syncs'] as const) {
    const queue = queues[kind];
    const existing = new Map((await queue.getJobSchedulers(0, -1)).map((s) => [s.id ?? s.key, s]));
    for (const w of wanted.filter((x) => x.queue === kind)) {
      const have = existing.get(w.id);
      if (
        have !== undefined &&
        have.pattern === w.repeat.pattern &&
        have.tz === w.repeat.tz &&
        have.every === w.repeat.every &&
        // Key by key: the Postgres backend keeps the data as jsonb, which orders its keys its own way.
        JSON.stringify(Object.entries(have.template?.data ?? {}).sort()) ===
          JSON.stringify(Object.entries(w.data).sort())
      ) {
        unchanged.push(w.id);
        continue;
      }
      await queue.upsertJobScheduler(
        w.id,
        w.repeat,
        // The template carries only the report name: no key, no URL.
        { name: w.name, data: w.data as never },
      );
      (have === undefined ? created : updated).push(w.id);
    }
    const keep = new Set(wanted.map((w) => w.id));
    for (const id of existing.keys()) {
      if (!isOurScheduler(id) || keep.has(id)) continue;
      await queue.removeJobScheduler(id);
      removed.push(id);
    }
  }
  return { created, updated, unchanged, removed };
}

/** Our schedulers on the tick and sync queues, sorted by id, with their next firing (ISO 8601) when known. */
export async function listSchedulers(queues: Pick<Queues, 'ticks' | 'syncs'>) {
  const all = [
    ...(await queues.ticks.getJobSchedulers(0, -1)),
    ...(await queues.syncs.getJobSchedulers(0, -1)),
  ];
  return all
    .map((s) => ({
      id: s.id ?? s.key,
      cron: s.pattern,
      timezone: s.tz,
      every: s.every,
      next: s.next === undefined ? undefined : new Date(s.next).toISOString(),
    }))
    .filter((s) => isOurScheduler(s.id))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export const DEFAULT_GAP_CAP = 60; // Gap repairs one tick enqueues at most, by default.

export interface TickDeps {
  /** The definitions as they are when the tick runs (a worker follows its jobs folder). */
  readonly reports: ReportLookup;
  readonly pulls: PullQueue;
  /** The warehouse's last attempt per period of `report` and `account` within from..to. */
  states(report: ReportJob, from: string, to: string, account: string): Promise<PeriodState[]>;
  /** The accounts pulled (default: the one account `default`); each running the report gets its pulls. */
  readonly accounts?: readonly PlanAccount[];
  readonly healDays: number; // Days back the gap repair looks (config.healDays).
  readonly gapCap: number;
  readonly now?: () => Date; // The clock (tests fix it); default the real one.
}

export interface TickResult {
  readonly report: string;
  readonly scheduledFor: string;
  readonly window: readonly Period[];
  readonly gaps: readonly Period[];
  readonly added: number; // Pulls (requests) added; the rest were already waiting or running.
}

/** Runs one tick: enqueues the report's window (yesterday and its lookback, as of the scheduled instant),
 * then up to gapCap periods of the last healDays never loaded or whose last attempt failed. */
export async function runTick(deps: TickDeps, job: TickJob): Promise<TickResult> {
  const name = String(job.data.report);
  const report = deps.reports.get(name);
  if (report === undefined)
    throw new Error(
      `scheduler tick for report "${name}", which this worker's jobs folder does not define: ` +
        'run `adops schedule` after deleting a definition, and deploy the same jobs/ to every worker',
    );
  const at = scheduledTime(job);
  // A `today:` tick: the current, unfinished period of each account, provisional; no gap repair.
  if (job.data.today !== undefined) {
    const pulls = todayPulls([report], deps.now?.() ?? new Date(), deps.accounts);
    const added = (await enqueuePulls(deps.pulls, pulls)).filter((e) => e.added).length;
    return {
      report: name,
      scheduledFor: at.toISOString(),
      window: pulls.slice(0, 1).map((p) => p.period),
      gaps: [],
      added,
    };
  }
  const windows = tickWindows(report, at, deps.now?.() ?? new Date(), deps.healDays);
  const first = windows.watched[0];
  const last = windows.watched.at(-1);
  const pulls: PlannedPull[] = [];
  const gaps: Period[] = [];
  let window: readonly Period[] = [];
  for (const account of deps.accounts ?? ONLY_DEFAULT) {
    if (!runsReport(account, report.name)) continue;
    const states =
      first === undefined || last === undefined || deps.gapCap <= 0
        ? []
        : await deps.states(report, first.start, last.end, account.name);
    // Each account has its own gap budget: one account's backlog never starves another's repairs.
    const start = startOf(report, account);
    const own = { window: fromStart(windows.window, start), watched: fromStart(windows.watched, start) };
    const plan = planTick(own, states, deps.gapCap);
    window = plan.window;
    gaps.push(...plan.gaps);
    for (const period of [...plan.window, ...plan.gaps])
      pulls.push({ account: account.name, report: report.name, period });
  }
  // Oldest first, so the window (yesterday and its lookback) and the gaps beside it make the fewest requests.
  pulls.sort((a, b) => (a.period.start < b.period.start ? -1 : a.period.start > b.period.start ? 1 : 0));
  const enqueued = await enqueuePulls(deps.pulls, inRequests(pulls, [report], deps.accounts));
  return {
    report: report.name,
    scheduledFor: at.toISOString(),
    window,
    gaps,
    added: enqueued.filter((e) => e.added).length,
  };
}
