// `adops accounts rename FROM TO`: every row of one account (report rows of every table version,
// totals, loads, raw responses, catalogue and its history, freshness and webhook state) moved to a
// new name in one transaction. The tables are found by their `account` column, so a table added
// later moves too. When TO already holds rows, --merge keeps TO's wherever both hold the same thing.
import type { ClientBase } from 'pg';
import { TerminalError } from '../platform/retry/errors.js';
import { ident, inTransaction, qualified, sqlState, type Warehouse } from '../platform/pg/handle.js';

/** A rename that cannot be done as asked; nothing was changed. */
export class AccountRenameError extends TerminalError {
  override name = 'AccountRenameError';
}

/** What renameAccount did: rows per table. */
export interface RenameResult {
  readonly from: string;
  readonly to: string;
  /** Rows moved from `from` to `to`, per table (tables with none left out). */
  readonly moved: Readonly<Record<string, number>>;
  /** With merge: `from`'s rows dropped because `to` held the same period or key, per table. */
  readonly dropped: Readonly<Record<string, number>>;
  /** With merge: `from`'s loaded periods `to` had loaded too, now superseded (their rows dropped). */
  readonly superseded: number;
}

/** How long the rename waits for a running load or sync to let go of a table. */
const LOCK_TIMEOUT = '10s';

/**
 * Moves every row of account `from` to `to`, in one transaction (readers see the old names until it
 * commits). Refuses when `from` holds nothing, and when `to` holds rows unless `merge`: then, where both
 * loaded a period of a report, `to`'s rows and totals stay and `from`'s load is kept as superseded;
 * where both hold a catalogue entry (or any other keyed row), `to`'s stays.
 */
export async function renameAccount(
  wh: Warehouse,
  from: string,
  to: string,
  opts: { merge: boolean },
): Promise<RenameResult> {
  return inTransaction(wh.pool, async (client) => {
    const tables = await accountTables(client, wh.schema);
    await client.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
    try {
      // Loads and syncs write these tables: they wait for the rename, and never see half of it.
      await client.query(
        `LOCK TABLE ${tables.map((t) => qualified(wh.schema, t.name)).join(', ')} IN EXCLUSIVE MODE`,
      );
    } catch (error) {
      if (sqlState(error) !== '55P03') throw error;
      throw new AccountRenameError(
        `the warehouse's tables stayed busy for ${LOCK_TIMEOUT} (a worker loading or syncing): ` +
          'stop the workers, then run the rename again',
        { cause: error },
      );
    }
    const held = await holdings(client, wh.schema, tables);
    const fromHolds = held.get(from);
    if (fromHolds === undefined) {
      const others = [...held.keys()].sort().join(', ') || 'none';
      throw new AccountRenameError(
        `account ${from} holds no rows in schema ${wh.schema}: nothing to rename (accounts holding rows: ${others})`,
      );
    }
    const toHolds = held.get(to);
    let dropped: Record<string, number> = {};
    let superseded = 0;
    if (toHolds !== undefined) {
      if (!opts.merge)
        throw new AccountRenameError(
          `account ${to} already holds rows (${summarize(toHolds)}): renaming ${from} to it would add ` +
            `${from}'s rows beside them; if both names are the same server, run again with --merge ` +
            `(where both hold a report period or a catalogue entry, ${to}'s is kept and ${from}'s dropped)`,
        );
      ({ dropped, superseded } = await dropOverlap(client, wh.schema, tables, from, to));
    }
    const moved = await moveAll(client, wh.schema, tables, from, to);
    return { from, to, moved, dropped, superseded };
  });
}

/** A table of the schema with an account column: its name and the columns that matter here. */
interface AccountTable {
  readonly name: string;
  /** Holds report rows, one load's per period (load_id and period_start columns). */
  readonly reportRows: boolean;
  /** Its unique keys that include account: the other plain columns of each. */
  readonly keys: readonly (readonly string[])[];
}

/** Every table (not partition: a parent moves its partitions' rows) of `schema` with an account column. */
async function accountTables(client: ClientBase, schema: string): Promise<AccountTable[]> {
  const { rows } = await client.query<{ name: string; columns: string[]; keys: string[][] | null }>(
    `SELECT c.relname AS name,
            (SELECT array_agg(a.attname::text) FROM pg_attribute a
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
            (SELECT json_agg((SELECT coalesce(array_agg(a.attname::text ORDER BY a.attnum), '{}')
                               FROM pg_attribute a
                              WHERE a.attrelid = c.oid AND a.attnum = ANY(i.indkey) AND a.attname <> 'account'))
               FROM pg_index i
              WHERE i.indrelid = c.oid AND i.indisunique
                AND (SELECT attnum FROM pg_attribute WHERE attrelid = c.oid AND attname = 'account') = ANY(i.indkey)
            ) AS keys
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'account'
                       AND NOT a.attisdropped)
      ORDER BY 1`,
    [schema],
  );
  return rows.map((r) => ({
    name: r.name,
    reportRows:
      r.columns.includes('load_id') &&
      r.columns.includes('period_start') &&
      !['report_loads', 'report_totals'].includes(r.name),
    keys: r.keys ?? [],
  }));
}

