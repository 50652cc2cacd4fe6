// The request limit's statements on Postgres, over the functions of sql/002_shared_state.sql (the
// database's clock decides). float8: pg hands bigint over as text; every value here is far below 2^53.
import { ident, statement } from '../platform/pg/handle.js';
import type { LimitStore } from './limiter.js';

/** The channel api_limit_pause() notifies on; its payload names the schema, the key and the ms. */
export const PAUSE_CHANNEL = 'adops_api_pause';

/** Takes up to `want` of `key`'s window slots (see LimitStore.take). */
export const takeSlots = (schema: string, key: string, ...take: Parameters<LimitStore['take']>) =>
  statement<{ taken: number; window_no: number; left_ms: number; paused: number }>(
    `SELECT taken::float8, window_no::float8, left_ms::float8, paused::int::float8 AS paused
       FROM ${ident(schema)}.api_limit_take($1, $2, $3, $4, $5)`,
    [key, ...take],
  );

/** Extends `key`'s pause to `ms` from now unless a longer one runs; returns the ms left. */
export const pauseKey = (schema: string, key: string, ms: number) =>
  statement<{ ms: number }>(`SELECT ${ident(schema)}.api_limit_pause($1, $2)::float8 AS ms`, [key, ms]);

/** The ms left of `key`'s pause by the database's clock; no row when none runs. */
export const pauseLeft = (schema: string, key: string) =>
  statement<{ ms: number }>(
    `SELECT ceil(extract(epoch FROM paused_until - clock_timestamp()) * 1000)::float8 AS ms
       FROM ${ident(schema)}.api_limits WHERE key = $1 AND paused_until > clock_timestamp()`,
    [key],
  );

export const listenForPauses = () => statement(`LISTEN ${PAUSE_CHANNEL}`);
