// Adding pulls to the queue, deduplicated per report and period while one is unfinished, in chunks
// drawn from the plan; a backfill and the wait for its pulls, and heal's plan (from the warehouse).
import { randomBytes } from 'node:crypto';
import { DEFAULT_ACCOUNT, runsReport } from '../platform/config/accounts.js';
import { PULL_JOB, pullData, pullDedupId, type PullJobData } from '../platform/queue/jobs.js';
import {
  type PlannedPull,
  planBackfill,
  type BackfillOrder,
  ONLY_DEFAULT,
  planForAccounts,
  type PlanAccount,
  healWindowOf,
  inRequests,
  planHeal,
} from '../plan/pulls.js';
import { fromStart, startOf } from '../plan/bounds.js';
import type { PullQueue } from '../platform/queue/queues.js';
import type { ReportJob } from '../platform/config/jobs.js';
import { pause, throughOutage, WAIT_OUTAGE_MS, type OutageOptions } from '../platform/queue/connection.js';
import { loadStates } from '../pull/history.js';
import type { Warehouse } from '../platform/pg/handle.js';

/** One requested pull and the job that will do it. */
export interface EnqueuedPull {
  readonly data: PullJobData;
  readonly jobId: string;
  /** False when an unfinished pull of the same report and period already existed: `jobId` is that one. */
  readonly added: boolean;
}

/** Pulls per addBulk call: one round trip (on Redis, a MULTI of this many scripts) each. */
export const ENQUEUE_CHUNK = 1_000;

/** Counts of an enqueue: pulls added now, and pulls already waiting or running (waited for all the same). */
export interface EnqueueCounts {
  readonly added: number;
  readonly alreadyQueued: number;
}

export interface BackfillResult extends EnqueueCounts {
  readonly pulls: readonly EnqueuedPull[];
}

export interface StreamOptions {
  readonly chunk?: number; // Pulls per addBulk call (default ENQUEUE_CHUNK).
  /** Keep each enqueued pull (its job id and data) for a wait; default false: only counts. */
  readonly keep?: boolean;
  /** Called after each chunk is in the queue, with the counts so far. */
  readonly onChunk?: (done: EnqueueCounts) => void;
}

/** Enqueues a job per pull, holding one chunk of `pulls` (array or generator) at a time; a pull with a job
 * unfinished gets that job's id. Ids are fresh per call: a kept completed job's id would eat a re-pull. */
