// Setup file of the integration-serial project: each of its files holds one lock (a Postgres
// advisory lock, keyed by the run) from its first hook to its last, so that they run one at a time:
// a Sentinel promotion or an outage timed in seconds never shares the machine with another one.
// They still run beside the other projects' files; the session's end releases the lock whatever happens.
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import { PG_ADMIN_URL } from './services.js';

let holder: pg.Client | undefined;

beforeAll(async () => {
  holder = new pg.Client({ connectionString: PG_ADMIN_URL });
  await holder.connect();
  await holder.query('SELECT pg_advisory_lock(hashtext($1))', [`${inject('runId')}:one-at-a-time`]);
}, 600_000);

afterAll(async () => {
  await holder?.end();
});
