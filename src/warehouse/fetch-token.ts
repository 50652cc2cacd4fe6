// The fencing token of a fetch: issued by Postgres, so the order of fetches never depends on a
// worker's clock.
import type { ClientBase, Pool } from 'pg';
import { qualified } from './pg.js';

/**
 * A new fetch token: take it before the request is sent. A response fetched under a lower token
 * than the period's loaded one is stale and is recorded as superseded (see claimPeriodSql).
 */
export async function takeFetchToken(db: Pool | ClientBase, schema: string): Promise<number> {
  const { rows } = await db.query<{ token: string }>({
    text: 'SELECT nextval($1::regclass)::text AS token',
    values: [qualified(schema, 'fetch_tokens')],
  });
  const token = Number(rows[0]?.token);
  if (!Number.isSafeInteger(token)) throw new Error(`${schema}.fetch_tokens issued no usable token`);
  return token;
}
