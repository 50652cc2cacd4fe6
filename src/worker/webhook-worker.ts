// The worker of WEBHOOK_QUEUE: delivers each event, retried while the receiver fails; and evaluates report
// freshness, telling transitions from the state kept in the warehouse (swapped atomically: one teller).
import { UnrecoverableError, type Job } from 'bullmq';
import { Agent } from 'undici';
import type { WebhookConfig } from '../platform/config/env.js';
import type { JobSet } from '../platform/config/jobs.js';
import { disagreementEvents } from '../status/agreement.js';
import { postWebhook } from '../webhooks/delivery.js';
import type { BackoffPolicy } from '../platform/retry/classify.js';
import { TransientError } from '../platform/retry/errors.js';
import { FRESHNESS_JOB, FRESHNESS_SCHEDULER, WEBHOOK_QUEUE } from '../platform/queue/jobs.js';
import { WEBHOOK_ATTEMPTS } from '../platform/queue/queues.js';
import type { AnyWorker } from '../platform/queue/backend.js';
import { behindEvents, enqueueWebhook, swapFreshnessState } from '../webhooks/events.js';
import {
  DELIVER_JOB,
  type WebhookDelivery,
  type ReportFreshEvent,
  type ReportDisagreesEvent,
  type ReportLateEvent,
} from '../platform/queue/jobs.js';
import { pullBackoff } from './pull-worker.js';
import type { WorkerRuntime } from './runtime.js';
import type { PlanAccount } from '../plan/pulls.js';
import { collectStatus, type ReportStatus } from '../status/status.js';
import type { Warehouse } from '../platform/pg/handle.js';

export const FRESHNESS_EVERY_MS = 5 * 60_000;

export interface WebhookWorkerOptions {
  readonly webhook: WebhookConfig;
  readonly definitions: () => JobSet;
  readonly backoff: BackoffPolicy;
  readonly freshnessEveryMs: number;
  readonly timeoutMs?: number; // Limit of one delivery attempt (default WEBHOOK_TIMEOUT_MS).
}

export interface WebhookWorker {
  readonly worker: AnyWorker;
  closeAgent(): Promise<void>;
}

/** Upserts the freshness evaluation's scheduler (so ADOPS_WEBHOOK_URL needs no `adops schedule`) and starts the worker. */
export async function startWebhookWorker(rt: WorkerRuntime, o: WebhookWorkerOptions): Promise<WebhookWorker> {
  await rt.queues.webhooks.upsertJobScheduler(
    FRESHNESS_SCHEDULER,
    { every: o.freshnessEveryMs },
    // A missed evaluation is made up by the next one: never retried.
    { name: FRESHNESS_JOB, data: {} as never, opts: { attempts: 1 } },
  );
  const agent = new Agent({ connections: 4 });
  const worker = rt.backend.worker(WEBHOOK_QUEUE, webhookProcessor(rt, o, agent), {
    ...rt.bull,
    concurrency: 4,
    settings: { backoffStrategy: pullBackoff(o.backoff) },
  });
  return { worker, closeAgent: () => agent.close() };
}

/** The processor of WEBHOOK_QUEUE: a delivery or a freshness evaluation. */
function webhookProcessor(
  rt: Pick<WorkerRuntime, 'config' | 'logger' | 'wh' | 'queues'>,
  o: WebhookWorkerOptions,
  dispatcher: Agent,
) {
  return async (job: Job<WebhookDelivery, unknown, string>) => {
    if (job.name === FRESHNESS_JOB) return evaluateFreshness(rt, o);
    if (job.name !== DELIVER_JOB || !isDelivery(job.data))
      throw new UnrecoverableError(`webhook job ${job.id} is not a delivery: ${JSON.stringify(job.data)}`);
    const delivery = job.data;
    const log = rt.logger.child({ jobId: job.id, event: delivery.type, delivery: delivery.id });
    const outcome = await postWebhook(
      {
        url: o.webhook.url,
        secret: o.webhook.secret,
        dispatcher,
        ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }),
      },
      delivery,
    );
    const attempt = job.attemptsMade + 1;
    if (outcome.ok) {
      log.info({ status: outcome.status, attempt }, 'webhook delivered');
      return { status: outcome.status, attempt };
    }
    if (!outcome.retry) {
      log.error({ reason: outcome.reason, attempt }, 'webhook refused the event; not retried');
      throw new UnrecoverableError(outcome.reason);
    }
    const attempts = job.opts.attempts ?? WEBHOOK_ATTEMPTS;
    if (attempt >= attempts)
      log.error({ reason: outcome.reason, attempt }, 'webhook delivery failed for good');
    else log.warn({ reason: outcome.reason, attempt }, 'webhook delivery failed; it will be retried');
    // A receiver asking for decades would hold the event as long: its Retry-After is capped too.
    const retryAfterMs =
      outcome.retryAfterMs === undefined
        ? undefined
        : Math.min(outcome.retryAfterMs, rt.config.http.retryAfterCapMs);
    // The backoff strategy reads the receiver's Retry-After off the error.
    throw new TransientError(outcome.reason, retryAfterMs === undefined ? {} : { retryAfterMs });
  };
}

