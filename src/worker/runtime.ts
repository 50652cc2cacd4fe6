// What every BullMQ worker of one process shares: the Redis connection, the queues, the shared
// request limiter, the clock of activity the health check reads, and the shutdown signal.
import type { Pool } from 'pg';
import { createRequestLimiter, limiterKey, type RequestLimiter } from '../api/shared-limit.js';
import type { Config } from '../config/env.js';
import type { Logger } from '../log/logger.js';
import { closeConnection, workerConnection, type RedisClient } from '../queue/connection.js';
import { openQueues, type Queues } from '../queue/queues.js';
import { within } from './shutdown.js';

/** Stall detection: a SIGKILLed worker's job is taken up again after about lockDurationMs. */
export interface StallOptions {
  readonly lockDurationMs?: number;
  readonly stalledIntervalMs?: number;
  readonly maxStalledCount?: number;
}

export interface WorkerRuntime {
  readonly config: Config;
  readonly logger: Logger;
  readonly pool: Pool;
  readonly redis: RedisClient;
  readonly queues: Queues;
  readonly limiter: RequestLimiter;
  /**
   * Aborted when a shutdown's deadline passes: running requests end at once and their pulls go
   * back to the queue for another worker, instead of holding the process until their timeouts.
   */
  readonly shutdown: AbortController;
  /** Marks a sign of life (a job started or ended, a queue drained) for the health check. */
  touch(): void;
  /** Milliseconds since the last sign of life. */
  idleMs(): number;
  /** The options every BullMQ Worker of this process takes. */
  readonly bull: {
    readonly connection: RedisClient;
    readonly prefix: string;
    readonly lockDuration: number;
    readonly stalledInterval: number;
    readonly maxStalledCount: number;
  };
  /** Closes the queues, the limiter and (when this runtime opened it) the Redis connection. */
  close(): Promise<void>;
}

/** Opens the shared parts; `connection` is the caller's to close when given. */
export async function openRuntime(o: {
  config: Config;
  logger: Logger;
  pool: Pool;
  connection?: RedisClient | undefined;
  stall?: StallOptions | undefined;
}): Promise<WorkerRuntime> {
  const { config, logger } = o;
  const redis = o.connection ?? workerConnection(config);
  let queues: Queues;
  try {
    queues = await openQueues(config, redis);
  } catch (error) {
    // A connection left open would keep reconnecting, and the process alive, after the failure.
    if (o.connection === undefined) redis.disconnect();
    throw error;
  }
  const shutdown = new AbortController();
  const limiter = createRequestLimiter(
    redis,
    limiterKey(config.queue.prefix),
    config.queue.rateLimitPerSecond,
    {
      onError: (error) => logger.warn({ err: error }, 'shared rate limit unavailable; request sent anyway'),
      // A 429 met by any process pauses this one at once, not at its next refill.
      subscribe: true,
      onPause: (ms) => logger.debug({ ms }, 'API requests paused after a 429'),
      maxPauseMs: config.http.retryAfterCapMs,
      stop: shutdown.signal,
    },
  );
  let lastActivity = Date.now();
  return {
    config,
    logger,
    pool: o.pool,
    redis,
    queues,
    limiter,
    shutdown,
    touch: () => {
      lastActivity = Date.now();
    },
    idleMs: () => Date.now() - lastActivity,
    bull: {
      connection: redis,
      prefix: config.queue.prefix,
      lockDuration: o.stall?.lockDurationMs ?? 30_000,
      stalledInterval: o.stall?.stalledIntervalMs ?? 30_000,
      // A job killed with its worker is retried this many times before it is failed for good.
      maxStalledCount: o.stall?.maxStalledCount ?? 3,
    },
    close: async () => {
      await within(queues.close(), 5_000);
      await limiter.close();
      if (o.connection === undefined) await closeConnection(redis);
    },
  };
}
