import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import pg from 'pg';
import type { Config } from '../config/env.js';
import type { Logger } from '../log/logger.js';

export interface PoolOptions {
  /** Connections at most (default 10). */
  readonly max?: number;
  /** Where errors of idle connections go (a server restart); without it they are ignored, not fatal. */
  readonly logger?: Logger;
  /** Per-statement limit outside the loader's own SET LOCAL (default 120 s; 0 = none). */
  readonly statementTimeoutMs?: number;
}

/**
 * A pg Pool for config.databaseUrl (or libpq PG* defaults), tagged application_name 'adops', with
 * timeouts so that neither a stuck statement nor a leaked transaction can hold locks for ever.
 */
export function createPool(config: Pick<Config, 'databaseUrl'>, opts: PoolOptions = {}): pg.Pool {
  useOsUserByDefault();
  if (config.databaseUrl === undefined) useLibpqSocket();
  const pool = new pg.Pool({
    ...(config.databaseUrl === undefined ? {} : { connectionString: config.databaseUrl }),
    max: opts.max ?? 10,
    application_name: 'adops',
    connectionTimeoutMillis: 15_000,
    idleTimeoutMillis: 30_000,
    // pg omits a 0 from the startup packet, which leaves the server default: no limit.
    statement_timeout: opts.statementTimeoutMs ?? 120_000,
    idle_in_transaction_session_timeout: 60_000,
  });
  // An idle client's error is re-emitted on the pool; unhandled it would crash the process.
  pool.on('error', (error) => opts.logger?.warn({ err: error }, 'idle Postgres connection failed'));
  return pool;
}

/**
 * Connect as the OS user when no user is named, as psql does: node-postgres defaults to $USER,
 * which is unset in many containers and cron jobs ("no PostgreSQL user name"). A user in the URL
 * and PGUSER still win: pg reads both before this default.
 */
function useOsUserByDefault(): void {
  if (pg.defaults.user !== undefined && pg.defaults.user !== '') return;
  try {
    pg.defaults.user = userInfo().username;
  } catch {
    // No passwd entry for this uid (some containers): pg then names the missing user itself.
  }
}

/**
 * Without DATABASE_URL, connect as libpq would: the local socket rather than TCP localhost, when
 * the socket is there. PG* variables still win: pg reads them before these defaults.
 */
function useLibpqSocket(): void {
  const socketDir = '/var/run/postgresql';
  if (pg.defaults.host === 'localhost' && existsSync(`${socketDir}/.s.PGSQL.${pg.defaults.port ?? 5432}`)) {
    pg.defaults.host = socketDir;
  }
}
