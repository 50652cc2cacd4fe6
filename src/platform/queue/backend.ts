// Where the queues live (ADOPS_QUEUE): BullMQ on Redis, or on PostgreSQL in a schema of its own. Every Queue,
// Worker and QueueEvents is built through one QueueBackend sharing one connection (not one per Queue).
import {
  Queue,
  QueueEvents,
  Worker,
  PostgresConnection,
  PostgresQueueBackend,
  createRedisBackend,
  runMigrations,
  type BackendFactory,
  type IQueueBackend,
  type JobProgress,
  type Processor,
  type QueueOptions,
  type WorkerOptions,
} from 'bullmq';
import type { ClientBase } from 'pg';
import { connectionSettings } from '../pg/handle.js';
import { PG_NAME_BYTES, type Config } from '../config/env.js';
import { REPORT_QUEUE } from './jobs.js';
import {
  closeConnection,
  ensureReady,
  producerConnection,
  workerConnection,
  type RedisClient,
} from './connection.js';

export type QueueOf<D> = Queue<D, unknown, string, D, unknown, string, IQueueBackend, unknown>;
export type WorkerOf<D> = Worker<D, unknown, string, IQueueBackend, JobProgress, unknown>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- BullMQ's own default: workers of any data
export type AnyWorker = Worker<any, unknown, string, IQueueBackend, JobProgress, unknown>;

export interface QueueBackend {
  readonly kind: Config['queue']['backend'];
  /** The Redis connection, on Redis only: the shared request limit still uses it there. */
  readonly redis: RedisClient | undefined;
  /** `ready` while the store can be used (ioredis' status on Redis; Postgres: a pool reconnects per query). */
  status(): string;
  close(): Promise<void>;
  queue<D>(name: string, opts: Omit<QueueOptions<unknown>, 'connection'>): QueueOf<D>;
  worker<D>(
    name: string,
    processor: Processor<D, unknown, string>,
    opts: Omit<WorkerOptions<unknown>, 'connection'>,
  ): WorkerOf<D>;
  events(name: string): QueueEvents<unknown, IQueueBackend, unknown>;
  /** How many workers (processes running one) consume `queue` now, as BullMQ lists their connections. */
  workersOn(queue: Pick<QueueOf<unknown>, 'name' | 'getWorkers'>): Promise<number>;
}

export interface QueueStoreConfig {
  readonly redis: Config['redis'];
  readonly databaseUrl?: string | undefined;
  readonly queue: Pick<Config['queue'], 'backend' | 'schema' | 'prefix'>;
}

/** How long a worker waits for its Redis to come up before it gives up (RedisUnavailableError). */
export const WORKER_REDIS_WAIT_MS = 30_000;

/** Opens the queue store (a `worker` rides out outages); a given `redis` is the caller's. */
export async function openQueueBackend(
  config: QueueStoreConfig,
  role: 'worker' | 'producer',
  redis?: RedisClient,
  onAttempt?: (error: Error) => void,
): Promise<QueueBackend> {
  if (config.queue.backend === 'postgres') return openPostgres(config, role);
  const client = redis ?? (role === 'worker' ? workerConnection(config) : producerConnection(config));
  try {
    // A CLI command fails at the first refusal; a worker gives Redis half a minute to come up.
    if (role === 'producer') await ensureReady(client, config.redis, 5_000, { failFast: true });
    else
      await ensureReady(
        client,
        config.redis,
        WORKER_REDIS_WAIT_MS,
        onAttempt === undefined ? {} : { onAttempt },
      );
  } catch (error) {
    // A connection left open would keep reconnecting, and the process alive, after the failure.
    if (redis === undefined) client.disconnect();
    throw error;
  }
  const on =
    (connection: RedisClient): BackendFactory<IQueueBackend, unknown> =>
    (name, opts, o) =>
      createRedisBackend(name, { ...opts, connection }, o);
  return {
    ...build(on(client), config.queue.prefix),
    // QueueEvents blocks on its connection, which BullMQ wants without a retry limit: its own.
    events: (name) => {
      const own = workerConnection(config);
      const events = build(on(own), config.queue.prefix).events(name);
      const close = events.close.bind(events);
      events.close = async () => {
        await close();
        await closeConnection(own);
      };
      return events;
    },
    kind: 'redis',
    redis: client,
    // BullMQ names each worker's blocking connection after its queue and prefix (CLIENT SETNAME).
    workersOn: async (queue) => (await queue.getWorkers()).length,
    status: () => client.status,
    close: async () => {
      if (redis === undefined) await closeConnection(client);
    },
  };
}

