// The catalogue's statements: sync runs, their staged pages, and the one-transaction write. Pure builders.
import { ident, qualified, statement } from '../platform/pg/handle.js';
import { type Column, type EntitySyncResult, type ProblemSummary, storableJson } from './stored-rows.js';
import type { StagedPage, SyncProgress } from './checkpoint.js';

/** Seconds of `$n` ms ago, by the database's clock. */
const ago = (n: number) => `now() - make_interval(secs => $${n}::double precision / 1000)`;

/** Drops the runs (but `runId`) still running whose last sign of life is older than `staleAfterMs`. */
export const dropAbandonedRuns = (schema: string, runId: string, staleAfterMs: number) =>
  statement(
    `DELETE FROM ${qualified(schema, 'entity_sync_runs')} WHERE status = 'running' AND updated_at < ${ago(2)} AND run_id <> $1`,
    [runId, staleAfterMs],
  );

export const dropOldRuns = (schema: string, kept: number) => {
  const runs = qualified(schema, 'entity_sync_runs');
  return statement(
    `DELETE FROM ${runs} WHERE status <> 'running' AND run_id NOT IN (
       SELECT run_id FROM ${runs} WHERE status <> 'running' ORDER BY started_at DESC LIMIT $1)`,
    [kept],
  );
};

/** Locks run `runId`: its status, tries, result, and whether it started longer than `staleAfterMs` ago. */
export const lockRun = (schema: string, runId: string, staleAfterMs: number) =>
  statement<{ status: string; tries: number; stale: boolean; result: EntitySyncResult }>(
    `SELECT status, tries, started_at < ${ago(2)} AS stale, result FROM ${qualified(schema, 'entity_sync_runs')}
      WHERE run_id = $1 FOR UPDATE`,
    [runId, staleAfterMs],
  );

export const insertRun = (schema: string, runId: string, account: string) =>
  statement(`INSERT INTO ${qualified(schema, 'entity_sync_runs')} (run_id, account) VALUES ($1, $2)`, [
    runId,
    account,
  ]);

/** Sets `set` on run `runId` ($1; values from $2), dropping its staged pages unless it is only resumed. */
const updateRun = (schema: string, set: string, values: readonly unknown[], dropPages = true) =>
  statement(
    (dropPages
      ? `WITH gone AS (DELETE FROM ${qualified(schema, 'entity_sync_pages')} WHERE run_id = $1) `
      : '') +
      `UPDATE ${qualified(schema, 'entity_sync_runs')} SET ${set}, updated_at = now() WHERE run_id = $1`,
    values,
  );

/** Starts run `runId` again from nothing: its pages dropped, its counts reset, one more try. */
export const restartRun = (schema: string, runId: string) =>
  updateRun(
    schema,
    `status = 'running', started_at = now(), finished_at = NULL, tries = tries + 1, requests = 0,
     campaigns_done = 0, campaigns_total = NULL, error = NULL`,
    [runId],
  );

export const resumeRun = (schema: string, runId: string) =>
  updateRun(schema, 'tries = tries + 1', [runId], false);

export const finishRun = (schema: string, runId: string, result: object, problems: ProblemSummary) =>
  updateRun(
    schema,
    "status = 'written', finished_at = now(), result = $2, problem_count = $3, problems = $4, error = NULL",
    [runId, JSON.stringify(result), problems.count, JSON.stringify(problems)],
  );

export const failRun = (schema: string, runId: string, reason: string) =>
  updateRun(schema, "status = 'failed', finished_at = now(), error = $2", [runId, reason]);

