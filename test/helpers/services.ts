// Addresses of the real Postgres and Redis the integration tests use (never mocks).
export const PG_ADMIN_URL = process.env.ADOPS_TEST_PG_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.ADOPS_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The URL of database `name` on the test server. */
export function databaseUrl(name: string): string {
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The queue backend of this run: ADOPS_TEST_QUEUE (postgres in the `integration-postgres` project). */
export const TEST_QUEUE: 'redis' | 'postgres' =
  process.env.ADOPS_TEST_QUEUE === 'postgres' ? 'postgres' : 'redis';
/** What a test's environment says to run on that backend. */
export const QUEUE_ENV: Readonly<Record<string, string>> = { ADOPS_QUEUE: TEST_QUEUE };
