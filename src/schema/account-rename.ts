// `adops accounts rename FROM TO`: an account's rows renamed in one transaction (tables found by `account`).
import type { ClientBase } from 'pg';
import { execute, firstRow, inTransaction, rowsOf, sqlState, type Warehouse } from '../platform/pg/handle.js';
import { SchemaRefusal } from './versions.js';
import * as sql from './sql.js';

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

const LOCK_TIMEOUT = '10s'; // How long the rename waits for a running load or sync to let go of a table.

/** Moves `from`'s rows to `to` in one transaction; refuses an empty `from`, or a used `to` unless `merge`. */
export async function renameAccount(
  wh: Warehouse,
  from: string,
  to: string,
  opts: { merge: boolean },
): Promise<RenameResult> {
  return inTransaction(wh.pool, async (client) => {
    const tables = (await rowsOf(client, sql.accountTables(wh.schema))).map((r): AccountTable => ({
      name: r.name,
      reportRows:
        r.columns.includes('load_id') &&
        r.columns.includes('period_start') &&
        !['report_loads', 'report_totals'].includes(r.name),
      keys: r.keys ?? [],
    }));
    const names = tables.map((t) => t.name);
    const [timeout, lock] = sql.lockTables(wh.schema, names, LOCK_TIMEOUT);
    await execute(client, timeout);
    try {
      // Loads and syncs write these tables: they wait for the rename, and never see half of it.
      await execute(client, lock);
    } catch (error) {
      if (sqlState(error) !== '55P03') throw error;
      throw new SchemaRefusal(
        `the warehouse's tables stayed busy for ${LOCK_TIMEOUT} (a worker loading or syncing): ` +
          'stop the workers, then run the rename again',
        { cause: error },
      );
    }
    const held = await holdings(client, wh, names);
    const fromHolds = held.get(from);
    if (fromHolds === undefined) {
      const others = [...held.keys()].sort().join(', ') || 'none';
      throw new SchemaRefusal(
        `account ${from} holds no rows in schema ${wh.schema}: nothing to rename (accounts holding rows: ${others})`,
      );
    }
    const toHolds = held.get(to);
    let dropped: Record<string, number> = {};
    let superseded = 0;
    if (toHolds !== undefined) {
      if (!opts.merge)
        throw new SchemaRefusal(
          `account ${to} already holds rows (${summarize(toHolds)}): renaming ${from} to it would add ` +
            `${from}'s rows beside them; if both names are the same server, run again with --merge ` +
            `(where both hold a report period or a catalogue entry, ${to}'s is kept and ${from}'s dropped)`,
        );
      ({ dropped, superseded } = await dropOverlap(client, wh, tables, from, to));
    }
    const counts = (await firstRow(client, sql.moveAccount(wh.schema, names, from, to))) ?? {};
    const moved: Record<string, number> = {};
    names.forEach((t, i) => {
      const n = counts[`m${i}`] ?? 0;
      if (n > 0) moved[t] = n;
    });
    return { from, to, moved, dropped, superseded };
  });
}

interface AccountTable {
  readonly name: string;
  /** Holds report rows, one load's per period (load_id and period_start columns). */
  readonly reportRows: boolean;
  /** Its unique keys that include account: the other plain columns of each. */
  readonly keys: readonly (readonly string[])[];
}

async function holdings(client: ClientBase, wh: Warehouse, tables: readonly string[]) {
  const out = new Map<string, Map<string, number>>();
  for (const r of await rowsOf(client, sql.holdings(wh.schema, tables))) {
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

/** --merge's first step: drops `from`'s periods and keyed rows `to` also holds. */
async function dropOverlap(
  client: ClientBase,
  wh: Warehouse,
  tables: readonly AccountTable[],
  from: string,
  to: string,
): Promise<{ dropped: Record<string, number>; superseded: number }> {
  const ids = (await rowsOf(client, sql.supersedeOverlap(wh.schema, from, to))).map((r) => r.load_id);
  const dropped: Record<string, number> = {};
  const count = (table: string, n: number) => {
    if (n > 0) dropped[table] = (dropped[table] ?? 0) + n;
  };
  for (const t of tables) {
    if ((t.reportRows || t.name === 'report_totals') && ids.length > 0)
      count(t.name, await execute(client, sql.deleteLoads(wh.schema, t.name, from, ids)));
    // A report table's keys all hold the period: with the overlapping periods gone, none collide.
    if (t.reportRows) continue;
    // The key's predicate (a partial index) is left out: a wider match drops more of from's, never less.
    for (const key of t.keys)
      count(t.name, await execute(client, sql.deleteKeyOverlap(wh.schema, t.name, key, from, to)));
  }
  return { dropped, superseded: ids.length };
}
