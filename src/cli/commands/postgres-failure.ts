// The message for a Postgres that cannot be reached or is not migrated, shared by the commands that
// read the warehouse (in a module of its own, so `adops status` does not load `adops heal`).
import { CommandFailed } from '../context.js';

/**
 * A CommandFailed naming DATABASE_URL for errors that mean Postgres is unreachable or not migrated;
 * other errors unchanged.
 */
export function postgresFailure(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return error;
  if (/^(ECONNREFUSED|ENOTFOUND|ETIMEDOUT|28P01|28000|3D000)$/.test(code))
    return new CommandFailed(
      `cannot connect to Postgres (${code}: ${(error as Error).message}); check DATABASE_URL or the PG* variables`,
      { cause: error },
    );
  if (code === '42P01' || code === '3F000')
    return new CommandFailed(
      `the warehouse tables are missing (${(error as Error).message}); run \`adops migrate\` first (and check ADOPS_SCHEMA)`,
      { cause: error },
    );
  return error;
}
