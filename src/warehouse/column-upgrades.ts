// Known retypes of report columns that `adops migrate` performs in place instead of refusing them
// as drift: today only `hour`, text until issue 16 and smallint since. Any other difference between
// a table and its definition is still drift (report-tables.ts), because only these conversions are
// known to keep every row's meaning.
import { escapeIdentifier, type ClientBase } from 'pg';
import { SchemaDriftError } from './errors.js';
import { ident, qualified } from './pg.js';
import type { ColumnSpec, FoundColumn } from './table-spec.js';

/** One in-place column conversion. */
export interface ColumnUpgrade {
  readonly column: string;
  /** Type as format_type() names it, before and after. */
  readonly from: string;
  readonly to: string;
}

const KNOWN_UPGRADES: readonly ColumnUpgrade[] = [{ column: 'hour', from: 'text', to: 'smallint' }];

/** The known upgrades that would turn the found columns into the expected ones. Pure. */
export function pendingUpgrades(
  expected: readonly ColumnSpec[],
  found: readonly FoundColumn[],
): ColumnUpgrade[] {
  return KNOWN_UPGRADES.filter(
    (u) =>
      found.some((f) => f.name === u.column && f.type === u.from) &&
      expected.some((e) => e.name === u.column && e.type === u.to),
  );
}

/** The found columns as they will be once `upgrades` ran: what drift detection compares. Pure. */
export function afterUpgrades(
  found: readonly FoundColumn[],
  upgrades: readonly ColumnUpgrade[],
): FoundColumn[] {
  return found.map((f) => {
    const upgrade = upgrades.find((u) => u.column === f.name);
    return upgrade === undefined ? f : { ...f, type: upgrade.to };
  });
}

/** A view that reads the table, directly or through another view, as it must be re-created. */
export interface DependentView {
  readonly schema: string;
  readonly name: string;
  readonly kind: string;
  readonly definition: string;
  readonly options: string[] | null;
  readonly comment: string | null;
  readonly grants: { grantee: string; privilege: string; grantable: boolean }[];
}

/**
 * Converts the columns inside the caller's transaction. Postgres refuses to retype a column a view
 * reads, so every view over the table (the bi_ view, its daily companion, and views users built on
 * them) is dropped, the column altered, and each view re-created from its own definition, with its
 * options, comment and grants, before the transaction commits: readers never see it missing. A
 * value that does not convert throws SchemaDriftError and, with the caller's rollback, changes nothing.
 */
export async function applyColumnUpgrades(
  client: ClientBase,
  schema: string,
  table: string,
  upgrades: readonly ColumnUpgrade[],
): Promise<void> {
  const target = qualified(schema, table);
  const views = await dependentViews(client, target);
  const materialized = views.filter((v) => v.kind !== 'v');
  if (materialized.length > 0)
    throw new SchemaDriftError(
      `${schema}.${table}: ${upgrades.map((u) => `${u.column} (${u.from} -> ${u.to})`).join(', ')} must be converted, ` +
        `but materialized view ${materialized.map((v) => `${v.schema}.${v.name}`).join(', ')} reads the table. ` +
        'Nothing was changed: drop it, run adops migrate again, then re-create it.',
      `${schema}.${table}`,
      upgrades.map((u) => `column ${u.column} is ${u.from}, expected ${u.to}`),
    );
  for (const view of [...views].reverse()) await client.query(`DROP VIEW ${viewName(view)}`);
  for (const u of upgrades) {
    const column = ident(u.column);
    try {
      await client.query(
        `ALTER TABLE ${target} ALTER COLUMN ${column} TYPE ${u.to} USING ${column}::${u.to}`,
      );
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== '22P02' && code !== '22003') throw error;
      throw new SchemaDriftError(
        `${schema}.${table}.${u.column} holds a value that is not a ${u.to} (${(error as Error).message}), so it cannot ` +
          `become ${u.to}. Nothing was changed: correct or delete those rows, or rename the table away, and run adops migrate again.`,
        `${schema}.${table}`,
        [`column ${u.column} is ${u.from}, expected ${u.to}`],
      );
    }
  }
  for (const view of views) {
    try {
      await recreate(client, view);
    } catch (error) {
      // E.g. a user's view compares hour with a text literal: it no longer fits the new type.
      throw new SchemaDriftError(
        `${schema}.${table}: view ${view.schema}.${view.name} does not fit the converted ` +
          `${upgrades.map((u) => `${u.column} (${u.to})`).join(', ')}: ${(error as Error).message}. ` +
          'Nothing was changed: drop or adapt that view, run adops migrate again, then re-create it.',
        `${schema}.${table}`,
        upgrades.map((u) => `column ${u.column} is ${u.from}, expected ${u.to}`),
      );
    }
  }
}

/** The view's schema-qualified, quoted name. */
export function viewName(view: DependentView): string {
  return `${escapeIdentifier(view.schema)}.${escapeIdentifier(view.name)}`;
}

/** Creates `view` again from its own definition, with its options, comment and grants. */
export async function recreate(client: ClientBase, view: DependentView): Promise<void> {
  const name = viewName(view);
  const options = view.options === null ? '' : ` WITH (${view.options.join(', ')})`;
  await client.query(`CREATE VIEW ${name}${options} AS ${view.definition}`);
  if (view.comment !== null)
    await client.query(`COMMENT ON VIEW ${name} IS ${client.escapeLiteral(view.comment)}`);
  for (const g of view.grants)
    await client.query(
      `GRANT ${g.privilege} ON ${name} TO ${g.grantee === '' ? 'PUBLIC' : escapeIdentifier(g.grantee)}${g.grantable ? ' WITH GRANT OPTION' : ''}`,
    );
}

/**
 * Views reading `table` directly or through other views, in creation order (a view after those it
 * reads). Definitions come from pg_get_viewdef under the current search_path, which also runs them.
 */
export async function dependentViews(client: ClientBase, table: string): Promise<DependentView[]> {
  const { rows } = await client.query<DependentView>(
    `WITH RECURSIVE dependents(oid, depth) AS (
       SELECT r.ev_class, 1
         FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid
        WHERE d.classid = 'pg_rewrite'::regclass AND d.refclassid = 'pg_class'::regclass
          AND d.refobjid = $1::regclass AND r.ev_class <> $1::regclass
       UNION
       SELECT r.ev_class, p.depth + 1
         FROM dependents p
         JOIN pg_depend d ON d.refobjid = p.oid AND d.refclassid = 'pg_class'::regclass
                         AND d.classid = 'pg_rewrite'::regclass
         JOIN pg_rewrite r ON r.oid = d.objid
        WHERE r.ev_class <> p.oid
     )
     SELECT n.nspname AS schema, c.relname AS name, c.relkind::text AS kind,
            pg_get_viewdef(c.oid) AS definition, c.reloptions AS options,
            obj_description(c.oid, 'pg_class') AS comment,
            coalesce((SELECT json_agg(json_build_object(
                        'grantee', CASE WHEN a.grantee = 0 THEN '' ELSE pg_get_userbyid(a.grantee) END,
                        'privilege', a.privilege_type, 'grantable', a.is_grantable))
                        FROM aclexplode(c.relacl) a WHERE a.grantee <> c.relowner), '[]') AS grants
       FROM dependents p JOIN pg_class c ON c.oid = p.oid JOIN pg_namespace n ON n.oid = c.relnamespace
      GROUP BY c.oid, n.nspname, c.relname, c.relkind
      ORDER BY max(p.depth), c.relname`,
    [table],
  );
  return rows;
}
