// The statements of the BI views (generated from a report table's columns, pure) and of the BI role.
import { COUNTERS } from '../platform/config/dimensions.js';
import { ident, qualified, reportTable, statement, type Statement } from '../platform/pg/handle.js';

/** The search path of the session (set_config's third argument false): view files name tables unqualified. */
export function searchPath(path?: string): Statement<{ path: string }> {
  return path === undefined
    ? statement('SELECT current_setting($1) AS path', ['search_path'])
    : statement('SELECT set_config($1, $2, false) AS path', ['search_path', path]);
}

export const setSearchPath = (schema: string) => statement(`SET search_path TO ${ident(schema)}, public`);

export const dropView = (view: string, schema?: string) =>
  statement(`DROP VIEW IF EXISTS ${schema === undefined ? ident(view) : qualified(schema, view)}`);

/** The columns of `table` that the view `view` reads (its rule's dependencies, as DROP COLUMN checks them). */
export const columnsRead = (schema: string, view: string, table: string) =>
  statement<{ name: string }>(
    `SELECT DISTINCT a.attname AS name
       FROM pg_rewrite w
       JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid AND d.refclassid = 'pg_class'::regclass
       JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
      WHERE w.ev_class = to_regclass(quote_ident($1) || '.' || quote_ident($2))
        AND d.refobjid = to_regclass(quote_ident($1) || '.' || quote_ident($3))`,
    [schema, view, table],
  );

const NOT_DIMENSIONS: ReadonlySet<string> = new Set([
  'period_start',
  'period_end',
  ...COUNTERS,
  'load_id',
  'loaded_at',
  'account',
]);

export function dimensionsOf(columns: readonly string[]): string[] {
  return columns.filter((c) => !NOT_DIMENSIONS.has(c));
}

/** The BI view of a report with no file in sql/views/, from its table's columns: names joined, two rates. */
export function generatedViewSql(report: string, tableColumns: readonly string[]): string {
  const dims = dimensionsOf(tableColumns);
  // A catalogue attribute of the same name as a dimension (ad_format) gives way to the dimension.
  const attribute = (expr: string, as: string) => (dims.includes(as) ? [] : [expr]);
  const hasCampaign = dims.includes('campaign_id');
  const hasCreative = dims.includes('creative_id');
  const select = [
    'r.account',
    'r.period_start',
    'r.period_end',
    ...dims.map((d) => `r.${ident(d)}`),
    ...(hasCampaign ? ['c.name AS campaign_name', ...attribute('c.ad_format', 'ad_format')] : []),
    ...(hasCreative ? ['k.name AS creative_name', ...attribute('k.ad_type', 'ad_type')] : []),
    ...COUNTERS.map((c) => `r.${ident(c)}`),
    ...Object.entries(RATES).map(
      ([rate, [num, den]]) => `r.${num}::double precision / NULLIF(r.${den}, 0) AS ${rate}`,
    ),
    'r.loaded_at',
    PROVISIONAL,
  ];
  return [
    `-- Generated for report ${report}: it has no file in sql/views/.`,
    `CREATE OR REPLACE VIEW ${ident(`bi_${report}`)} AS`,
    `SELECT\n  ${select.join(',\n  ')}`,
    `FROM ${ident(reportTable(report))} r`,
    ...(hasCampaign
      ? ['LEFT JOIN campaigns c ON c.account = r.account AND c.campaign_id = r.campaign_id']
      : []),
    ...(hasCreative
      ? ['LEFT JOIN creatives k ON k.account = r.account AND k.creative_id = r.creative_id']
      : []),
  ].join('\n');
}

/** A bi_ view's `provisional`: whether the row's load is (sql/006_provisional.sql's index finds them). */
export const PROVISIONAL = 'r.load_id IN (SELECT load_id FROM report_loads WHERE provisional) AS provisional';

/** The rates of the BI views, each a numerator counter over a denominator counter. */
export const RATES: Readonly<Record<string, readonly [numerator: string, denominator: string]>> = {
  fill_rate: ['filled_impressions', 'ad_requests'],
  viewability_rate: ['viewable_impressions', 'measurable_impressions'],
};

/** Columns finer than a day or implied by it (year, month, weekday: join dim_date): the companion drops. */
const TIME_COLUMNS: ReadonlySet<string> = new Set([
  'day',
  'hour',
  'period_start',
  'period_end',
  'year',
  'month',
  'weekday',
]);

const COUNTER_SET: ReadonlySet<string> = new Set(COUNTERS);

export function dailyViewName(report: string): string {
  return `bi_${report}_daily`;
}

/** bi_<name>_daily: bi_<name> summed per day, rates as ratios of the sums (not per-row averages); undefined
 * when rows have no day. */
