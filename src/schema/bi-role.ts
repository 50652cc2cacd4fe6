// `adops migrate --bi-role NAME`: a read-only role given exactly the bi_ views, dim_date and the catalogue,
// recorded so views made again keep the grant; a role that could write or read more is refused.
import type { ClientBase } from 'pg';
import { type Warehouse, execute, firstRow, inTransaction, rowsOf } from '../platform/pg/handle.js';
import { SchemaRefusal } from './versions.js';
import * as sql from './views-sql.js';

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

export interface BiRoleResult {
  readonly role: string;
  /** True when the role did not exist and was created (without LOGIN: give it a password to use it). */
  readonly created: boolean;
  readonly granted: readonly string[]; // Relations the role may now SELECT, sorted.
}

/** Makes `role` (created NOLOGIN if absent) read exactly the bi_ views, dim_date and the catalogue; refuses
 * (SchemaRefusal) a role no REVOKE makes read-only: a superuser, an owner, or one that reaches more. */
export async function setupBiRole(wh: Warehouse, role: string): Promise<BiRoleResult> {
  const { schema } = wh;
  return inTransaction(wh.pool, async (client) => {
    const found = await firstRow(client, sql.roleOf(role));
    const created = found === undefined;
    if (created) await execute(client, sql.createRole(role));
    if (found?.super === true)
      throw new SchemaRefusal(
        `--bi-role ${role}: a superuser can write anything; give dashboards a role of their own`,
      );
    const owner = await firstRow(client, sql.ownerReached(schema, role));
    if (owner !== undefined)
      throw new SchemaRefusal(`--bi-role ${role}: ${ownerText(owner, schema, role)}; use another role`);
    for (const st of sql.resetRole(schema, role)) await execute(client, st);
    const granted = (await rowsOf(client, sql.readable(schema, ['dim_date', ...CATALOGUE]))).map(
      (r) => r.name,
    );
    for (const relation of granted) await execute(client, sql.grantSelect(schema, relation, role));
    // Checked after the grants, so what the role holds now is what is judged; a refusal rolls all back.
    const beyond = await firstRow(client, sql.beyondGrant(schema, role, granted));
    if (beyond !== undefined)
      throw new SchemaRefusal(`--bi-role ${role}: ${beyondText(beyond, schema, role)}`);
    await execute(client, sql.recordRole(schema, role));
    return { role, created, granted: granted.sort() };
  });
}

/** Grants the bi_ views to each setupBiRole role again: a view dropped and made again lost its grants. */
export async function regrantBiViews(client: ClientBase, wh: Warehouse): Promise<void> {
  const roles = await rowsOf(client, sql.dashboardRoles(wh.schema));
  if (roles.length === 0) return;
  const views = await rowsOf(client, sql.readable(wh.schema));
  for (const { role } of roles)
    for (const view of views) await execute(client, sql.grantSelect(wh.schema, view.name, role));
}

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

/** How `role` reaches a superuser or an owner in `schema` (an owner can grant itself), from ownerReached. */
function ownerText(
  row: { holder: string; super: boolean; what: string },
  schema: string,
  role: string,
): string {
  const who = row.holder === role ? 'it' : `it is a member of ${row.holder}, which`;
  if (row.super) return `${who === 'it' ? 'it is' : `${who} is`} a superuser and can write anything`;
  return row.what === 'the schema'
    ? `${who} owns schema ${schema}, so it can always drop or alter what is in it`
    : `${who} owns tables of schema ${schema}, so it can always write them`;
}

/** What `role` can still do in `schema` beyond reading its grants (beyondGrant's row), and through whom. */
function beyondText(
  row: { holder: string; privilege: string; relation: string | null },
  schema: string,
  role: string,
): string {
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
