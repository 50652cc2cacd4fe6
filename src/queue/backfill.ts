// Backfills: enqueue the plan (src/plan/backfill.ts) and wait for its pulls to finish.
import type { ReportJob } from '../config/jobs.js';
import { enqueueChunks, enqueuePulls, type EnqueuedPull, type EnqueueOptions } from './enqueue.js';
import { planBackfill, type BackfillOrder } from '../plan/pulls.js';
import { ONLY_DEFAULT, planForAccounts, type PlanAccount, type PlannedPull } from '../plan/pulls.js';
import type { PullQueue } from './queues.js';
import { pause, throughOutage, WAIT_OUTAGE_MS, type OutageState } from './connection.js';

/** Counts of an enqueue. */
export interface EnqueueCounts {
  /** Pulls added now. */
  readonly added: number;
  /** Pulls that were already waiting or running: not added twice, waited for all the same. */
  readonly alreadyQueued: number;
}

export interface BackfillResult extends EnqueueCounts {
  readonly pulls: readonly EnqueuedPull[];
}

/**
 * Enqueues one pull per report and period of from..to, newest period first unless told otherwise.
 * The pull queue is first in, first out and every worker takes from its head, so the order of
 * adding is the order the pulls start in, however many workers run. Periods loaded before are
 * pulled again; a pull already waiting or running for the same report and period is not added
 * twice (it keeps its place). Holds every pull: for a backfill of any size, see enqueueStream.
 */
export async function enqueueBackfill(
  queue: PullQueue,
  reports: readonly ReportJob[],
  from: string,
  to: string,
  order: BackfillOrder = 'newest-first',
  accounts: readonly PlanAccount[] = ONLY_DEFAULT,
): Promise<BackfillResult> {
  const plan = planForAccounts(accounts, reports, (own) => planBackfill(own, from, to, order));
  return summarize(await enqueuePulls(queue, plan));
}

export interface StreamOptions extends EnqueueOptions {
  /** Keep each enqueued pull (its job id and data) for a wait; default false: only counts. */
  readonly keep?: boolean;
  /** Called after each chunk is in Redis, with the counts so far. */
  readonly onChunk?: (done: EnqueueCounts) => void;
}

/**
 * Enqueues `pulls` (a generator, typically backfillPulls) chunk by chunk, holding one chunk at a
 * time, and reports progress after each. The pulls themselves are kept only with `keep` (to wait
 * for them: a job id and a few dates each, not the jobs).
 */
export async function enqueueStream(
  queue: PullQueue,
  pulls: Iterable<PlannedPull>,
  options: StreamOptions = {},
): Promise<EnqueueCounts & { readonly pulls?: readonly EnqueuedPull[] }> {
  let added = 0;
  let alreadyQueued = 0;
  const kept: EnqueuedPull[] = [];
  for await (const chunk of enqueueChunks(queue, pulls, options)) {
    const fresh = chunk.filter((p) => p.added).length;
    added += fresh;
    alreadyQueued += chunk.length - fresh;
    if (options.keep === true) kept.push(...chunk);
    options.onChunk?.({ added, alreadyQueued });
  }
  return options.keep === true ? { added, alreadyQueued, pulls: kept } : { added, alreadyQueued };
}

/** The counts of enqueued pulls, with the pulls. */
export function summarize(pulls: readonly EnqueuedPull[]): BackfillResult {
  const added = pulls.filter((p) => p.added).length;
  return { pulls, added, alreadyQueued: pulls.length - added };
}

/** Progress of a wait, for a progress bar. */
export interface PullProgress {
  readonly total: number;
  readonly done: number;
  readonly failed: number;
  /** Finished pulls (done or failed) per second since the wait began. */
  readonly ratePerSecond: number;
  /** Seconds until all finish at that rate; undefined before the first finishes. */
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

export interface WaitOptions {
  readonly onProgress?: (p: PullProgress) => void;
  /** How often job states are read (default 300 ms). */
  readonly pollMs?: number;
  /** Jobs whose state is read per round at most (default 500), rotating over the pending ones. */
  readonly batch?: number;
  /** Stops waiting (resolving with what finished so far) when aborted. */
  readonly signal?: AbortSignal;
  /**
   * How long Redis may be unreachable or switching before the wait gives up with a
   * RedisOutageError (default 2 minutes); meanwhile the wait retries and keeps its progress.
   */
  readonly outageMs?: number;
  /** Told while Redis is away and when it answers again (see throughOutage). */
  readonly onOutage?: (state: OutageState) => void;
}

/**
 * Waits until every pull has completed or failed for good (retries exhausted or unrecoverable).
 * A job that vanished from Redis (flushed, or removed) counts as failed with a reason saying to
 * run `adops heal`, since the warehouse, not Redis, is the record of what was loaded. Redis going
 * away for a while (a restart, a failover) is waited out up to `outageMs`; past it, a
 * RedisOutageError (the pulls themselves go on in the workers).
 */
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
  const outage = {
    outageMs: options.outageMs ?? WAIT_OUTAGE_MS,
    ...(options.onOutage === undefined ? {} : { onOutage: options.onOutage }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  };
  while (pending.size > 0 && options.signal?.aborted !== true) {
    // A bounded, rotating slice per round: waiting on a huge backfill must not load Redis with a
    // state lookup per job every few hundred milliseconds.
    const all = [...pending.keys()];
    offset = offset % all.length;
    const ids = all.length <= batch ? all : [...all, ...all].slice(offset, offset + batch);
    offset += batch;
    // The whole round is read before anything is counted, so a round cut short by Redis going
    // away is simply read again.
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
  await Promise.all(
    ids.map(async (id, i) => {
      const state = states[i];
      if (state === 'completed') out.set(id, { state });
      else if (state === 'failed')
        out.set(id, { state, reason: (await queue.getJob(id))?.failedReason ?? 'failed' });
      else if (state === 'unknown')
        out.set(id, {
          state: 'failed',
          reason:
            'the job disappeared from Redis (flushed or removed): run `adops heal` to pull what is missing',
        });
    }),
  );
  return out;
}