/** Stages `pages` of run `runId` in one statement; items jsonb cannot hold as text go as a JSON string. */
export const stagePages = (
  schema: string,
  runId: string,
  pages: readonly StagedPage[],
  progress: Pick<SyncProgress, 'requests' | 'campaignsDone' | 'campaignsTotal'>,
) => {
  const rows = pages.map(({ offset, items, ...p }) => ({
    ...p,
    page_offset: offset,
    items: storableJson(items) === items ? items : JSON.stringify(items),
  }));
  return statement(
    `WITH staged AS (
       INSERT INTO ${qualified(schema, 'entity_sync_pages')} (run_id, listing, page_offset, items, size, last, gone)
       SELECT $1, listing, page_offset, items, size, last, gone
         FROM jsonb_to_recordset($2::jsonb)
           AS r(listing bigint, page_offset integer, items jsonb, size integer, last boolean, gone boolean)
       ON CONFLICT (run_id, listing, page_offset) DO UPDATE
         SET items = EXCLUDED.items, size = EXCLUDED.size, last = EXCLUDED.last, gone = EXCLUDED.gone
     )
     UPDATE ${qualified(schema, 'entity_sync_runs')}
        SET updated_at = now(), requests = $3, campaigns_done = $4, campaigns_total = $5
      WHERE run_id = $1`,
    [runId, JSON.stringify(rows), progress.requests, progress.campaignsDone, progress.campaignsTotal],
  );
};

/** Every page staged for run `runId`, in order (listing as float8: pg hands bigint over as text). */
export const stagedPages = (schema: string, runId: string) =>
  statement<Omit<StagedPage, 'items'> & { items: readonly unknown[] | string }>(
    `SELECT listing::float8 AS listing, page_offset AS "offset", items, size, last, gone
       FROM ${qualified(schema, 'entity_sync_pages')} WHERE run_id = $1 ORDER BY listing, page_offset`,
    [runId],
  );

export interface RunRow {
  readonly runId: string;
  readonly status: string;
  readonly started_at: Date;
  readonly updated_at: Date;
  readonly finished_at: Date | null;
  readonly tries: number;
  readonly requests: number;
  readonly campaignsDone: number;
  readonly campaignsTotal: number | null;
  readonly result: Record<string, number> | null;
  readonly problems: ProblemSummary | null;
  readonly error: string | null;
  readonly quiet: boolean; // No sign of life for `quietAfterMs`.
}

/** The newest written run, then the newest run of all. */
export const newestRuns = (schema: string, quietAfterMs: number) => {
  const runs = qualified(schema, 'entity_sync_runs');
  const columns = `run_id AS "runId", status, started_at, updated_at, finished_at, tries, requests::float8,
    campaigns_done AS "campaignsDone", campaigns_total AS "campaignsTotal", result, problems, error,
    updated_at < ${ago(1)} AS quiet`;
  return statement<RunRow>(
    `(SELECT ${columns} FROM ${runs} WHERE status = 'written' ORDER BY finished_at DESC LIMIT 1)
     UNION ALL
     (SELECT ${columns} FROM ${runs} ORDER BY started_at DESC LIMIT 1)`,
    [quietAfterMs],
  );
};

/** An entity table (its history is <table>_history): its key, its columns and the fields a new version tracks. */
export interface EntityTable {
  readonly table: 'campaigns' | 'creatives';
  readonly key: 'campaign_id' | 'creative_id';
  readonly columns: readonly Column[];
  /** Columns whose change makes a new history version (identifiers, not user input). */
  readonly tracked: readonly string[];
}

/** The opening of a catalogue write: a longer statement limit, and the lock that serialises an account's syncs. */
export const openWrite = (schema: string, account: string) => [
  statement('SET LOCAL statement_timeout = 300000'),
  statement('SELECT pg_advisory_xact_lock(hashtext($1))', [`adops-entities:${schema}:${account}`]),
];