/** Rows per account and table, for every account holding any. */
async function holdings(
  client: ClientBase,
  schema: string,
  tables: readonly AccountTable[],
): Promise<Map<string, Map<string, number>>> {
  const { rows } = await client.query<{ account: string; name: string; n: number }>(
    tables
      .map(
        (t, i) =>
          `SELECT account, $${i + 1}::text AS name, count(*)::int AS n FROM ${qualified(schema, t.name)} GROUP BY account`,
      )
      .join(' UNION ALL '),
    tables.map((t) => t.name),
  );
  const out = new Map<string, Map<string, number>>();
  for (const r of rows) {
    const mine = out.get(r.account) ?? new Map<string, number>();
    mine.set(r.name, r.n);
    out.set(r.account, mine);
  }
  return out;
}

/** `report_loads: 2, campaigns: 6, ...`: loads and the catalogue first, then the rest by count. */
function summarize(held: ReadonlyMap<string, number>): string {
  const first = ['report_loads', 'campaigns', 'creatives'];
  const rank = (t: string) => (first.includes(t) ? first.indexOf(t) : first.length);
  const sorted = [...held].sort((a, b) => rank(a[0]) - rank(b[0]) || b[1] - a[1] || a[0].localeCompare(b[0]));
  const shown = sorted.slice(0, 5).map(([t, n]) => `${t}: ${n}`);
  return sorted.length > 5 ? `${shown.join(', ')}, ...` : shown.join(', ');
}

/** --merge's first step: `from`'s loaded periods that `to` loaded too are superseded and their rows
 * dropped; then every other row of `from` whose unique key `to` holds (a campaign, its history, a
 * freshness state) is dropped, so the move that follows collides with nothing. */
async function dropOverlap(
  client: ClientBase,
  schema: string,
  tables: readonly AccountTable[],
  from: string,
  to: string,
): Promise<{ dropped: Record<string, number>; superseded: number }> {
  const loads = qualified(schema, 'report_loads');
  const lost = await client.query<{ load_id: string }>(
    `UPDATE ${loads} f SET status = 'superseded'
      WHERE f.account = $1 AND f.status = 'loaded'
        AND EXISTS (SELECT 1 FROM ${loads} t
                     WHERE t.account = $2 AND t.status = 'loaded' AND t.report = f.report
                       AND t.period_start <= f.period_end AND t.period_end >= f.period_start)
      RETURNING f.load_id`,
    [from, to],
  );
  const ids = lost.rows.map((r) => r.load_id);
  const dropped: Record<string, number> = {};
  const count = (table: string, n: number | null) => {
    if (n !== null && n > 0) dropped[table] = (dropped[table] ?? 0) + n;
  };
  for (const t of tables) {
    const target = qualified(schema, t.name);
    if ((t.reportRows || t.name === 'report_totals') && ids.length > 0)
      count(
        t.name,
        (
          await client.query(`DELETE FROM ${target} WHERE account = $1 AND load_id = ANY($2::bigint[])`, [
            from,
            ids,
          ])
        ).rowCount,
      );
    // A report table's keys all hold the period: with the overlapping periods gone, none collide.
    if (t.reportRows) continue;
    for (const key of t.keys) {
      // The key's predicate (a partial index) is left out: a wider match drops more of from's, never less.
      const same = key.map((c) => `o.${ident(c)} = f.${ident(c)}`);
      count(
        t.name,
        (
          await client.query(
            `DELETE FROM ${target} f WHERE f.account = $1
                AND EXISTS (SELECT 1 FROM ${target} o WHERE ${['o.account = $2', ...same].join(' AND ')})`,
            [from, to],
          )
        ).rowCount,
      );
    }
  }
  return { dropped, superseded: ids.length };
}

/** Moves every row of `from` to `to` in one statement: the foreign keys between these tables (loads and
 * their raw bodies and totals, campaigns and their zones) are checked at its end, when both sides moved. */
async function moveAll(
  client: ClientBase,
  schema: string,
  tables: readonly AccountTable[],
  from: string,
  to: string,
): Promise<Record<string, number>> {
  const steps = tables.map(
    (t, i) =>
      `m${i} AS (UPDATE ${qualified(schema, t.name)} SET account = $2 WHERE account = $1 RETURNING 1)`,
  );
  const counts = tables.map((_, i) => `(SELECT count(*) FROM m${i})::int AS m${i}`);
  const { rows } = await client.query<Record<string, number>>(
    `WITH ${steps.join(', ')} SELECT ${counts.join(', ')}`,
    [from, to],
  );
  const moved: Record<string, number> = {};
  tables.forEach((t, i) => {
    const n = rows[0]?.[`m${i}`] ?? 0;
    if (n > 0) moved[t.name] = n;
  });
  return moved;
}
