// report.late and report.fresh: each evaluation compares every report's freshness with the last
// state seen, kept in Redis under the queue prefix, and yields only the transitions. The state is
// swapped with one atomic SET ... GET, so of several workers evaluating at once only the first to
// see a transition yields it.
import type { Cluster, Redis } from 'ioredis';
import type { Pool } from 'pg';
import type { JobSet } from '../config/jobs.js';
import type { ReportFreshEvent, ReportLateEvent } from '../webhooks/events.js';
import type { PlanAccount } from '../plan/pulls.js';
import { collectStatus, type ReportStatus } from './status.js';

/** The freshness state of a report as Redis keeps it. */
export type FreshnessState = 'late' | 'fresh';

export interface FreshnessWatch {
  readonly pool: Pool;
  readonly schema: string;
  readonly redis: Redis | Cluster;
  /** The BullMQ prefix: the states live beside the deployment's queues. */
  readonly prefix: string;
  /** Days of status read; the newest loaded period is looked for in them. */
  readonly days: number;
  /** The accounts watched (default: the one account `default`). */
  readonly accounts?: readonly PlanAccount[];
}

/** The Redis key of a report's last seen freshness state (of an account other than `default`: with it). */
export function freshnessStateKey(prefix: string, report: string, account = 'default'): string {
  return account === 'default'
    ? `${prefix}:webhooks:freshness:${report}`
    : `${prefix}:webhooks:freshness:${account}:${report}`;
}

/**
 * The event a report's move from `previous` (undefined: never seen) to `now` calls for, if any. A
 * report first seen late is announced; one first seen fresh is not (nothing changed for anyone).
 */
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
): Promise<Array<ReportLateEvent | ReportFreshEvent>> {
  const status = await collectStatus(
    watch.pool,
    watch.schema,
    jobs,
    undefined,
    watch.days,
    now,
    watch.accounts,
  );
  const events: Array<ReportLateEvent | ReportFreshEvent> = [];
  for (const r of status.reports) {
    const state: FreshnessState = r.freshness.late ? 'late' : 'fresh';
    const previous = await watch.redis.set(
      freshnessStateKey(watch.prefix, r.report, r.account),
      state,
      'GET',
    );
    const moved = transition(previous, state);
    if (moved !== undefined) events.push(freshnessEvent(r, moved));
  }
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
