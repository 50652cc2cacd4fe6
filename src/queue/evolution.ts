// Enqueues the pulls a building table version still lacks (report evolution), newest first, so
// the new shape covers recent days first. Pulls already waiting are not enqueued twice.
import type { Coverage } from '../warehouse/schema/evolution.js';
import { enqueuePulls, type EnqueuedPull } from './enqueue.js';
import type { PullQueue } from './queues.js';

/** Enqueues every missing period of each coverage, newest first. */
export async function enqueueEvolution(
  queue: PullQueue,
  coverages: readonly Coverage[],
): Promise<EnqueuedPull[]> {
  const pulls = coverages.flatMap((c) =>
    c.missing.map((period) => ({ report: c.report, period, version: c.building.version })),
  );
  pulls.sort((a, b) => (a.period.start < b.period.start ? 1 : a.period.start > b.period.start ? -1 : 0));
  return enqueuePulls(queue, pulls);
}