async function openPostgres(config: QueueStoreConfig, role: 'worker' | 'producer'): Promise<QueueBackend> {
  const options = {
    ...connectionSettings(config.databaseUrl),
    schema: config.queue.schema,
    // BullMQ's own migrations, under its advisory lock: a no-op once `adops migrate` ran them.
    migrate: true,
    // A worker's job slots query at once (waiting ones LISTEN, outside the pool); a command, rarely.
    max: role === 'worker' ? 4 : 2,
    application_name: 'adops-queue',
  };
  const connection = new SerialListenConnection(options);
  connection.on('error', () => undefined);
  try {
    await connection.waitUntilReady();
  } catch (error) {
    await connection.close();
    throw error;
  }
  // One shared pool; pull workers name the LISTEN connection after the schema (BullMQ's names lack a prefix).
  const listenName = workerListenName(config.queue.schema);
  const factory: BackendFactory<IQueueBackend, unknown> = (name, opts, o) =>
    new PostgresQueueBackend(
      connection,
      name,
      { ...opts, connection: options },
      false,
      name === REPORT_QUEUE && o?.withBlockingConnection === true ? listenName : undefined,
    );
  return {
    ...build(factory, config.queue.prefix),
    kind: 'postgres',
    redis: undefined,
    workersOn: async (queue) => {
      if (queue.name !== REPORT_QUEUE) throw new Error(`workers of ${queue.name} are not named on Postgres`);
      // BullMQ cuts `:w:<name>` off `name`; `rawname` is the whole application_name.
      return (await queue.getWorkers()).filter((w) => (w.rawname ?? w.name) === listenName).length;
    },
    status: () => (connection.isClosing === undefined ? 'ready' : 'end'),
    close: () => connection.close(),
  };
}

/** A Postgres worker's LISTEN connection name, as getWorkers finds a pull worker, cut to 63 bytes as Postgres would. */
function workerListenName(schema: string): string {
  return `${REPORT_QUEUE}:w:${schema}`.slice(0, PG_NAME_BYTES);
}

type ListenClient = Awaited<ReturnType<PostgresConnection['getListenClient']>>;

/** BullMQ's PostgresConnection with its shared LISTEN client's queries serialised: each queue sends LISTEN
 * on its first wait, and pg warns of concurrent client.query() calls (pg 9 will refuse them). */
class SerialListenConnection extends PostgresConnection {
  private readonly serialised = new WeakSet<ListenClient>();

  override async getListenClient(): Promise<ListenClient> {
    const client = await super.getListenClient();
    // A lost LISTEN connection is replaced by a new client: each one is wrapped once.
    if (!this.serialised.has(client)) {
      this.serialised.add(client);
      serialiseQueries(client);
    }
    return client;
  }
}

/** Makes `client.query` wait for the query before it to settle before sending its own. */
function serialiseQueries(client: ListenClient): void {
  const send = client.query.bind(client);
  let last: Promise<unknown> = Promise.resolve();
  client.query = (text, params) => {
    const next = last.then(() => send(text, params));
    last = next.catch(() => undefined);
    return next;
  };
}

function build(
  factory: BackendFactory<IQueueBackend, unknown>,
  prefix: string,
): Pick<QueueBackend, 'queue' | 'worker' | 'events'> {
  // `connection` is the factory's own: this placeholder only satisfies BullMQ's check that one is set.
  const common = { connection: 'factory', prefix };
  return {
    queue: <D>(name: string, opts: Omit<QueueOptions<unknown>, 'connection'>) =>
      new Queue<D, unknown, string, D, unknown, string, IQueueBackend, unknown>(
        name,
        { ...common, ...opts },
        factory,
      ),
    worker: <D>(
      name: string,
      processor: Processor<D, unknown, string>,
      opts: Omit<WorkerOptions<unknown>, 'connection'>,
    ) => new Worker(name, processor, { ...common, ...opts }, factory),
    events: (name: string) => new QueueEvents(name, common, factory),
  };
}

/** Brings the queue schema of `config` up to BullMQ's latest (`adops migrate`), on `client`. */
export async function migrateQueueSchema(client: ClientBase, config: Pick<Config, 'queue'>): Promise<void> {
  if (config.queue.backend === 'postgres') await runMigrations(client, config.queue.schema);
}
