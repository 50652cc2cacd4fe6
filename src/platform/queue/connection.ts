// Redis connections for BullMQ (server, Sentinel or Cluster): workers wait out outages, commands fail fast;
// and a `--wait`'s ride through an outage of the queue's store, up to a bound (throughOutage).
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Config } from '../config/env.js';
import { describeRedisTarget, redisVariablesOf, type RedisTarget } from '../config/connections.js';
import { errorCode, isRedisOutage, isTransientPg, outageReason } from '../retry/classify.js';
import { TransientError } from '../retry/errors.js';

/** A connection to any of the targets: BullMQ and our commands take either. */
export type RedisClient = Redis | Cluster;

/** Thrown when Redis cannot be reached; says where and what to check. */
export class RedisUnavailableError extends TransientError {
  override readonly name = 'RedisUnavailableError';
}

/** A connection for a BullMQ Worker: commands wait for the reconnect; on a Cluster 1,200 redirections
 * (not ioredis' 16, which lost completions as a node went) ride out about two minutes. */
export function workerConnection(config: Pick<Config, 'redis'>): RedisClient {
  return quiet(
    connect(config.redis, { maxRetriesPerRequest: null }, { maxRedirections: 1_200, retryDelayOnMoved: 100 }),
  );
}

/** A connection for CLI commands: no offline queue and one retry, so an unreachable Redis fails fast. */
export function producerConnection(config: Pick<Config, 'redis'>): RedisClient {
  return quiet(
    connect(
      config.redis,
      { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 5_000 },
      { enableOfflineQueue: false },
    ),
  );
}

function connect(target: RedisTarget, node: RedisOptions, cluster: ClusterOptions): RedisClient {
  // Never keyPrefix: BullMQ refuses it; isolation is BullMQ's own `prefix` (config.queue.prefix).
  const common: RedisOptions = { lazyConnect: false, ...node };
  switch (target.kind) {
    case 'single':
      return new Redis(target.url, common);
    case 'sentinel':
      return new Redis({
        ...common,
        sentinels: target.sentinels.map((s) => ({ host: s.host, port: s.port })),
        name: target.master,
        db: target.db,
        ...credentials(target),
        ...(target.sentinelPassword === undefined ? {} : { sentinelPassword: target.sentinelPassword }),
        // Follow a new master as soon as a sentinel announces it, not when the old socket times out.
        failoverDetector: true,
      });
    case 'cluster':
      return new Cluster(
        target.nodes.map((n) => ({ host: n.host, port: n.port })),
        { ...cluster, redisOptions: { ...common, ...credentials(target) } },
      );
  }
}

function credentials(target: { username: string | undefined; password: string | undefined }): RedisOptions {
  return {
    ...(target.username === undefined ? {} : { username: target.username }),
    ...(target.password === undefined ? {} : { password: target.password }),
  };
}

// Without a listener ioredis prints every reconnect error; failures reach us through the commands.
function quiet<T extends RedisClient>(redis: T): T {
  redis.on('error', () => undefined);
  return endWhenDisconnected(redis);
}

/** ioredis leaves a connection disconnected while reconnecting in `reconnecting` for ever, with no `end`
 * (redis/ioredis#1247), so Worker.close() never finished; this ends it and its duplicates (not a Cluster). */
function endWhenDisconnected<T extends RedisClient>(redis: T): T {
  if (!(redis instanceof Redis)) return redis;
  const client: Redis = redis;
  const disconnect = client.disconnect.bind(client);
  client.disconnect = (reconnect = false) => {
    const stranded = !reconnect && client.status === 'reconnecting';
    disconnect(reconnect);
    if (!stranded || client.status !== 'reconnecting') return;
    // Private in ioredis' types, present in 5.x: manuallyClosing, setStatus, flushQueue.
    const setStatus: unknown = Reflect.get(client, 'setStatus');
    const flushQueue: unknown = Reflect.get(client, 'flushQueue');
    if (typeof setStatus !== 'function' || typeof flushQueue !== 'function') return;
    Reflect.set(client, 'manuallyClosing', false);
    setStatus.call(client, 'end');
    flushQueue.call(client, new Error('Connection is closed.'));
  };
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (override) => endWhenDisconnected(duplicate(override));
  return redis;
}

/** Replies that mean the database, user or password configured will never be accepted. */
const REFUSED_SETTINGS =
  /^(ERR DB index|ERR invalid DB index|NOAUTH|WRONGPASS|NOPERM|ERR invalid password|ERR AUTH)/;

