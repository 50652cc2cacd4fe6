// Redis connections for BullMQ. Workers wait out Redis outages (they must not crash on a blip);
// producers, the CLI commands, fail fast so a user is told at once that Redis is unreachable.
import { Redis, type RedisOptions } from 'ioredis';
import type { Config } from '../config/env.js';

/** Thrown when Redis cannot be reached; says where and what to check. */
export class RedisUnavailableError extends Error {
  override readonly name = 'RedisUnavailableError';
}

/**
 * A connection for a BullMQ Worker: `maxRetriesPerRequest: null` as BullMQ requires for blocking
 * commands, so a command waits for the reconnect instead of failing the job.
 */
export function workerConnection(config: Pick<Config, 'redisUrl'>): Redis {
  return quiet(new Redis(config.redisUrl, { maxRetriesPerRequest: null, ...commonOptions() }));
}

/**
 * A connection for producers and readers (Queue in CLI commands): no offline queue and one retry,
 * so an unreachable Redis fails the command within seconds instead of hanging.
 */
export function producerConnection(config: Pick<Config, 'redisUrl'>): Redis {
  return quiet(
    new Redis(config.redisUrl, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectTimeout: 5_000,
      ...commonOptions(),
    }),
  );
}

// Without a listener ioredis prints every reconnect error to the console; failures reach us through
// the commands that fail (and ensureReady), so the event itself needs no handling.
function quiet(redis: Redis): Redis {
  redis.on('error', () => undefined);
  return redis;
}

function commonOptions(): RedisOptions {
  // Never keyPrefix: BullMQ refuses it; isolation is BullMQ's own `prefix` (config.queue.prefix).
  return { lazyConnect: false };
}

/** Replies that mean REDIS_URL's database, user or password will never be accepted. */
const REFUSED_SETTINGS =
  /^(ERR DB index|ERR invalid DB index|NOAUTH|WRONGPASS|NOPERM|ERR invalid password|ERR AUTH)/;

/**
 * Waits until `redis` is ready, or throws RedisUnavailableError after `timeoutMs` (with `failFast`,
 * at the first connection error: a command a user runs should say so at once). The URL in the
 * message has its password removed.
 */
export async function ensureReady(
  redis: Redis,
  redisUrl: string,
  timeoutMs = 5_000,
  options: { failFast?: boolean } = {},
): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    let lastError: Error | undefined;
    const fail = () => {
      cleanup();
      reject(
        new RedisUnavailableError(
          `Redis at ${safeUrl(redisUrl)} is not reachable (${lastError?.message ?? 'no answer'}): ` +
            'check REDIS_URL and that Redis is running',
          { cause: lastError },
        ),
      );
    };
    const onError = (error: Error) => {
      lastError = error;
      // Redis refusing our settings while connecting (SELECT of a database it does not have, a
      // wrong password): waiting cannot help, and ioredis would go on without them. Other replies
      // (LOADING, MASTERDOWN) pass with time.
      if (error.name === 'ReplyError' && REFUSED_SETTINGS.test(error.message)) refuse(error);
      else if (options.failFast === true) fail();
    };
    const refuse = (error: Error) => {
      cleanup();
      reject(
        new RedisUnavailableError(
          `Redis at ${safeUrl(redisUrl)} refused the connection (${error.message}): ` +
            "check REDIS_URL's database number, user and password",
          { cause: error },
        ),
      );
    };
    const timer = setTimeout(fail, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
    };
    redis.on('ready', onReady);
    redis.on('error', onError);
  });
}

/** `redisUrl` without its password, for messages. */
export function safeUrl(redisUrl: string): string {
  try {
    const u = new URL(redisUrl);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return 'REDIS_URL';
  }
}

/** Closes a connection we created: QUIT when possible, a hard disconnect otherwise. */
export async function closeConnection(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([redis.quit(), new Promise((r) => (timer = setTimeout(r, 1_000)))]);
  } catch {
    // already closing or unreachable: disconnect below
  } finally {
    // A pending timer would hold a finished command's process open for the rest of the second.
    clearTimeout(timer);
  }
  redis.disconnect();
}
