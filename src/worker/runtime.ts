// What every BullMQ worker of one process shares (queue store, queues, request limiter, activity
// clock, shutdown signal), the order of a stop, and the account guard.
import type { WorkerOptions } from 'bullmq';
import type { Pool } from 'pg';
import { limiterKey, type LimiterOptions, type RequestLimiter } from '../limits/limiter.js';
import { createRequestLimiter } from '../limits/redis.js';
import type { Config } from '../platform/config/env.js';
import type { Logger } from '../platform/log/logger.js';
import { warehouseOf, type Warehouse } from '../platform/pg/handle.js';
import type { RedisClient } from '../platform/queue/connection.js';
import { createPgRequestLimiter } from '../limits/postgres.js';
import {
  openQueueBackend,
  WORKER_REDIS_WAIT_MS,
  type AnyWorker,
  type QueueBackend,
} from '../platform/queue/backend.js';
import { describeRedisTarget, redisVariablesOf } from '../platform/config/connections.js';
import { openQueues, type Queues } from '../platform/queue/queues.js';

/** Stall detection: a SIGKILLed worker's job is taken up again after about lockDurationMs. */
export interface StallOptions {
  readonly lockDurationMs?: number;
  readonly stalledIntervalMs?: number;
  readonly maxStalledCount?: number;
}

type BullOption = 'lockDuration' | 'stalledInterval' | 'maxStalledCount' | 'runRetryDelay';

export interface WorkerRuntime {
  readonly config: Config;
  readonly logger: Logger;
  readonly pool: Pool;
  readonly wh: Warehouse;
  readonly backend: QueueBackend; // Where the queues live; its Redis connection, on Redis.
  readonly queues: Queues;
  readonly limiter: RequestLimiter;
  /** A request limiter shared by every process, on the queue's store: Redis, or the warehouse. */
  openLimiter(key: string, perSecond: number, options: LimiterOptions): RequestLimiter;
  /** Aborted when a shutdown's deadline passes: running requests end and their pulls go back to the queue. */
  readonly shutdown: AbortController;
  /** Marks a sign of life (a job started or ended, a queue drained) for the health check's idleMs(). */
  touch(): void;
  idleMs(): number;
  /** The options every BullMQ Worker of this process takes. */
  readonly bull: Required<Pick<WorkerOptions, BullOption>>;
  /** Closes the queues, the limiter and (when this runtime opened it) the queue store's connection. */
  close(): Promise<void>;
}

/** Opens the shared parts; `connection` is the caller's to close when given. */
export async function openRuntime(o: {
  config: Config;
  logger: Logger;
  pool: Pool;
  connection?: RedisClient | undefined;
  stall?: StallOptions | undefined;
  /** Told each failed attempt to connect to Redis while the runtime waits for it (it is logged too). */
  onConnectError?: ((error: Error) => void) | undefined;
}): Promise<WorkerRuntime> {
  const { config, logger } = o;
  const logAttempt = connectionLogger(logger, config.redis);
  const backend = await openQueueBackend(config, 'worker', o.connection, (error) => {
    logAttempt(error);
    o.onConnectError?.(error);
  });
  let queues: Queues;
  try {
    queues = await openQueues(config, backend);
  } catch (error) {
    // A connection left open would keep reconnecting, and the process alive, after the failure.
    await backend.close();
    throw error;
  }
  const shutdown = new AbortController();
  const wh = warehouseOf(o.pool, config.schema, { copyFormat: config.copyFormat, logger });
  const openLimiter = (key: string, perSecond: number, options: LimiterOptions) =>
    backend.redis === undefined
      ? createPgRequestLimiter(wh, key, perSecond, options)
      : createRequestLimiter(backend.redis, key, perSecond, options);
  const limiter = openLimiter(limiterKey(config.queue.prefix), config.queue.rateLimitPerSecond, {
    onError: (error) => logger.warn({ err: error }, 'shared rate limit unavailable; request sent anyway'),
    // A 429 met by any process pauses this one at once, not at its next refill.
    subscribe: true,
    onPause: pauseLogger(logger),
    maxPauseMs: config.http.retryAfterCapMs,
    stop: shutdown.signal,
  });
  let lastActivity = Date.now();
  return {
    config,
    logger,
    pool: o.pool,
    wh,
    backend,
    queues,
    limiter,
    openLimiter,
    shutdown,
    touch: () => {
      lastActivity = Date.now();
    },
    idleMs: () => Date.now() - lastActivity,
    bull: {
      lockDuration: o.stall?.lockDurationMs ?? 30_000,
      stalledInterval: o.stall?.stalledIntervalMs ?? 30_000,
      // A job killed with its worker is retried this many times before it is failed for good.
      maxStalledCount: o.stall?.maxStalledCount ?? 3,
      runRetryDelay: 1_000, // after a failed fetch or finish; BullMQ's 15 s held a worker and its close
    },
    close: async () => {
      await within(queues.close(), 5_000);
      await limiter.close();
      await backend.close();
    },
  };
}

const CONNECT_LOG_EVERY_MS = 5_000;