export async function enqueueStream(
  queue: PullQueue,
  pulls: Iterable<PlannedPull>,
  options: StreamOptions = {},
): Promise<EnqueueCounts & { readonly pulls?: readonly EnqueuedPull[] }> {
  const size = options.chunk ?? ENQUEUE_CHUNK;
  if (!Number.isInteger(size) || size < 1)
    throw new RangeError(`chunk ${size}: expected a whole number >= 1`);
  const nonce = `${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
  let [added, alreadyQueued] = [0, 0];
  let chunk: PlannedPull[] = [];
  const kept: EnqueuedPull[] = [];
  const flush = async () => {
    const done = await addChunk(queue, chunk, nonce, added + alreadyQueued);
    chunk = [];
    const fresh = done.filter((p) => p.added).length;
    added += fresh;
    alreadyQueued += done.length - fresh;
    if (options.keep === true) kept.push(...done);
    options.onChunk?.({ added, alreadyQueued });
  };
  for (const pull of pulls) {
    chunk.push(pull);
    if (chunk.length >= size) await flush();
  }
  if (chunk.length > 0) await flush();
  return options.keep === true ? { added, alreadyQueued, pulls: kept } : { added, alreadyQueued };
}

/** enqueueStream, every pull kept: for plans small enough to hold (a tick, a heal, tests). */
export async function enqueuePulls(queue: PullQueue, pulls: Iterable<PlannedPull>): Promise<EnqueuedPull[]> {
  return [...((await enqueueStream(queue, pulls, { keep: true })).pulls ?? [])];
}

async function addChunk(
  queue: PullQueue,
  chunk: readonly PlannedPull[],
  nonce: string,
  first: number,
): Promise<EnqueuedPull[]> {
  const requested = chunk.map((pull, j) => ({
    data: {
      ...pullData(pull.report, pull.period, pull.version, pull.account, pull.until),
      ...(pull.provisional === true ? { provisional: true as const } : {}),
    },
    // BullMQ forbids ':' and all-digit custom ids. Named after the account: ids of accounts never meet.
    jobId:
      pull.account === undefined || pull.account === DEFAULT_ACCOUNT
        ? `p-${nonce}-${first + j}`
        : `p-${pull.account}-${nonce}-${first + j}`,
  }));
  const jobs = await queue.addBulk(
    requested.map(({ data, jobId }) => ({
      name: PULL_JOB,
      data,
      opts: { jobId, deduplication: { id: pullDedupId(data) } },
    })),
  );
  return requested.map((r, j) => {
    const id = jobs[j]?.id ?? r.jobId;
    return { data: r.data, jobId: id, added: id === r.jobId };
  });
}

/** Enqueues the pulls of every report and period of from..to (consecutive periods in one request, see
 * inRequests), all held; the queue is first in, first out, so `order` is the order they start in. */
export async function enqueueBackfill(
  queue: PullQueue,
  reports: readonly ReportJob[],
  from: string,
  to: string,
  order: BackfillOrder = 'newest-first',
  accounts: readonly PlanAccount[] = ONLY_DEFAULT,
): Promise<BackfillResult> {
  const plan = planForAccounts(accounts, reports, (own) => planBackfill(own, from, to, order));
  return summarize(await enqueuePulls(queue, inRequests(plan, reports, accounts)));
}

export function summarize(pulls: readonly EnqueuedPull[]): BackfillResult {
  const added = pulls.filter((p) => p.added).length;
  return { pulls, added, alreadyQueued: pulls.length - added };
}

/** Progress of a wait: finished pulls (done or failed) per second since it began, and the seconds until
 * all finish at that rate (undefined before the first finishes). */
export interface PullProgress {
  readonly total: number;
  readonly done: number;
  readonly failed: number;
  readonly ratePerSecond: number;
  readonly etaSeconds: number | undefined;
}

export interface FailedPull {
  readonly pull: EnqueuedPull;
  readonly reason: string;
}

export interface WaitResult {
  readonly completed: readonly EnqueuedPull[];
  readonly failed: readonly FailedPull[];
}

/** A wait's options: job states read every `pollMs` (300), at most `batch` (500) jobs a round, rotating
 * over the pending ones; the outage ones go to throughOutage. */
export interface WaitOptions extends Partial<OutageOptions> {
  readonly onProgress?: (p: PullProgress) => void;
  readonly pollMs?: number;
  readonly batch?: number;
}

/** Waits until every pull completed or failed for good, or `signal` aborts (a job gone counts as failed). An
 * outage is waited out up to `outageMs` (2 minutes), then QueueOutageError (pulls go on in the workers). */
export async function waitForPulls(
  queue: PullQueue,
  pulls: readonly EnqueuedPull[],
  options: WaitOptions = {},
): Promise<WaitResult> {
  const started = Date.now();
  const pending = new Map<string, EnqueuedPull[]>();
  for (const p of pulls) pending.set(p.jobId, [...(pending.get(p.jobId) ?? []), p]);
  const completed: EnqueuedPull[] = [];
  const failed: FailedPull[] = [];
  const report = () => {
    const finished = completed.length + failed.length;
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? finished / seconds : 0;
    options.onProgress?.({
      total: pulls.length,
      done: completed.length,
      failed: failed.length,
      ratePerSecond: rate,
      etaSeconds: rate > 0 ? (pulls.length - finished) / rate : undefined,
    });
  };
  report();
  let offset = 0;
  const batch = options.batch ?? 500;
  const outage = { ...options, outageMs: options.outageMs ?? WAIT_OUTAGE_MS };
  while (pending.size > 0 && options.signal?.aborted !== true) {
    // A bounded, rotating slice per round: a huge backfill must not cost a state lookup per job per poll.
    const all = [...pending.keys()];
    offset = offset % all.length;
    const ids = all.length <= batch ? all : [...all, ...all].slice(offset, offset + batch);
    offset += batch;
    // Read whole before anything is counted: a round cut short by an outage is simply read again.
    const round = await throughOutage(() => readRound(queue, ids), outage);
    if (round === undefined) break;
    for (const [id, outcome] of round) {
      const group = pending.get(id) ?? [];
      pending.delete(id);
      if (outcome.state === 'completed') completed.push(...group);
      else for (const pull of group) failed.push({ pull, reason: outcome.reason });
    }
    report();
    if (pending.size > 0) await pause(options.pollMs ?? 300, options.signal);
  }
  return { completed, failed };
}

type Outcome = { readonly state: 'completed' } | { readonly state: 'failed'; readonly reason: string };

/** The finished jobs among `ids`, with the reason of each failed one. */
async function readRound(queue: PullQueue, ids: readonly string[]): Promise<Map<string, Outcome>> {
  const states = await Promise.all(ids.map((id) => queue.getJobState(id)));
  const out = new Map<string, Outcome>();
  const gone =
    'the job disappeared from the queue (flushed or removed): run `adops heal` to pull what is missing';
  await Promise.all(
    ids.map(async (id, i) => {
      const state = states[i];
      if (state === 'completed') out.set(id, { state });
      else if (state === 'failed')
        out.set(id, { state, reason: (await queue.getJob(id))?.failedReason ?? 'failed' });
      else if (state === 'unknown') out.set(id, { state: 'failed', reason: gone });
    }),
  );
  return out;
}

/** The pulls that heal each account's last `days` days: every period never loaded, or whose last attempt
 * failed, consecutive ones in one request. */
export async function readHealPlan(
  wh: Warehouse,
  reports: readonly ReportJob[],
  days: number,
  now: Date = new Date(),
  accounts: readonly PlanAccount[] = ONLY_DEFAULT,
): Promise<PlannedPull[]> {
  const out: PlannedPull[] = [];
  for (const account of accounts)
    for (const report of reports) {
      if (!runsReport(account, report.name)) continue;
      const window = fromStart(healWindowOf(report, now, days), startOf(report, account));
      const first = window[0];
      const last = window.at(-1);
      if (first === undefined || last === undefined) continue;
      const states = await loadStates(wh, report, first.start, last.end, account.name);
      out.push(...planHeal(report, window, states).map((p) => ({ ...p, account: account.name })));
    }
  return [...inRequests(out, reports, accounts)];
}
