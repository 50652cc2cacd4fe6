// Job counts of the queues, read without BullMQ: `adops status` needs six numbers per queue, and
// loading BullMQ (some 200 modules) cost more than the whole rest of the command.
import type { Cluster, Redis } from 'ioredis';
import { ENTITY_QUEUE, REPORT_QUEUE, TICK_QUEUE } from './names.js';

/** The job states status shows, as BullMQ's getJobCounts names them. */
export const COUNTED_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized'] as const;
export type CountedState = (typeof COUNTED_STATES)[number];

/** Counts by queue name, then by state. */
export type JobCountsByQueue = Record<string, Record<string, number>>;

/** The queues whose counts status shows, in its order. */
export const COUNTED_QUEUES = [REPORT_QUEUE, TICK_QUEUE, ENTITY_QUEUE] as const;

/** Anything with BullMQ's Queue.getJobCounts (a Queue, or a test's stand-in). */
interface CountingQueue {
  getJobCounts(...states: CountedState[]): Promise<Record<string, number>>;
}

/** Job counts of the three queues by queue name, through BullMQ Queue objects already open. */
export async function jobCounts(
  queues: { readonly pulls: CountingQueue; readonly ticks: CountingQueue; readonly syncs: CountingQueue },
  ...states: CountedState[]
): Promise<JobCountsByQueue> {
  const [pulls, ticks, syncs] = await Promise.all([
    queues.pulls.getJobCounts(...states),
    queues.ticks.getJobCounts(...states),
    queues.syncs.getJobCounts(...states),
  ]);
  return { [REPORT_QUEUE]: pulls, [TICK_QUEUE]: ticks, [ENTITY_QUEUE]: syncs };
}

/**
 * The same counts as `jobCounts(queues, ...COUNTED_STATES)`, in one pipelined round trip of plain
 * read commands on BullMQ's keys (`<prefix>:<queue>:<state>`): LLEN of the wait and active lists,
 * ZCARD of the delayed, failed, completed and prioritized sets. BullMQ's own getCounts script does
 * the same (it also drops the wait-list markers of BullMQ 4, which these queues never had).
 */
export async function readJobCounts(redis: Redis | Cluster, prefix: string): Promise<JobCountsByQueue> {
  const pipeline = redis.pipeline();
  for (const queue of COUNTED_QUEUES) {
    const key = (state: string) => `${prefix}:${queue}:${state}`;
    for (const state of COUNTED_STATES) {
      if (state === 'waiting') pipeline.llen(key('wait'));
      else if (state === 'active') pipeline.llen(key('active'));
      else pipeline.zcard(key(state));
    }
  }
  const replies = (await pipeline.exec()) ?? [];
  const out: JobCountsByQueue = {};
  let i = 0;
  for (const queue of COUNTED_QUEUES) {
    const counts: Record<string, number> = {};
    for (const state of COUNTED_STATES) {
      const [error, value] = replies[i++] ?? [new Error('no reply'), null];
      if (error !== null) throw error;
      counts[state] = Number(value);
    }
    out[queue] = counts;
  }
  return out;
}