/** Records each report's freshness and queues the transitions this evaluation saw first. */
async function evaluateFreshness(
  rt: Pick<WorkerRuntime, 'config' | 'logger' | 'wh' | 'queues'>,
  o: WebhookWorkerOptions,
): Promise<{ events: number }> {
  const events = await freshnessTransitions(
    { wh: rt.wh, days: rt.config.healDays, accounts: rt.config.accounts },
    o.definitions(),
  );
  for (const event of events) {
    rt.logger.info({ report: event.report, event: event.type }, 'report freshness changed');
    await enqueueWebhook(rt.queues.webhooks, event, rt.logger);
  }
  // Pacing rides on the same evaluation; a warehouse not yet migrated to it keeps its freshness events.
  const behind = await behindEvents(rt.wh).catch((error: unknown) => {
    rt.logger.warn({ err: error }, 'could not read bi_campaign_pacing: run adops migrate');
    return [];
  });
  for (const event of behind) await enqueueWebhook(rt.queues.webhooks, event, rt.logger);
  return { events: events.length + behind.length };
}

/** Narrows job data from Redis to a delivery: an id and a type at least. */
function isDelivery(d: unknown): d is WebhookDelivery {
  if (typeof d !== 'object' || d === null || !('id' in d) || !('type' in d)) return false;
  return typeof d.id === 'string' && typeof d.type === 'string';
}

export type FreshnessState = 'late' | 'fresh';

export interface FreshnessWatch {
  readonly wh: Warehouse;
  readonly days: number; // Days of status read; the newest loaded period is looked for in them.
  readonly accounts?: readonly PlanAccount[]; // The accounts watched (default: the one account `default`).
}

/** The event a move from `previous` (null: never seen) to `now` calls for; first seen fresh is none. */
export function transition(previous: string | null, now: FreshnessState): FreshnessState | undefined {
  if (previous === now) return undefined;
  if (previous === null && now === 'fresh') return undefined;
  return now;
}

/** Reads every report's freshness, records it, and returns the transitions this call saw first. */
export async function freshnessTransitions(
  watch: FreshnessWatch,
  jobs: JobSet,
  now: Date = new Date(),
): Promise<Array<ReportLateEvent | ReportFreshEvent | ReportDisagreesEvent>> {
  const status = await collectStatus(watch.wh, jobs, undefined, watch.days, now, watch.accounts);
  const events: Array<ReportLateEvent | ReportFreshEvent | ReportDisagreesEvent> = [];
  for (const r of status.reports) {
    const state: FreshnessState = r.freshness.late ? 'late' : 'fresh';
    const previous = await swapFreshnessState(watch.wh, r.account, r.report, state);
    const moved = transition(previous, state);
    if (moved !== undefined) events.push(freshnessEvent(r, moved));
  }
  events.push(...(await disagreementEvents(watch.wh, status.disagreements ?? [])));
  return events;
}

function freshnessEvent(r: ReportStatus, state: FreshnessState): ReportLateEvent | ReportFreshEvent {
  return {
    type: state === 'late' ? 'report.late' : 'report.fresh',
    ...(r.account === 'default' ? {} : { account: r.account }),
    report: r.report,
    last_loaded: r.lastLoaded,
    age_hours: r.freshness.ageHours,
    freshness_hours: r.freshness.limitHours,
  };
}
