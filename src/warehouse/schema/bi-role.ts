// `adops migrate --bi-role NAME`: a read-only role given exactly the bi_ views, dim_date and the
// catalogue (nothing that writes, not report_raw), recorded so that views made again keep the grant.
import type { ClientBase, Pool } from 'pg';
import { TerminalError } from '../../retry/errors.js';
import { ident, inTransaction, qualified } from '../pg.js';

/** A role `adops migrate --bi-role` must not touch: a superuser, or the owner of the warehouse's tables. */
export class BiRoleError extends TerminalError {
  override name = 'BiRoleError';
}

/** The catalogue tables a dashboard may join for names and attributes. */
const CATALOGUE = ['campaigns', 'creatives', 'campaign_zones', 'campaigns_history', 'creatives_history'];

/** The role names --bi-role takes: an identifier that needs no quoting. */
export const BI_ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** What setupBiRole did. */
export interface BiRoleResult {
  readonly role: string;
  /** True when the role did not exist and was created (without LOGIN: give it a password to use it). */
  readonly created: boolean;
  /** Relations the role may now SELECT, sorted. */
  readonly granted: readonly string[];
}

/** Makes `role` (created NOLOGIN if absent) read exactly the bi_ views, dim_date and the catalogue,
 * revoking the rest; refuses a superuser or a table owner, whom no REVOKE makes read-only. */
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
    const owns = await client.query(
      `SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 AND pg_get_userbyid(c.relowner) = $2 LIMIT 1`,
      [schema, role],
    );
    if (owns.rows.length > 0)
      throw new BiRoleError(
        `--bi-role ${role}: the role owns tables of schema ${schema}, so it can always write them; use another role`,
      );
    const s = ident(schema);
    await client.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${s} FROM ${name}`);
    await client.query(`REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${s} FROM ${name}`);
    await client.query(`REVOKE CREATE ON SCHEMA ${s} FROM ${name}`);
    await client.query(`GRANT USAGE ON SCHEMA ${s} TO ${name}`);
    const granted = await readable(client, schema, ['dim_date', ...CATALOGUE]);
    for (const relation of granted)
      await client.query(`GRANT SELECT ON ${qualified(schema, relation)} TO ${name}`);
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
