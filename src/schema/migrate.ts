// Building a warehouse: the numbered sql/ files applied once each under an advisory lock, then the
// rest of `adops migrate` (report tables, BI views, partitions), and claiming a schema by its comment.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ClientBase, Pool } from 'pg';
import type { Logger } from '../platform/log/logger.js';
import { TerminalError } from '../platform/retry/errors.js';
import { type Warehouse, ident, inTransaction, withTransaction } from '../platform/pg/handle.js';
import type { ReportJob } from '../platform/config/jobs.js';
import { sqlDir } from '../platform/config/files.js';
import { type DailyViewOutcome, type ViewOutcome, ensureDailyViews, ensureViews } from './views.js';
import { type EnsureResult, ensureReportTables } from './report-tables.js';
import { regrantBiViews } from './bi-role.js';
import { describeReportObjects } from './descriptions.js';
import { type PartitionUpkeep, maintainPartitions } from './partitions.js';

const FILE = /^(\d{3,})_([a-z0-9_]+)\.sql$/;

/** Thrown when the migrations on disk and those applied disagree; says how to proceed. */
export class MigrationError extends TerminalError {
  override readonly name = 'MigrationError';
}

/** Refuses a schema of a pre-1.0 build (it recorded sql/001_schema.sql): 1.0 squashed those files
 * into 001_baseline.sql, and nothing was released, so there is no upgrade path. */
function refusePreRelease(schema: string, applied: readonly { version: number; name: string }[]): void {
  const first = applied.find((r) => r.version === 1);
  if (first === undefined || first.name !== 'schema') return;
  throw new MigrationError(
    `schema ${schema} was built by a pre-release build (it recorded sql/001_schema.sql and ${applied.length - 1} more ` +
      'numbered files, which release 1.0 replaced with sql/001_baseline.sql); there is no upgrade from it. ' +
      `Recreate the schema: DROP SCHEMA ${schema} CASCADE (or set ADOPS_SCHEMA to a new one), run adops migrate, ` +
      'then pull the periods again (adops backfill)',
  );
}

export interface MigrateOptions {
  readonly schema: string;
  readonly sqlDir: string;
  readonly logger?: Logger;
  /** Runs under the same advisory lock after the SQL files (creates report_<name> tables). */
  readonly afterMigrations?: (client: ClientBase) => Promise<void>;
}

export interface MigrateResult {
  readonly applied: readonly string[];
  readonly alreadyApplied: number;
}