export function dailyViewSql(
  report: string,
  viewColumns: readonly string[],
  period: 'day' | 'week' | 'month' | undefined,
): string | undefined {
  const has = new Set(viewColumns);
  const day = has.has('day')
    ? 'v.day'
    : period === 'day' && has.has('period_start')
      ? 'v.period_start AS day'
      : undefined;
  if (day === undefined) return undefined;
  const keys = viewColumns.filter(
    (c) =>
      !TIME_COLUMNS.has(c) &&
      !COUNTER_SET.has(c) &&
      !c.endsWith('_rate') &&
      !['loaded_at', 'provisional'].includes(c),
  );
  const counters = COUNTERS.filter((c) => has.has(c));
  const rates = Object.entries(RATES).filter(
    ([rate, [num, den]]) => has.has(rate) && has.has(num) && has.has(den),
  );
  const select = [
    day,
    ...keys.map((k) => `v.${ident(k)}`),
    ...counters.map((c) => `sum(v.${ident(c)})::bigint AS ${ident(c)}`),
    ...rates.map(
      ([rate, [num, den]]) =>
        `sum(v.${ident(num)})::double precision / NULLIF(sum(v.${ident(den)}), 0) AS ${ident(rate)}`,
    ),
    ...(has.has('loaded_at') ? ['max(v.loaded_at) AS loaded_at'] : []),
    ...(has.has('provisional') ? ['bool_or(v.provisional) AS provisional'] : []),
  ];
  const groupBy = [day.replace(/ AS day$/, ''), ...keys.map((k) => `v.${ident(k)}`)];
  return [
    `-- Per-day companion of bi_${report}: counters summed per day, rates as ratios of sums.`,
    `CREATE OR REPLACE VIEW ${ident(dailyViewName(report))} AS`,
    `SELECT\n  ${select.join(',\n  ')}`,
    `FROM ${ident(`bi_${report}`)} v`,
    `GROUP BY ${groupBy.join(', ')}`,
  ].join('\n');
}

/** Whether `role` exists and is a superuser: no row when it does not exist. */
export const roleOf = (role: string) =>
  statement<{ super: boolean }>('SELECT rolsuper AS super FROM pg_roles WHERE rolname = $1', [role]);

export const createRole = (role: string): Statement => statement(`CREATE ROLE ${ident(role)} NOLOGIN`);

/** A read-only role's grants on `schema`: every grant revoked, USAGE given. */
export function resetRole(schema: string, role: string): Statement[] {
  const [s, name] = [ident(schema), ident(role)];
  return [
    `REVOKE ALL ON ALL TABLES IN SCHEMA ${s} FROM ${name}`,
    `REVOKE ALL ON ALL SEQUENCES IN SCHEMA ${s} FROM ${name}`,
    `REVOKE CREATE ON SCHEMA ${s} FROM ${name}`,
    `GRANT USAGE ON SCHEMA ${s} TO ${name}`,
  ].map((text) => statement(text));
}

export const grantSelect = (schema: string, relation: string, role: string) =>
  statement(`GRANT SELECT ON ${qualified(schema, relation)} TO ${ident(role)}`);

/** Records `role` as a dashboard role, so that views made again are granted to it again. */
export const recordRole = (schema: string, role: string) =>
  statement(
    `INSERT INTO ${qualified(schema, 'dashboard_roles')} (role) VALUES ($1)
         ON CONFLICT (role) DO UPDATE SET granted_at = now()`,
    [role],
  );

export const dashboardRoles = (schema: string) =>
  statement<{ role: string }>(
    `SELECT d.role FROM ${qualified(schema, 'dashboard_roles')} d JOIN pg_roles r ON r.rolname = d.role ORDER BY 1`,
  );

/** The bi_ views of `schema`, and those of `names` it holds. */
export const readable = (schema: string, names: readonly string[] = []) =>
  statement<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND (c.relname = ANY($2) OR (c.relkind = 'v' AND c.relname LIKE 'bi\\_%')) ORDER BY 1`,
    [schema, names],
  );

/** The roles `role` ($2) reaches by membership or SET ROLE, itself too; `reach`: how many each reaches */
const MEMBERSHIPS = `SELECT r.oid, r.rolname, r.rolsuper,
       (SELECT count(*) FROM pg_roles r2 WHERE pg_has_role(r.oid, r2.oid, 'MEMBER')) AS reach
  FROM pg_roles r WHERE pg_has_role($2, r.oid, 'MEMBER')`;

/** The first role `role` reaches that is a superuser, or owns `schema` or a relation in it. */
export const ownerReached = (schema: string, role: string) =>
  statement<{ holder: string; super: boolean; what: string }>(
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

/** The privilege `role` holds in `schema` beyond reading `granted` and the bi_ views, most direct first. */
export const beyondGrant = (schema: string, role: string, granted: readonly string[]) =>
  statement<{ holder: string; privilege: string; relation: string | null }>(
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
