// Postgres plumbing: the pool, a checked-out client, transactions, the retry of a lost serialization
// race, safe identifiers, prepared statements, and the Warehouse handle every feature takes.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import pg, { DatabaseError, escapeIdentifier, type ClientBase, type Pool, type PoolClient } from 'pg';
import type { QueryConfig, QueryResult, QueryResultRow } from 'pg';
import type { Config } from '../config/env.js';
import { REPORT_NAME } from '../config/jobs.js';
import type { Logger } from '../log/logger.js';
import { backoffDelay, PG_BACKOFF, isSerializationFailure } from '../retry/classify.js';

/** COPY's data format: binary by default, text behind ADOPS_COPY_FORMAT. */
export type CopyFormat = 'binary' | 'text';

/** The warehouse: one pool, the schema of every table, the COPY format, the logger; made once per process. */
export interface Warehouse {
  readonly pool: Pool;
  readonly schema: string;
  readonly copyFormat: CopyFormat;
  readonly logger?: Logger | undefined;
}

/** One statement built by a feature's SQL module: text, values, and the row shape `rowsOf` returns. */
export interface Statement<R extends QueryResultRow = QueryResultRow> {
  readonly text: string;
  readonly values: readonly unknown[];
  readonly row?: R; // Never set: carries the row type from the builder to whoever runs it.
}

export function statement<R extends QueryResultRow = QueryResultRow>(
  text: string,
  values: readonly unknown[] = [],
): Statement<R> {
  return { text, values };
}

/** What a statement runs on: the warehouse's pool, or a client holding a transaction. */
export type Queryable = Pick<ClientBase, 'query'>;

function queryableOf(db: Queryable | Warehouse): Queryable {
  return 'pool' in db ? db.pool : db;
}

export async function rowsOf<R extends QueryResultRow>(
  db: Queryable | Warehouse,
  st: Statement<R>,
): Promise<R[]> {
  const result = await queryableOf(db).query<R>({ text: st.text, values: [...st.values] });
  return result.rows;
}

export async function firstRow<R extends QueryResultRow>(
  db: Queryable | Warehouse,
  st: Statement<R>,
): Promise<R | undefined> {
  return (await rowsOf(db, st))[0];
}

export async function execute(db: Queryable | Warehouse, st: Statement): Promise<number> {
  const result = await queryableOf(db).query({ text: st.text, values: [...st.values] });
  return result.rowCount ?? 0;
}

/** The handle over `pool` for `schema` (validated: it becomes a quoted identifier in every statement). */
export function warehouseOf(
  pool: Pool,
  schema: string,
  o: { copyFormat?: CopyFormat; logger?: Logger | undefined } = {},
): Warehouse {
  ident(schema);
  return { pool, schema, copyFormat: o.copyFormat ?? 'binary', logger: o.logger };
}

export function openWarehouse(
  config: Pick<Config, 'databaseUrl' | 'schema' | 'copyFormat'>,
  opts: PoolOptions = {},
): Warehouse {
  return warehouseOf(createPool(config, opts), config.schema, {
    copyFormat: config.copyFormat,
    logger: opts.logger,
  });
}

export interface PoolOptions {
  readonly max?: number;
  /** Where errors of idle connections go (a server restart); without it they are ignored, not fatal. */
  readonly logger?: Logger;
  /** Per-statement limit outside the loader's own SET LOCAL (default 120 s; 0 = none). */
  readonly statementTimeoutMs?: number;
}

/** A pg Pool tagged 'adops', with timeouts so no stuck statement or leaked transaction holds locks for
 * ever; pipelined, so statements sent together (inOrder) go out in one write. */
export function createPool(config: Pick<Config, 'databaseUrl'>, opts: PoolOptions = {}): Pool {
  const pool = new pg.Pool({
    ...connectionSettings(config.databaseUrl),
    max: opts.max ?? 10,
    application_name: 'adops',
    connectionTimeoutMillis: 15_000,
    idleTimeoutMillis: 30_000,
    // pg omits a 0 from the startup packet, which leaves the server default: no limit.
    statement_timeout: opts.statementTimeoutMs ?? 120_000,
    idle_in_transaction_session_timeout: 60_000,
    pipeline: true,
  });
  // An idle client's error is re-emitted on the pool; unhandled it would crash the process.
  pool.on('error', (error) => opts.logger?.warn({ err: error }, 'idle Postgres connection failed'));
  return pool;
}

/** Where and as whom to connect, as psql would: the OS user when none is named ($USER is unset in many
 * containers), the local socket without DATABASE_URL; the URL and PG* variables (read by pg) win. */
export function connectionSettings(databaseUrl: string | undefined): {
  connectionString?: string;
  user?: string;
  host?: string;
} {
  const url = databaseUrl === undefined ? {} : { connectionString: databaseUrl };
  const seen = new pg.Client(url);
  let user: string | undefined;
  if (seen.user === undefined || seen.user === '')
    try {
      user = userInfo().username;
    } catch {
      // No passwd entry for this uid (some containers): pg then names the missing user itself.
    }
  const socketDir = '/var/run/postgresql';
  const socket =
    databaseUrl === undefined &&
    seen.host === 'localhost' &&
    pg.defaults.host === 'localhost' &&
    existsSync(`${socketDir}/.s.PGSQL.${seen.port}`);
  const host = socket ? { host: socketDir } : {};
  if (user === undefined) return { ...url, ...host };
  // pg lets a connection string's fields override the config's, an empty user name included: the
  // user goes into the URL itself when the URL names none.
  if (databaseUrl !== undefined && URL.canParse(databaseUrl)) {
    const named = new URL(databaseUrl);
    named.username = encodeURIComponent(user);
    return { connectionString: named.toString(), ...host };
  }
  return { ...url, user, ...host };
}

