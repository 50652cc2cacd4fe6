// `adops migrate --bi-role NAME`: a read-only role given exactly the bi_ views, dim_date and the
// catalogue (nothing that writes, not report_raw), recorded so that views made again keep the grant.
// A role that could still write or read more, through a membership of any kind, is refused.
import type { ClientBase, Pool } from 'pg';
import { TerminalError } from '../platform/retry/errors.js';
import { ident, inTransaction, qualified } from '../platform/pg/handle.js';

/** A role `adops migrate --bi-role` must not take: one that could write, or read more than the grant. */
export class BiRoleError extends TerminalError {
  override name = 'BiRoleError';
}

/** The catalogue tables a dashboard may join for names and attributes. */
const CATALOGUE = ['campaigns', 'creatives', 'campaign_zones', 'campaigns_history', 'creatives_history'];

/** The role names --bi-role takes: an identifier that needs no quoting. */
export const BI_ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Why `role` can never be a dashboard's role of its own (PUBLIC, a keyword, a predefined role), or
 * undefined. Postgres would answer CREATE ROLE for these with an error, or GRANT to them with too much. */
export function reservedBiRole(role: string): string | undefined {
  if (role === 'public')
    return 'public is every role, not one: a grant to it reaches everyone; name a role for dashboards';
  if (['none', 'current_user', 'current_role', 'session_user', 'user'].includes(role))
    return `${role} is a reserved word in Postgres, not a role name; name a role for dashboards`;
  if (role.startsWith('pg_'))
    return (
      `${role} is a Postgres predefined role (pg_write_all_data writes every table, ` +
      'pg_read_all_data reads every one); name a role for dashboards'
    );
  return undefined;
}

/** What setupBiRole did. */
export interface BiRoleResult {
  readonly role: string;
  /** True when the role did not exist and was created (without LOGIN: give it a password to use it). */
  readonly created: boolean;
  /** Relations the role may now SELECT, sorted. */
  readonly granted: readonly string[];
}

/** Makes `role` (created NOLOGIN if absent) read exactly the bi_ views, dim_date and the catalogue,
 * revoking the rest; refuses, changing nothing, a role no REVOKE makes read-only: a superuser, an owner,
 * or one that can write or read more through PUBLIC or a membership. */
export async function setupBiRole(pool: Pool, schema: string, role: string): Promise<BiRoleResult> {
  const name = ident(role);
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query<{ super: boolean }>(
      'SELECT rolsuper AS super FROM pg_roles WHERE rolname = $1',
      [role],
    );
    const created = rows.length === 0;
    if (created) await client.query(`CREATE ROLE ${name} NOLOGIN`);
    if (rows[0]?.super === true)
      throw new BiRoleError(
        `--bi-role ${role}: a superuser can write anything; give dashboards a role of their own`,
      );
    const owner = await ownerReached(client, schema, role);
    if (owner !== undefined) throw new BiRoleError(`--bi-role ${role}: ${owner}; use another role`);
    const s = ident(schema);
    await client.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${s} FROM ${name}`);
    await client.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${s} FROM ${name}`);
    await client.query(`REVOKE CREATE ON SCHEMA ${s} FROM ${name}`);
    await client.query(`GRANT USAGE ON SCHEMA ${s} TO ${name}`);
    const granted = await readable(client, schema, ['dim_date', ...CATALOGUE]);
    for (const relation of granted)
      await client.query(`GRANT SELECT ON ${qualified(schema, relation)} TO ${name}`);
    // Checked after the grants, so what the role holds now is what is judged; a refusal rolls all back.
    const beyond = await beyondGrant(client, schema, role, granted);
    if (beyond !== undefined) throw new BiRoleError(`--bi-role ${role}: ${beyond}`);
    await client.query(
      `INSERT INTO ${qualified(schema, 'dashboard_roles')} (role) VALUES ($1)
           ON CONFLICT (role) DO UPDATE SET granted_at = now()`,
      [role],
    );
    return { role, created, granted: granted.sort() };
  });
}

/** Grants the bi_ views to each setupBiRole role again: a view dropped and made again lost its grants. */
export async function regrantBiViews(client: ClientBase, schema: string): Promise<void> {
  const { rows } = await client.query<{ role: string }>(
    `SELECT d.role FROM ${qualified(schema, 'dashboard_roles')} d JOIN pg_roles r ON r.rolname = d.role ORDER BY 1`,
  );
  if (rows.length === 0) return;
  const views = await readable(client, schema);
  for (const { role } of rows)
    for (const view of views)
      await client.query(`GRANT SELECT ON ${qualified(schema, view)} TO ${ident(role)}`);
}

/** What `adops migrate` prints of a setupBiRole run. */
export function describeBiRole(result: BiRoleResult, schema: string): string[] {
  return [
    ...(result.created
      ? [
          `created role ${result.role} (NOLOGIN): ALTER ROLE ${result.role} LOGIN PASSWORD '...' to connect with it`,
        ]
      : []),
    `granted ${result.role} read-only access to ${schema}: ${result.granted.join(', ')}`,
  ];
}

