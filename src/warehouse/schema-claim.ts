// Claiming a schema for one purpose by its comment, so a tool that writes freely into "its own"
// schema (the demo) can tell it apart from a schema that holds someone else's data.
import type { Pool } from 'pg';
import { ident, withTransaction } from './pg.js';

/** What a schema holds, as far as a claim needs to know. */
export interface SchemaClaim {
  /** True when the schema carries `marker` as its comment (now, or after this call claimed it). */
  readonly claimed: boolean;
  /** The schema's comment found before this call, if any. */
  readonly comment: string | undefined;
  /** Names of the tables, views and sequences it holds (some, not all: for a message). */
  readonly relations: readonly string[];
  /** How many relations it holds. */
  readonly relationCount: number;
}

/**
 * Claims `schema` with `marker` as its comment when it is missing, empty or already carries that
 * comment; otherwise leaves it untouched and answers `claimed: false`. Creating, checking and
 * commenting happen in one transaction under an advisory lock of the schema's name, so two
 * claims cannot both find it empty.
 */
export async function claimSchema(pool: Pool, schema: string, marker: string): Promise<SchemaClaim> {
  const quoted = ident(schema);
  const client = await pool.connect();
  try {
    return await withTransaction(client, async () => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`adops-claim:${schema}`]);
      const { rows } = await client.query<{ comment: string | null; n: number; names: string[] }>(
        `SELECT obj_description(n.oid, 'pg_namespace') AS comment,
                (SELECT count(*)::int FROM pg_class c WHERE c.relnamespace = n.oid) AS n,
                ARRAY(SELECT c.relname::text FROM pg_class c
                       WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p', 'v', 'm')
                       ORDER BY c.relname LIMIT 5) AS names
           FROM pg_namespace n WHERE n.nspname = $1`,
        [schema],
      );
      const found = rows[0];
      const comment = found?.comment ?? undefined;
      const relationCount = found?.n ?? 0;
      const relations = found?.names ?? [];
      if (comment !== marker && relationCount > 0)
        return { claimed: false, comment, relations, relationCount };
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
      // COMMENT takes no parameters; the marker is our own constant, quoted as a literal.
      await client.query(`COMMENT ON SCHEMA ${quoted} IS ${client.escapeLiteral(marker)}`);
      return { claimed: true, comment, relations, relationCount };
    });
  } finally {
    client.release();
  }
}
