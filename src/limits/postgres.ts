// The request limit's Postgres store (limiter.ts has the limit), for a deployment without Redis:
// the statements of sql.ts, every process woken at once by NOTIFY to read the pause from the table.
import pg from 'pg';
import { z } from 'zod';
import { limiterOver, type LimiterOptions, type LimitStore, type RequestLimiter } from './limiter.js';
import { execute, firstRow, type Warehouse } from '../platform/pg/handle.js';
import { listenForPauses, pauseKey, pauseLeft, takeSlots } from './sql.js';

const RELISTEN_MS = 1_000; // Wait before a lost LISTEN connection (a Postgres restart) is opened again.

/** limiterOver's limiter for all sharing `wh`'s schema and `key`; `subscribe` LISTENs (see listen). */
export function createPgRequestLimiter(
  wh: Pick<Warehouse, 'pool' | 'schema'>,
  key: string,
  perSecond: number,
  options: LimiterOptions = {},
): RequestLimiter {
  const store: LimitStore = {
    async take(...args) {
      const r = await firstRow(wh.pool, takeSlots(wh.schema, key, ...args));
      return r === undefined ? [0, -1, 1000, 0] : [r.taken, r.window_no, r.left_ms, r.paused];
    },
    pause: async (ms) => (await firstRow(wh.pool, pauseKey(wh.schema, key, ms)))?.ms ?? ms,
    listen: (onPause, onError) => listen(wh, key, onPause, onError),
  };
  return limiterOver(store, perSecond, options);
}

/** LISTENs for the pauses of `key` in `wh.schema` on a client of its own, again after a loss. */
function listen(
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
      // Only a wake-up: any role (a BI role too) may NOTIFY, so its ms is never obeyed; the pause is
      // read from api_limits, which only the owner can write. Another schema's or key's is not read.
      if (names(payload, wh.schema, key)) readPause();
    });
    try {
      await c.connect();
      await execute(c, listenForPauses());
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
    return z.object({ schema: z.literal(schema), key: z.literal(key) }).safeParse(told).success;
  } catch {
    return false;
  }
}

/** Tells `onPause` the ms left of `key`'s pause; one read at a time (a NOTIFY flood costs one more read). */
function pauseReader(
  wh: Pick<Warehouse, 'pool' | 'schema'>,
  key: string,
  onPause: (ms: number) => void,
  onError: (error: unknown) => void,
): () => void {
  const st = pauseLeft(wh.schema, key);
  let reading = false;
  let pending = false;
  const read = async (): Promise<void> => {
    reading = true;
    try {
      do {
        pending = false;
        const ms = (await firstRow(wh.pool, st))?.ms;
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
