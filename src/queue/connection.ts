// Redis connections for BullMQ. Workers wait out Redis outages (they must not crash on a blip);
// producers, the CLI commands, fail fast so a user is told at once that Redis is unreachable; a
// command that waits (`--wait`) retries its reads through an outage, up to a bound (throughOutage).
// The target is one server, a master found through Sentinel (reconnects follow a failover), or a
// Cluster (ioredis routes each command to the node holding its slot).
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Config } from '../config/env.js';
import { describeRedisTarget, redisVariablesOf, type RedisTarget } from '../config/connections.js';
import { isRedisOutage, isTransientPg, outageReason } from '../retry/classify.js';
import { TransientError } from '../retry/errors.js';

/** A connection to any of the targets: BullMQ and our commands take either. */
export type RedisClient = Redis | Cluster;

/** Thrown when Redis cannot be reached; says where and what to check. */
export class RedisUnavailableError extends TransientError {
  override readonly name = 'RedisUnavailableError';
}

/**
 * A connection for a BullMQ Worker: `maxRetriesPerRequest: null` as BullMQ requires for blocking
 * commands, so a command waits for the reconnect instead of failing the job. On a Cluster the same
 * wait is its redirections: ioredis gives a command up after 16 (1.6 s while a node is down, at
 * once while a returning node is redirected to before it is connected), which lost the completion
 * of a pull that finished as the node went, so the pull ran again. 1,200 of them, 100 ms apart,
 * ride out about two minutes.
 */
export function workerConnection(config: Pick<Config, 'redis'>): RedisClient {
  return quiet(
    connect(config.redis, { maxRetriesPerRequest: null }, { maxRedirections: 1_200, retryDelayOnMoved: 100 }),
  );
}

/**
 * A connection for producers and readers (Queue in CLI commands): no offline queue and one retry,
 * so an unreachable Redis fails the command within seconds instead of hanging.
 */
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
        // Ask the sentinels again as soon as one announces a new master, instead of waiting for
        // the old one's connection to time out.
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

// Without a listener ioredis prints every reconnect error to the console; failures reach us through
// the commands that fail (and ensureReady), so the event itself needs no handling.
function quiet<T extends RedisClient>(redis: T): T {
  redis.on('error', () => undefined);
  return endWhenDisconnected(redis);
}

/** The parts of an ioredis client endWhenDisconnected needs: private in its types, present in 5.x. */
interface ClientInternals {
  manuallyClosing?: boolean;
  setStatus?: (status: string) => void;
  flushQueue?: (error: Error) => void;
}

/**
 * ioredis leaves a connection that is disconnected while it waits to reconnect in `reconnecting`
 * for ever: no `end` event, its queued commands never settled (redis/ioredis#1247). BullMQ's
 * Worker.close() waits for that event on its blocking connection, so a worker whose Redis was gone
 * never finished closing, and its lock-renewal timer kept the process alive after SIGTERM. This
 * ends such a connection the way ioredis ends one disconnected before it ever connected, in
 * `redis` and in every duplicate of it (BullMQ's blocking connections and our subscribers are
 * duplicates). A Cluster is left as it is: its node connections are its own, so a worker on a
 * Cluster whose node is gone may still not finish closing, and `adops worker`'s last-resort exit
 * ends it (10 s past the shutdown deadline).
 */
function endWhenDisconnected<T extends RedisClient>(redis: T): T {
  if (!(redis instanceof Redis)) return redis;
  const client: Redis = redis;
  const internals = client as unknown as ClientInternals;
  const disconnect = client.disconnect.bind(client);
  client.disconnect = (reconnect = false) => {
    const stranded = !reconnect && client.status === 'reconnecting';
    disconnect(reconnect);
    if (!stranded || client.status !== 'reconnecting') return;
    if (typeof internals.setStatus !== 'function' || typeof internals.flushQueue !== 'function') return;
    internals.manuallyClosing = false;
    internals.setStatus('end');
    internals.flushQueue(new Error('Connection is closed.'));
  };
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (override) => endWhenDisconnected(duplicate(override));
  return redis;
}

/** Replies that mean the database, user or password configured will never be accepted. */
const REFUSED_SETTINGS =
  /^(ERR DB index|ERR invalid DB index|NOAUTH|WRONGPASS|NOPERM|ERR invalid password|ERR AUTH)/;

/**
 * Waits until `redis` is ready, or throws RedisUnavailableError after `timeoutMs` (with `failFast`,
 * at the first connection error: a command a user runs should say so at once). `target` is the
 * config's (or a REDIS_URL); the message names it without its password.
 */