/** How many of `ids` are soft-deleted now (the upserts are about to revive them). */
export const countDeleted = (
  schema: string,
  account: string,
  t: Pick<EntityTable, 'table' | 'key'>,
  ids: readonly number[],
) =>
  statement<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${qualified(schema, t.table)} t
       JOIN unnest($1::bigint[]) AS seen(id) ON t.${ident(t.key)} = seen.id
      WHERE t.account = $2 AND t.deleted_at IS NOT NULL`,
    [ids, account],
  );

/** Upserts `rows` from one jsonb parameter, reviving soft-deleted ones; one sync stamps one synced_at. */
export function upsertStatement(
  schema: string,
  account: string,
  t: Pick<EntityTable, 'table' | 'key' | 'columns'>,
  rows: readonly object[],
) {
  const names = t.columns.map((c) => ident(c.name));
  const recordType = t.columns.map((c) => `${ident(c.name)} ${c.type}`).join(', ');
  const updates = t.columns
    .filter((c) => c.name !== t.key)
    .map((c) => `${ident(c.name)} = EXCLUDED.${ident(c.name)}`);
  return statement(
    `INSERT INTO ${qualified(schema, t.table)} (account, ${names.join(', ')}, synced_at, deleted_at) ` +
      `SELECT $2::text, ${names.join(', ')}, now(), NULL FROM jsonb_to_recordset($1::jsonb) AS r(${recordType}) ` +
      `ON CONFLICT (account, ${ident(t.key)}) DO UPDATE SET ${updates.join(', ')}, ` +
      'synced_at = EXCLUDED.synced_at, deleted_at = NULL',
    [JSON.stringify(rows), account],
  );
}

/** Soft-deletes live rows this transaction did not stamp: linear; `NOT (id = ANY($1))` was quadratic. */
export const softDeleteStatement = (schema: string, account: string, t: Pick<EntityTable, 'table'>) =>
  statement(
    `UPDATE ${qualified(schema, t.table)} SET deleted_at = now() ` +
      'WHERE account = $1 AND deleted_at IS NULL AND synced_at <> now()',
    [account],
  );

/** Drops the zones of the campaigns `ids`: a join, as `= ANY($1)` per row is quadratic. */
export const deleteZones = (schema: string, account: string, ids: readonly number[]) =>
  statement(
    `DELETE FROM ${qualified(schema, 'campaign_zones')} z USING unnest($1::bigint[]) AS seen(id)
      WHERE z.account = $2 AND z.campaign_id = seen.id`,
    [ids, account],
  );

export const insertZones = (
  schema: string,
  account: string,
  pairs: ReadonlyArray<readonly [number, number]>,
) =>
  statement(
    `INSERT INTO ${qualified(schema, 'campaign_zones')} (account, campaign_id, zone_id)
     SELECT $3::text, p.c, p.z FROM unnest($1::bigint[], $2::bigint[]) AS p(c, z)`,
    [pairs.map((p) => p[0]), pairs.map((p) => p[1]), account],
  );

/** SCD type 2 history, after upserts and soft deletes: changed versions closed at now(), new ones opened. */
export function historyStatements(schema: string, account: string, t: EntityTable) {
  const history = qualified(schema, `${t.table}_history`);
  const entities = qualified(schema, t.table);
  const tracked = (alias: string) => t.tracked.map((c) => `${alias}.${c}`).join(', ');
  return [
    statement(
      `UPDATE ${history} h SET valid_to = now() FROM ${entities} e ` +
        `WHERE e.account = $1 AND h.account = e.account AND h.${t.key} = e.${t.key} AND h.valid_to IS NULL ` +
        `AND (${tracked('h')}, h.deleted) IS DISTINCT FROM (${tracked('e')}, e.deleted_at IS NOT NULL)`,
      [account],
    ),
    statement(
      `INSERT INTO ${history} (account, ${t.key}, ${t.tracked.join(', ')}, deleted, valid_from) ` +
        `SELECT e.account, e.${t.key}, ${tracked('e')}, e.deleted_at IS NOT NULL, ` +
        `CASE WHEN EXISTS (SELECT 1 FROM ${history} p WHERE p.account = e.account AND p.${t.key} = e.${t.key}) THEN now() ` +
        `ELSE least(coalesce(e.created, now()), now()) END ` +
        `FROM ${entities} e ` +
        `WHERE e.account = $1 AND NOT EXISTS (SELECT 1 FROM ${history} c WHERE c.account = e.account AND c.${t.key} = e.${t.key} AND c.valid_to IS NULL)`,
      [account],
    ),
  ];
}
