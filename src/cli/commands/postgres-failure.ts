// The message for a Postgres that cannot be reached or is not migrated, shared by the commands that
// read the warehouse (in a module of its own, so `adops status` does not load `adops heal`).
import { CommandFailed } from '../context.js';

/**
 * Error codes that mean no session with Postgres: the socket (a TCP address, or a socket folder
 * that does not exist: ENOENT), the name, the server starting or stopping, the login, the database.
 */
const UNREACHABLE =
  /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOENT|EACCES|57P01|57P02|57P03|53300|28P01|28000|3D000)$/;

/** pg's own errors for a connection lost or never made, which carry no code. */
const LOST = /^Connection terminated( unexpectedly| due to connection timeout)$|^timeout expired$/;

/**
 * A CommandFailed naming DATABASE_URL when `error` means Postgres cannot be reached (or refused the
 * login or the database), else undefined.
 */
export function cannotConnect(error: unknown): CommandFailed | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : '';
  if (typeof code === 'string' ? !UNREACHABLE.test(code) : !LOST.test(message)) return undefined;
  return new CommandFailed(
    `cannot connect to Postgres (${typeof code === 'string' ? `${code}: ` : ''}${message}); check DATABASE_URL or the PG* variables`,
    { cause: error },
  );
}

/**
 * A CommandFailed naming DATABASE_URL for errors that mean Postgres is unreachable or not migrated;
 * other errors unchanged.
 */
export function postgresFailure(error: unknown): unknown {
  const unreachable = cannotConnect(error);
  if (unreachable !== undefined) return unreachable;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === '42P01' || code === '3F000')
    return new CommandFailed(
      `the warehouse tables are missing (${(error as Error).message}); run \`adops migrate\` first (and check ADOPS_SCHEMA)`,
      { cause: error },
    );
  return error;
}
