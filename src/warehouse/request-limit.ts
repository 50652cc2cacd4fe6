// The shared API request limit and its 429 pause on Postgres, for a deployment without Redis: the
// same limiter as api/shared-limit.ts over the functions of sql/002_shared_state.sql (the
// database's clock decides), the pause told to every process at once by NOTIFY.
import pg from 'pg';
import {
  limiterOver,
  type LimiterOptions,
  type LimitStore,
  type Listener,
  type RequestLimiter,
} from '../api/shared-limit.js';
import { ident, type Warehouse } from './pg.js';

/** The channel api_limit_pause() notifies on; its payload names the schema, the key and the ms. */
const CHANNEL = 'adops_api_pause';
/** Wait before a lost LISTEN connection (a Postgres restart) is opened again. */
const RELISTEN_MS = 1_000;

/**
 * A limiter allowing `perSecond` requests per second across every process sharing `wh`'s
 * database and schema and `key` (limiterKey), with the guarantees of createRequestLimiter. With
 * `subscribe`, it LISTENs on a connection of its own (opened again when lost; meanwhile a pause
 * is seen at the next refill), never one of the pool's.
 */
export function createPgRequestLimiter(
  wh: Pick<Warehouse, 'pool' | 'schema'>,
  key: string,
  perSecond: number,
  options: LimiterOptions = {},
): RequestLimiter {
  const schema = ident(wh.schema);
  const store: LimitStore = {
    async take(max, windowMs, want, longestMs) {
      const { rows } = await wh.pool.query<{
        taken: number;
        window_no: string;
        left_ms: string;
        paused: boolean;
      }>(`SELECT * FROM ${schema}.api_limit_take($1, $2, $3, $4, $5)`, [key, max, windowMs, want, longestMs]);
      const r = rows[0];
      if (r === undefined) throw new Error('api_limit_take returned no row');
      return [r.taken, Number(r.window_no), Number(r.left_ms), r.paused ? 1 : 0];
    },
    async pause(ms) {
      const { rows } = await wh.pool.query<{ left: string }>(
        `SELECT ${schema}.api_limit_pause($1, $2) AS left`,
        [key, ms],
      );
      return Number(rows[0]?.left);
    },
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
): Listener {
  let closed = false;
  let client: pg.Client | undefined;
  const again = () => {
    if (!closed) setTimeout(() => void open().catch(() => undefined), RELISTEN_MS).unref();
  };
  const open = async (): Promise<void> => {
    if (closed) return;
    const c = (client = new pg.Client(wh.pool.options));
    c.on('error', () => undefined);
    c.on('notification', ({ channel, payload }) => {
      const told = JSON.parse(payload ?? '{}') as { schema?: string; key?: string; ms?: number };
      if (channel === CHANNEL && told.schema === wh.schema && told.key === key) onPause(Number(told.ms));
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