/** Logs failed connection attempts to the queue's Redis while a worker waits: the first at once, then one per 5 s. */
function connectionLogger(logger: Logger, target: Config['redis']): (error: Error) => void {
  const where = describeRedisTarget(target);
  const started = Date.now();
  let attempts = 0;
  let logged = -Infinity;
  return (error) => {
    attempts++;
    if (Date.now() - logged < CONNECT_LOG_EVERY_MS) return;
    logged = Date.now();
    const waited = Math.round((logged - started) / 1000);
    logger.warn(
      { attempts, waitedSeconds: waited },
      `Redis at ${where} is not reachable (${error.message}): connecting again, for up to ` +
        `${WORKER_REDIS_WAIT_MS / 1000} s in all before the worker gives up; check ` +
        `${redisVariablesOf(target)} and that Redis is running`,
    );
  };
}

/** Logs once each API pause this process obeys, its own or another's (heard again: ends within 1 s of it). */
export function pauseLogger(logger: Logger, account?: string): (ms: number) => void {
  let loggedUntil = 0;
  return (ms) => {
    const until = Date.now() + ms;
    if (until <= loggedUntil + 1_000) return;
    loggedUntil = until;
    logger.warn(
      { ...(account === undefined ? {} : { account }), pauseMs: Math.round(ms), until: new Date(until) },
      'API requests paused after a 429 (Retry-After) or a spent rate-limit budget, shared by every worker of this deployment: holding them until it ends',
    );
  };
}

/** Resolves `true` when `p` settles within `ms`, `false` otherwise (never rejects). */
export function within(
  p: Promise<unknown>,
  ms: number,
  early?: (giveUp: () => void) => void,
): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (settled: boolean) => {
      clearTimeout(timer);
      resolve(settled);
    };
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    early?.(() => done(false));
    p.then(
      () => done(true),
      () => done(true),
    );
  });
}

/** Stops `workers`: graceful until `timeoutMs` or `onGiveUp`, `abort()` + 5 s, forced; true if graceful. */
export async function stopWorkers(
  workers: readonly AnyWorker[],
  timeoutMs: number,
  abort: () => void,
  logger: Logger,
  onGiveUp?: (giveUp: () => void) => void,
): Promise<boolean> {
  const graceful = Promise.all(workers.map((w) => w.close()));
  const finished = await within(graceful, timeoutMs, onGiveUp);
  if (finished) return true;
  logger.warn('shutdown deadline: aborting running API requests; their pulls go back to the queue');
  abort();
  if (await within(graceful, 5_000)) return false;
  logger.warn('running jobs still busy: abandoning them to the stall check of other workers');
  await within(Promise.allSettled(workers.map((w) => w.close(true))), 5_000);
  return false;
}

// The account guard: a pull of an account paused (429), down (no answer, 5xx, 401/403) or holding its share
// of slots goes back as delayed, freeing the slot. Per process; the 429 pause is also shared via the limiter.
// An account is held as down 1 s after a failure, doubling to 60 s; a pull of a busy account waits 250 ms.
const [FIRST_DOWN_MS, MAX_DOWN_MS, BUSY_DELAY_MS] = [1_000, 60_000, 250];

export type AccountGuard = ReturnType<typeof createAccountGuard>;

/** Accounts sharing `concurrency` slots: with several, one takes at most concurrency - 1, freeing a slot. */
export function createAccountGuard(accounts: number, concurrency: number, now: () => number = Date.now) {
  const states = new Map<string, { running: number; heldUntil: number; failures: number }>();
  const state = (a: string) => {
    let s = states.get(a);
    if (s === undefined) states.set(a, (s = { running: 0, heldUntil: 0, failures: 0 }));
    return s;
  };
  const share = Math.max(1, concurrency - 1);
  const guarded = accounts > 1;
  return {
    /** Milliseconds a pull of `account` should wait before it starts; 0: start now (and count it). */
    enter(account: string): number {
      const s = state(account);
      if (guarded) {
        const held = s.heldUntil - now();
        if (held > 0) return held;
        if (s.running >= share) return BUSY_DELAY_MS + Math.floor(Math.random() * BUSY_DELAY_MS);
      }
      s.running++;
      return 0;
    },
    leave(account: string): void {
      const s = state(account);
      s.running = Math.max(0, s.running - 1);
    },
    succeeded(account: string): void {
      state(account).failures = 0;
    },
    /** A failure its other pulls would share (no answer, 5xx, 401/403): holds them; new hold's ms or 0. */
    failed(account: string): number {
      const s = state(account);
      s.failures++;
      const ms = Math.min(MAX_DOWN_MS, FIRST_DOWN_MS * 2 ** (s.failures - 1));
      if (now() + ms <= s.heldUntil) return 0;
      s.heldUntil = now() + ms;
      return ms;
    },
    /** The account answered 429: hold its pulls for `ms`. */
    paused(account: string, ms: number): void {
      const s = state(account);
      s.heldUntil = Math.max(s.heldUntil, now() + ms);
    },
  };
}

/** True when the account itself is in trouble (no answer, 5xx, 401/403): its other pulls would fail too. */
export function isAccountTrouble(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  if ('status' in error && typeof error.status === 'number')
    return error.status >= 500 || error.status === 401 || error.status === 403;
  return 'name' in error && error.name === 'ApiTransportError';
}
