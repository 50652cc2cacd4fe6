// The shared API request limit and its 429 pause on Postgres, for a deployment without Redis: the
// same limiter as api/shared-limit.ts over the functions of sql/002_shared_state.sql (the
// database's clock decides), the pause told to every process at once by NOTIFY.
import pg from 'pg';
import {
  limiterOver,
  type LimiterOptions,
  type LimitStore,
  type RequestLimiter,
} from '../api/shared-limit.js';
import { ident, type Warehouse } from './pg.js';

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
  const again = () => {
    if (!closed) setTimeout(() => void open().catch(() => undefined), RELISTEN_MS).unref();
  };
  const open = async (): Promise<void> => {
    if (closed) return;
    const c = (client = new pg.Client(wh.pool.options));
    c.on('error', () => undefined);
    c.on('notification', ({ payload }) => {
      let told: { schema?: string; key?: string; ms?: number } = {};
      try {
        told = JSON.parse(payload ?? '{}') as typeof told;
      } catch {
        // Not ours (anyone may NOTIFY on the channel): ignored.
      }
      if (told.schema === wh.schema && told.key === key) onPause(Number(told.ms));
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