/** Waits until `redis` is ready, or throws RedisUnavailableError after `timeoutMs` (`failFast`: at once). */
export async function ensureReady(
  redis: RedisClient,
  target: RedisTarget,
  timeoutMs = 5_000,
  options: { failFast?: boolean; onAttempt?: (error: Error) => void } = {},
): Promise<void> {
  if (redis.status === 'ready') return;
  const where = describeRedisTarget(target);
  const variables = redisVariablesOf(target);
  await new Promise<void>((resolve, reject) => {
    let lastError: Error | undefined;
    const settle = (error?: RedisUnavailableError) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
      redis.off('end', onEnd);
      if (error === undefined) resolve();
      else reject(error);
    };
    const fail = () => {
      // The sentinels answer but monitor no master of that name: a setting to fix, not an outage.
      const hint =
        target.kind === 'sentinel' && /No such master with that name/.test(lastError?.message ?? '')
          ? `the sentinels monitor no master named "${target.master}": check REDIS_SENTINEL_MASTER (or the master name in REDIS_URL)`
          : `check ${variables} and that Redis is running`;
      const message = `Redis at ${where} is not reachable (${lastError?.message ?? 'no answer'}): ${hint}`;
      settle(new RedisUnavailableError(message, { cause: lastError }));
    };
    const onError = (error: Error) => {
      lastError = error;
      options.onAttempt?.(error);
      // A refused database or password cannot pass with time (LOADING or MASTERDOWN can).
      if (error.name === 'ReplyError' && REFUSED_SETTINGS.test(error.message)) {
        const check =
          variables === 'REDIS_URL'
            ? "check REDIS_URL's database number, user and password"
            : `check the database number, user and password in ${variables}`;
        const message = `Redis at ${where} refused the connection (${error.message}): ${check}`;
        settle(new RedisUnavailableError(message, { cause: error }));
      } else if (options.failFast === true) fail();
    };
    const timer = setTimeout(fail, timeoutMs);
    // Closed by its owner while we wait: it will never be ready; fail now rather than at the timeout.
    const onEnd = () => {
      lastError ??= new Error('the connection was closed');
      fail();
    };
    const onReady = () => settle();
    redis.on('ready', onReady);
    redis.on('error', onError);
    redis.on('end', onEnd);
  });
}

/** The default bound of a wait's outage of the queue store: ADOPS_REDIS_OUTAGE_SECONDS' default. */
export const WAIT_OUTAGE_MS = 120_000;

/** Thrown by a wait when the queue's store stayed unreachable past its bound; `cause` is the last failure. */
export class QueueOutageError extends TransientError {
  override readonly name = 'QueueOutageError';
  constructor(
    readonly awayMs: number,
    cause: unknown,
    store: string,
  ) {
    super(`${store} did not answer for ${Math.round(awayMs / 1000)} s (${outageReason(cause)})`, { cause });
  }
}

/** Where a wait stands with the queue's store: away (since `awayMs` ago, the last failure) or back. */
export type OutageState =
  | { readonly away: true; readonly awayMs: number; readonly error: Error }
  | { readonly away: false; readonly awayMs: number };

export interface OutageOptions {
  /** How long the store may stay unreachable before the wait gives up (QueueOutageError). */
  readonly outageMs: number;
  readonly store?: string; // The store as QueueOutageError's message names it (default `the queue's store`).
  readonly retryMs?: number;
  readonly answerMs?: number; // A read with no answer for this long counts as an outage too (default 15 s).
  /** Told at each failed attempt while the store is away, and once when it answers again. */
  readonly onOutage?: (state: OutageState) => void;
  readonly signal?: AbortSignal;
}

/** Retries `read` (reads only) until answered; QueueOutageError after `outageMs`; undefined on abort. */
export async function throughOutage<T>(read: () => Promise<T>, o: OutageOptions): Promise<T | undefined> {
  let since: number | undefined;
  const answerMs = o.answerMs ?? 15_000;
  for (;;) {
    let failure: unknown;
    try {
      const value = await answered(read(), answerMs);
      if (value !== NO_ANSWER) {
        if (since !== undefined) o.onOutage?.({ away: false, awayMs: Date.now() - since });
        return value;
      }
      // A store frozen or cut off with its connection still open.
      failure = new TransientError(`no answer within ${Math.round(answerMs / 1000)} s`);
    } catch (error) {
      if (!isRedisOutage(error) && !isPgLoss(error)) throw error;
      failure = error;
    }
    since ??= Date.now();
    const awayMs = Date.now() - since;
    if (awayMs >= o.outageMs) throw new QueueOutageError(awayMs, failure, o.store ?? "the queue's store");
    o.onOutage?.({
      away: true,
      awayMs,
      error: failure instanceof Error ? failure : new Error(String(failure)),
    });
    await pause(Math.min(o.retryMs ?? 1_000, o.outageMs - awayMs), o.signal);
    if (o.signal?.aborted === true) return undefined;
  }
}

/** A Postgres queue's connection lost (a restart, a terminated session): waited out as an outage. */
function isPgLoss(error: unknown): boolean {
  return (
    isTransientPg(errorCode(error)) ||
    (error instanceof Error && /Connection terminated/i.test(error.message))
  );
}

const NO_ANSWER = Symbol('no answer');

/** `p`, or NO_ANSWER after `ms` (p's own outcome is then ignored). */
function answered<T>(p: Promise<T>, ms: number): Promise<T | typeof NO_ANSWER> {
  let timer: NodeJS.Timeout | undefined;
  p.catch(() => undefined);
  return Promise.race([
    p,
    new Promise<typeof NO_ANSWER>((resolve) => {
      timer = setTimeout(() => resolve(NO_ANSWER), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  await sleep(ms, undefined, signal === undefined ? {} : { signal }).catch(() => undefined);
}

/** Closes a connection we created: QUIT when possible, a hard disconnect otherwise. */
export async function closeConnection(redis: RedisClient): Promise<void> {
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