export async function ensureReady(
  redis: RedisClient,
  target: RedisTarget | string,
  timeoutMs = 5_000,
  options: { failFast?: boolean } = {},
): Promise<void> {
  if (redis.status === 'ready') return;
  const where = typeof target === 'string' ? safeUrl(target) : describeRedisTarget(target);
  const variables = typeof target === 'string' ? 'REDIS_URL' : redisVariablesOf(target);
  await new Promise<void>((resolve, reject) => {
    let lastError: Error | undefined;
    const fail = () => {
      cleanup();
      // The sentinels answer but monitor no master of that name: a setting to fix, not an outage.
      const hint =
        typeof target !== 'string' &&
        target.kind === 'sentinel' &&
        /No such master with that name/.test(lastError?.message ?? '')
          ? `the sentinels monitor no master named "${target.master}": check REDIS_SENTINEL_MASTER (or the master name in REDIS_URL)`
          : `check ${variables} and that Redis is running`;
      reject(
        new RedisUnavailableError(
          `Redis at ${where} is not reachable (${lastError?.message ?? 'no answer'}): ${hint}`,
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
          `Redis at ${where} refused the connection (${error.message}): ` +
            (variables === 'REDIS_URL'
              ? "check REDIS_URL's database number, user and password"
              : `check the database number, user and password in ${variables}`),
          { cause: error },
        ),
      );
    };
    const timer = setTimeout(fail, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    // Closed by its owner while we wait: it will never be ready, and the timer must not hold the
    // process open for the rest of the timeout.
    const onEnd = () => {
      lastError ??= new Error('the connection was closed');
      fail();
    };
    const cleanup = () => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
      redis.off('end', onEnd);
    };
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
    /** How long the store had not answered, from the first failed read. */
    readonly awayMs: number,
    cause: unknown,
    /** The store, as messages name it (`Redis at ...`, `the queue's Postgres ...`). */
    store: string,
  ) {
    super(`${store} did not answer for ${Math.round(awayMs / 1000)} s (${outageReason(cause)})`, { cause });
  }
}

/** A read that had no answer in time: a store frozen or cut off with its connection still open. */
class NoAnswerError extends TransientError {
  override readonly name = 'NoAnswerError';
}

/** Where a wait stands with the queue's store: away (since `awayMs` ago, the last failure) or back. */
export type OutageState =
  | { readonly away: true; readonly awayMs: number; readonly error: Error }
  | { readonly away: false; readonly awayMs: number };

export interface OutageOptions {
  /** How long the store may stay unreachable before the wait gives up (QueueOutageError). */
  readonly outageMs: number;
  /** The store as QueueOutageError's message names it (default `the queue's store`). */
  readonly store?: string;
  /** Pause between attempts while the store is away (default 1 s). */
  readonly retryMs?: number;
  /** A read with no answer for this long counts as an outage too (default 15 s). */
  readonly answerMs?: number;
  /** Told at each failed attempt while the store is away, and once when it answers again. */
  readonly onOutage?: (state: OutageState) => void;
  /** Stops retrying (resolving undefined) when aborted. */
  readonly signal?: AbortSignal;
}

/**
 * Runs `read` (reads only: a retry must be harmless), retrying it while the queue's store (Redis,
 * or the queue's Postgres) is unreachable or switching until it answers, or throws
 * QueueOutageError once it has been away for `outageMs`. Other errors are thrown at once. Resolves
 * undefined when `signal` aborts.
 */
export async function throughOutage<T>(read: () => Promise<T>, o: OutageOptions): Promise<T | undefined> {
  let since: number | undefined;
  for (;;) {
    try {
      const value = await answered(read(), o.answerMs ?? 15_000);
      if (since !== undefined) o.onOutage?.({ away: false, awayMs: Date.now() - since });
      return value;
    } catch (error) {
      if (!(error instanceof NoAnswerError) && !isRedisOutage(error) && !isPgLoss(error)) throw error;
      since ??= Date.now();
      const awayMs = Date.now() - since;
      if (awayMs >= o.outageMs) throw new QueueOutageError(awayMs, error, o.store ?? "the queue's store");
      o.onOutage?.({ away: true, awayMs, error: error instanceof Error ? error : new Error(String(error)) });
      await pause(Math.min(o.retryMs ?? 1_000, o.outageMs - awayMs), o.signal);
      if (o.signal?.aborted === true) return undefined;
    }
  }
}

/** A Postgres queue's connection lost (a restart, a terminated session): waited out as an outage. */
function isPgLoss(error: unknown): boolean {
  const code =
    typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
  return isTransientPg(code) || (error instanceof Error && /Connection terminated/i.test(error.message));
}

/** `p`, or a NoAnswerError after `ms` (p's own outcome is then ignored). */
function answered<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  p.catch(() => undefined);
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new NoAnswerError(`no answer within ${Math.round(ms / 1000)} s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    if (signal?.aborted === true) done();
    else signal?.addEventListener('abort', done, { once: true });
  });
}

/** `redisUrl` without its password, for messages. */
function safeUrl(redisUrl: string): string {
  try {
    const u = new URL(redisUrl);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return 'REDIS_URL';
  }
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