/** Runs `fn` on a client of `pool`. pg-pool does not listen for 'error' on a checked-out client, so a
 * connection lost mid-statement would crash the process: this listens, and destroys the broken client. */
export async function withClient<T>(
  pool: Pool,
  fn: (client: PoolClient, markBroken: (error: Error) => void) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const markBroken = (error: Error) => {
    broken ??= error;
  };
  client.on('error', markBroken);
  try {
    return await fn(client, markBroken);
  } finally {
    client.off('error', markBroken);
    client.release(broken);
  }
}

/** Runs `fn` on a connection that can COPY: pg refuses COPY on a pipelined one, so a pipelined pool's
 * settings open a connection of its own (a COPY moves 10,000+ rows: the connect is lost in its time). */
export async function withCopyClient<T>(
  pool: Pool,
  fn: (client: pg.Client, markBroken: (error: Error) => void) => Promise<T>,
): Promise<T> {
  if (pool.options.pipeline !== true) return withClient(pool, fn);
  const client = new pg.Client({ ...pool.options, pipeline: false });
  // A connection lost while idle between statements: the next statement rejects instead.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client, () => undefined);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return withClient(pool, (client, markBroken) =>
    withTransaction(client, () => work(client), { onRollbackError: markBroken }),
  );
}

export interface TransactionOptions {
  /** Default 'BEGIN'; null: `work` sends BEGIN beside its first statements (one round trip). */
  readonly begin?: string | null;
  /** A failed ROLLBACK: the client is unusable and must be destroyed (pass withClient's markBroken). */
  readonly onRollbackError?: (error: Error) => void;
}

/** Runs `work` in a transaction on `client`. On a throw it rolls back and rethrows; a failing ROLLBACK
 * goes to `onRollbackError` only, so the cause the user needs stays on top. */
export async function withTransaction<T>(
  client: ClientBase,
  work: () => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  try {
    // Inside the try: an opening of several statements (BEGIN; SELECT ...) may fail after BEGIN.
    if (options.begin !== null) await client.query(options.begin ?? 'BEGIN');
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      options.onRollbackError?.(
        rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError)),
      );
    });
    throw error;
  }
}

/** Runs `queries` in order on `client`; a pipelined connection gets them in one write (pg writes each
 * protocol message on its own: corked, the socket sends them in one system call). */
export async function inOrder(
  client: pg.Client,
  queries: readonly (QueryConfig | string)[],
): Promise<QueryResult[]> {
  if (client.pipeline) {
    const socket = client.connection.stream;
    socket.cork();
    let sent: Promise<QueryResult>[];
    try {
      sent = queries.map((q) => client.query(q));
    } finally {
      socket.uncork();
    }
    return Promise.all(sent);
  }
  const results: QueryResult[] = [];
  for (const q of queries) results.push(await client.query(q));
  return results;
}

export async function queryOnce<R extends QueryResultRow>(
  client: pg.Client,
  query: QueryConfig | string,
): Promise<QueryResult<R>> {
  const [result] = await inOrder(client, [query]);
  return result as QueryResult<R>;
}

/** Runs `attempt` again (up to `attempts` in all) while it fails with 40001 or 40P01, after a jittered pause. */
export async function withPgRetry<T>(attempt: () => Promise<T>, attempts = 4): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (n >= attempts || !isSerializationFailure(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, backoffDelay(n, PG_BACKOFF)));
    }
  }
}

export function sqlState(error: unknown): string | undefined {
  return error instanceof DatabaseError ? error.code : undefined;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** A quoted identifier from a name already validated against a strict pattern; throws otherwise. */
export function ident(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`refusing unsafe SQL identifier ${JSON.stringify(name)}`);
  return escapeIdentifier(name);
}

/** `"schema"."table"`, both validated. */
export function qualified(schema: string, table: string): string {
  return `${ident(schema)}.${ident(table)}`;
}

export function reportTable(reportName: string): string {
  if (!REPORT_NAME.test(reportName))
    throw new Error(`refusing unsafe report name ${JSON.stringify(reportName)}`);
  return `report_${reportName}`;
}

/** Postgres' longest identifier, in bytes: a longer one is cut short, and two names may then meet. */
export const MAX_IDENTIFIER_BYTES = 63;

/** A name derived from a report's that fits 63 bytes: itself when it fits (existing names never change),
 * else its first 54 bytes, `_` and 8 hex digits of its sha256, so long names sharing a start stay apart. */
export function derivedName(name: string): string {
  if (Buffer.byteLength(name) <= MAX_IDENTIFIER_BYTES) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_IDENTIFIER_BYTES - hash.length - 1)}_${hash}`;
}

export interface NamedQuery {
  readonly name: string;
  readonly text: string;
  readonly values: unknown[];
}

/** A prepared statement named by its text's digest, planned once per connection (hashing is µs: no cache). */
export function named(text: string, values: unknown[]): NamedQuery {
  return { name: `adops_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`, text, values };
}
