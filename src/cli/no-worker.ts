// Whether anyone takes the pulls a command waits for: a wait with no worker would show `0/1 ETA ?` forever,
// so after a while with no worker seen and no pull finished it says so, and how to start one.
import { describeRedisTarget } from '../platform/config/connections.js';
import type { Queues } from '../platform/queue/queues.js';
import type { CliContext } from './context.js';

/** How long a wait goes with no worker seen and no pull finished before it says so. */
export const NO_WORKER_GRACE_MS = 5_000;
/** How often the workers are counted (one CLIENT LIST, or one pg_stat_activity read). */
const COUNT_EVERY_MS = 1_000;

/** What the watch says: `away` with its line while no worker is seen, `back` once one is. */
export type WorkerNote =
  | { readonly state: 'away'; readonly seconds: number; readonly line: string; readonly short: string }
  | { readonly state: 'back'; readonly line: string };

/** Counts the pull queue's workers each second; `note` hears of none for NO_WORKER_GRACE_MS, then of one. */
export function watchWorkers(ctx: CliContext, queues: Queues, note: (n: WorkerNote) => void) {
  const started = Date.now();
  let [lastSeen, lastProgress] = [started, started];
  let away = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const { line, short } = wording(ctx);
  const check = async () => {
    const count = await queues.backend.workersOn(queues.pulls).catch(() => undefined);
    if (stopped || count === undefined) return;
    const now = Date.now();
    if (count > 0) {
      lastSeen = now;
      if (away) note({ state: 'back', line: 'a worker is taking pulls now: still waiting' });
      away = false;
      return;
    }
    const quiet = now - Math.max(lastSeen, lastProgress);
    if (quiet < NO_WORKER_GRACE_MS) return;
    const seconds = Math.round((now - lastSeen) / 1000);
    note({ state: 'away', seconds, line: line(seconds), short: short(seconds) });
    away = true;
  };
  const loop = () => {
    timer = setTimeout(() => void check().finally(() => stopped || loop()), COUNT_EVERY_MS);
  };
  loop();
  return {
    /** A pull finished: someone is working, whatever the count says (a worker of an older release). */
    progressed: () => {
      lastProgress = Date.now();
      if (away) note({ state: 'back', line: 'a worker is taking pulls now: still waiting' });
      away = false;
    },
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** The line and the bar's note, naming the queue's store and the settings a worker must share. */
function wording(ctx: CliContext) {
  const { queue, redis } = ctx.config();
  const [where, same] =
    queue.backend === 'postgres'
      ? [
          `the queue's Postgres (schema ${queue.schema})`,
          'the same DATABASE_URL, ADOPS_SCHEMA, ADOPS_QUEUE=postgres and ADOPS_QUEUE_PREFIX',
        ]
      : [
          `Redis at ${describeRedisTarget(redis)}, prefix ${queue.prefix}`,
          'the same REDIS_URL and ADOPS_QUEUE_PREFIX',
        ];
  return {
    line: (s: number) =>
      `no worker seen on the pull queue (${where}) for ${s} s: ` +
      `start one with \`adops worker\` (${same}); still waiting`,
    short: (s: number) => ` | no worker for ${s} s: start one with \`adops worker\``,
  };
}