/** Reads sql/<NNN>_<name>.sql files in version order; refuses duplicate versions and stray names. */
export function readMigrations(dir: string) {
  const migrations = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((file) => {
      const m = FILE.exec(file);
      if (m === null)
        throw new MigrationError(
          `${file}: migration files must be named NNN_name.sql (digits, underscore, lower case name)`,
        );
      const sql = readFileSync(join(dir, file), 'utf8');
      return {
        version: Number(m[1]),
        name: m[2] as string,
        file,
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
      };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((b, i) => {
    const a = migrations[i - 1];
    if (a?.version === b.version)
      throw new MigrationError(
        `${a.file} and ${b.file} share version ${a.version}; give each its own number`,
      );
  });
  return migrations;
}

/** Applies pending migrations in order, each once in its own transaction, under a session advisory lock. */
export async function migrate(pool: Pool, options: MigrateOptions): Promise<MigrateResult> {
  const migrations = readMigrations(options.sqlDir);
  const schema = ident(options.schema);
  const client = await pool.connect();
  const applied: string[] = [];
  let alreadyApplied = 0;
  const lock = [`adops-migrate:${options.schema}`];
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', lock);
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
           version integer PRIMARY KEY,
           name text NOT NULL,
           checksum text NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now()
         )`,
      );
      const { rows } = await client.query<{ version: number; name: string; checksum: string }>(
        `SELECT version, name, checksum FROM ${schema}.schema_migrations ORDER BY version`,
      );
      refusePreRelease(options.schema, rows);
      const done = new Map(rows.map((r) => [r.version, r]));
      for (const m of migrations) {
        const previous = done.get(m.version);
        if (previous !== undefined) {
          if (previous.checksum !== m.checksum) {
            throw new MigrationError(
              `sql/${m.file} was changed after it was applied (checksum ${previous.checksum.slice(0, 12)} applied, ${m.checksum.slice(0, 12)} on disk); ` +
                'never edit an applied migration: restore the file and put the change in a new numbered file',
            );
          }
          alreadyApplied++;
          continue;
        }
        try {
          await withTransaction(client, async () => {
            await client.query(`SET LOCAL search_path TO ${schema}, public`);
            await client.query(m.sql);
            await client.query(
              `INSERT INTO ${schema}.schema_migrations (version, name, checksum) VALUES ($1, $2, $3)`,
              [m.version, m.name, m.checksum],
            );
          });
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          throw new MigrationError(`sql/${m.file} failed and was rolled back: ${reason}`, { cause: error });
        }
        applied.push(m.file);
        options.logger?.info({ migration: m.file }, 'migration applied');
      }
      if (options.afterMigrations !== undefined) await options.afterMigrations(client);
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', lock);
    }
  } finally {
    client.release();
  }
  return { applied, alreadyApplied };
}

export interface SetupResult extends MigrateResult {
  readonly tables: EnsureResult;
  readonly views: readonly ViewOutcome[];
  readonly dailyViews: readonly DailyViewOutcome[];
  readonly partitions: PartitionUpkeep;
}

/** Everything `adops migrate` does, under one advisory lock; the demo, tests and bench build with it too. */
export async function setupWarehouse(
  wh: Warehouse,
  options: {
    readonly reports: readonly ReportJob[];
    /** Whether a new table version switches by itself once it covers the old one (default true). */
    readonly autoSwap?: boolean;
    /** The clock of partitions and retention (tests fix it); default the database's now(). */
    readonly now?: Date;
  },
): Promise<SetupResult> {
  let made: Omit<SetupResult, keyof MigrateResult> | undefined;
  const { schema } = wh;
  const { reports } = options;
  const result = await migrate(wh.pool, {
    schema,
    sqlDir: sqlDir(),
    ...(wh.logger === undefined ? {} : { logger: wh.logger }),
    afterMigrations: async (client) => {
      const tables = await ensureReportTables(client, schema, reports, {
        autoSwap: options.autoSwap ?? true,
      });
      // One transaction: a view made again (or a refused view file's, replaced) is never seen half-done.
      const { views, dailyViews } = await withTransaction(client, async () => {
        const made = await ensureViews(client, schema, reports);
        const daily = await ensureDailyViews(client, schema, reports);
        await describeReportObjects(client, schema, reports);
        await regrantBiViews(client, schema);
        return { views: made, dailyViews: daily };
      });
      const partitions = await maintainPartitions(client, schema, reports, options.now);
      made = { tables, views, dailyViews, partitions };
    },
  });
  if (made === undefined) throw new Error('setupWarehouse: the report tables step did not run');
  return { ...result, ...made };
}

/** Whether the schema carries the marker (now), its comment before, and its relations (a few named). */
export interface SchemaClaim {
  readonly claimed: boolean;
  readonly comment: string | undefined;
  readonly relations: readonly string[];
  readonly relationCount: number;
}

/** Claims the schema with `marker` as its comment when it is missing, empty or already marked, in
 * one locked transaction so two claims cannot both find it empty; else `claimed: false`. */
export async function claimSchema(wh: Warehouse, marker: string): Promise<SchemaClaim> {
  const { pool, schema } = wh;
  const quoted = ident(schema);
  return inTransaction(pool, async (client) => {
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
    if (comment !== marker && relationCount > 0) return { claimed: false, comment, relations, relationCount };
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
    // COMMENT takes no parameters; the marker is our own constant, quoted as a literal.
    await client.query(`COMMENT ON SCHEMA ${quoted} IS ${client.escapeLiteral(marker)}`);
    return { claimed: true, comment, relations, relationCount };
  });
}
