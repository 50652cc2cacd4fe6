// The shared API request limit and its 429 pause on Postgres, for a deployment without Redis: the
// same limiter as limits/redis.ts over the functions of sql/002_shared_state.sql (the
// database's clock decides), every process woken at once by NOTIFY to read the pause from the table.
import pg from 'pg';
import { limiterOver, type LimiterOptions, type LimitStore, type RequestLimiter } from './redis.js';
import { ident, type Warehouse } from '../platform/pg/handle.js';

/** The channel api_limit_pause() notifies on; its payload names the schema, the key and the ms. */
const CHANNEL = 'adops_api_pause';
/** Wait before a lost LISTEN connection (a Postgres restart) is opened again. */
const RELISTEN_MS = 1_000;

/** createRequestLimiter's limiter across every process sharing `wh`'s schema and `key`; `subscribe`
 * LISTENs on a connection of its own, opened again when lost. */
export function createPgRequestLimiter(
  wh: Pick<Warehouse, 'pool' | 'schema'>,
  key: string,
  perSecond: number,
  options: LimiterOptions = {},
): RequestLimiter {
  const schema = ident(wh.schema);
  // float8: pg hands bigint over as text; every value here is far below 2^53.
  const value = async <T>(sql: string, values: unknown[]) =>
    (await wh.pool.query<{ v: T }>(sql, values)).rows[0]?.v;
  const store: LimitStore = {
    take: async (...args) =>
      (await value<number[]>(
        `SELECT ARRAY[taken, window_no, left_ms, paused::int]::float8[] AS v
           FROM ${schema}.api_limit_take($1, $2, $3, $4, $5)`,
        [key, ...args],
      )) ?? [0, -1, 1000, 0],
    pause: async (ms) =>
      (await value<number>(`SELECT ${schema}.api_limit_pause($1, $2)::float8 AS v`, [key, ms])) ?? ms,
    listen: (onPause, onError) => listenForPauses(wh, key, onPause, onError),
  };
  return limiterOver(store, perSecond, options);
}

/** LISTENs for the pauses of `key` in `wh.schema` on a client of its own, again after a loss. */
function listenForPauses(
  wh: Pick<Warehouse, 'pool' | 'schema'>,
  key: string,
  onPause: (ms: number) => void,
  onError: (error: unknown) => void,
): ReturnType<LimitStore['listen']> {
  let closed = false;
  let client: pg.Client | undefined;
  const readPause = pauseReader(wh, key, onPause, onError);
  const again = () => {
    if (!closed) setTimeout(() => void open().catch(() => undefined), RELISTEN_MS).unref();
  };
  const open = async (): Promise<void> => {
    if (closed) return;
    const c = (client = new pg.Client(wh.pool.options));
    c.on('error', () => undefined);
    c.on('notification', ({ payload }) => {
      // Only a wake-up: any role that can connect may NOTIFY on the channel (a BI role too), so
      // its payload's ms is never obeyed. The pause is read from api_limits, which only the
      // warehouse's owner (a worker of this deployment) can write; one naming another schema or
      // key (another deployment's) is not even read.
      if (names(payload, wh.schema, key)) readPause();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      void c.end().catch(() => undefined);
      again();
      throw error;
    }
    c.once('end', again);
    if (closed) void c.end().catch(() => undefined);
  };
  const ready = open().catch((error: unknown) => (closed ? undefined : onError(error)));
  return {
    ready,
    async close() {
      closed = true;
      await client?.end().catch(() => undefined);
    },
  };
}

/** Whether a NOTIFY payload of api_limit_pause() names `schema` and `key` (anything else: false). */
function names(payload: string | undefined, schema: string, key: string): boolean {
  try {
    const told: unknown = JSON.parse(payload ?? '');
    return (
      typeof told === 'object' &&
      told !== null &&
      'schema' in told &&
      told.schema === schema &&
      'key' in told &&
      told.key === key
    );
  } catch {
    return false;
  }
}

/**
 * Reads the pause of `key` from api_limits (ms left by the database's clock) and tells `onPause`
 * when one runs; the limiter cuts it to its cap. One read at a time: wake-ups arriving during a
 * read (a flood of NOTIFYs) cost one more read, not one each.
 */
function pauseReader(
  wh: Pick<Warehouse, 'pool' | 'schema'>,
  key: string,
  onPause: (ms: number) => void,
  onError: (error: unknown) => void,
): () => void {
  const sql = `SELECT ceil(extract(epoch FROM paused_until - clock_timestamp()) * 1000)::float8 AS ms
                 FROM ${ident(wh.schema)}.api_limits WHERE key = $1 AND paused_until > clock_timestamp()`;
  let reading = false;
  let pending = false;
  const read = async (): Promise<void> => {
    reading = true;
    try {
      do {
        pending = false;
        const ms = (await wh.pool.query<{ ms: number }>(sql, [key])).rows[0]?.ms;
        if (ms !== undefined && ms > 0) onPause(ms);
      } while (pending);
    } catch (error) {
      onError(error);
    } finally {
      reading = false;
    }
  };
  return () => {
    if (reading) pending = true;
    else void read();
  };
}