/** The bi_ views of `schema`, and those of `names` it holds. */
async function readable(
  client: ClientBase,
  schema: string,
  names: readonly string[] = [],
): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND (c.relname = ANY($2) OR (c.relkind = 'v' AND c.relname LIKE 'bi\\_%')) ORDER BY 1`,
    [schema, names],
  );
  return rows.map((r) => r.name);
}

/** The roles `role` is a member of, directly or not, with or without INHERIT (SET ROLE reaches them
 * all), itself included; `reach` counts the roles each of them reaches in turn (1: no memberships). */
const MEMBERSHIPS = `SELECT r.oid, r.rolname, r.rolsuper,
       (SELECT count(*) FROM pg_roles r2 WHERE pg_has_role(r.oid, r2.oid, 'MEMBER')) AS reach
  FROM pg_roles r WHERE pg_has_role($2, r.oid, 'MEMBER')`;

/** How `role` reaches a superuser or the owner of `schema` or of a relation in it (an owner can
 * always grant itself, and a schema's owner can drop what is in it), or undefined. */
async function ownerReached(client: ClientBase, schema: string, role: string): Promise<string | undefined> {
  const { rows } = await client.query<{ holder: string; super: boolean; what: string }>(
    `WITH m AS (${MEMBERSHIPS})
     SELECT m.rolname AS holder, m.rolsuper AS super, '' AS what FROM m WHERE m.rolsuper
     UNION ALL
     SELECT m.rolname, false, 'the schema' FROM pg_namespace n JOIN m ON m.oid = n.nspowner WHERE n.nspname = $1
     UNION ALL
     (SELECT m.rolname, false, 'tables of the schema' FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace JOIN m ON m.oid = c.relowner
       WHERE n.nspname = $1 LIMIT 1)
     ORDER BY 2 DESC LIMIT 1`,
    [schema, role],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  const who = row.holder === role ? 'it' : `it is a member of ${row.holder}, which`;
  if (row.super) return `${who === 'it' ? 'it is' : `${who} is`} a superuser and can write anything`;
  return row.what === 'the schema'
    ? `${who} owns schema ${schema}, so it can always drop or alter what is in it`
    : `${who} owns tables of schema ${schema}, so it can always write them`;
}

/**
 * What `role` can still do in `schema` beyond reading `granted` and the bi_ views: insert, update,
 * delete or truncate a relation, use a sequence, create in the schema, or read anything else, by
 * itself (a PUBLIC grant), through a role it inherits or one it may SET ROLE to (pg_write_all_data,
 * pg_read_all_data included). Undefined when nothing. The role named is the one that holds the
 * privilege most directly; writes are named before reads, report tables before the rest.
 */
async function beyondGrant(
  client: ClientBase,
  schema: string,
  role: string,
  granted: readonly string[],
): Promise<string | undefined> {
  const { rows } = await client.query<{ holder: string; privilege: string; relation: string | null }>(
    `WITH m AS (${MEMBERSHIPS}),
     rel AS (SELECT c.oid, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')),
     p(privilege, rank) AS (VALUES ('INSERT', 1), ('UPDATE', 2), ('DELETE', 3), ('TRUNCATE', 4),
                                   ('USAGE', 5), ('SELECT', 7))
     SELECT * FROM (
     SELECT m.rolname AS holder, lower(p.privilege) AS privilege, rel.relname AS relation, p.rank, m.reach,
            rel.relname LIKE 'report\\_%' AS report, rel.relkind = 'v' AS view
       FROM m CROSS JOIN rel CROSS JOIN p
      WHERE CASE
              WHEN rel.relkind = 'S' THEN p.privilege IN ('USAGE', 'UPDATE')
                   AND has_sequence_privilege(m.oid, rel.oid, p.privilege)
              WHEN p.privilege IN ('DELETE', 'TRUNCATE') THEN has_table_privilege(m.oid, rel.oid, p.privilege)
              WHEN p.privilege = 'USAGE' THEN false
              WHEN p.privilege = 'SELECT' AND (rel.relname = ANY($3) OR (rel.relkind = 'v' AND rel.relname LIKE 'bi\\_%'))
                THEN false
              ELSE has_any_column_privilege(m.oid, rel.oid, p.privilege)
            END
     UNION ALL
     SELECT m.rolname, 'create in', NULL, 6, m.reach, false, false FROM m
      WHERE has_schema_privilege(m.oid, $1, 'CREATE')
     ) v ORDER BY rank, report DESC, view, relation, reach LIMIT 1`,
    [schema, role, granted],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  const verb = row.privilege === 'select' ? 'read' : row.privilege === 'usage' ? 'use' : row.privilege;
  const what = `${verb} ${row.relation ?? `schema ${schema}`}`;
  // Every direct grant was revoked above: what the role holds by itself, PUBLIC gave it.
  if (row.holder === role)
    return `PUBLIC (every role) can ${what}: revoke that from PUBLIC, then run this again`;
  return (
    `it is a member of ${row.holder}, which can ${what}, so no grant makes it read-only; ` +
    'give dashboards a role of their own'
  );
}
