// Building a warehouse: the numbered sql/ files, the rest of `adops migrate`, and claiming a schema.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ClientBase, Pool } from 'pg';
import type { Logger } from '../platform/log/logger.js';
import type { Warehouse } from '../platform/pg/handle.js';
import {
  execute,
  firstRow,
  inTransaction,
  rowsOf,
  statement,
  withTransaction,
} from '../platform/pg/handle.js';
import type { ReportJob } from '../platform/config/jobs.js';
import { sqlDir } from '../platform/config/files.js';
import { type DailyViewOutcome, type ViewOutcome, ensureDailyViews, ensureViews } from './views.js';
import { type EnsureResult, ensureReportTables } from './report-tables.js';
import { regrantBiViews } from './bi-role.js';
import { describeReportObjects } from './descriptions.js';
import { type PartitionUpkeep, maintainPartitions } from './partitions.js';
import { SchemaRefusal } from './versions.js';
import { type PacingOutcome, ensurePacingView } from './pacing.js';
import type { PacingSettings } from '../platform/config/env.js';
import * as sql from './sql.js';

const FILE = /^(\d{3,})_([a-z0-9_]+)\.sql$/;

/** Refuses a schema of a pre-1.0 build (it recorded sql/001_schema.sql): 1.0 squashed those files
 * into 001_baseline.sql, and nothing was released, so there is no upgrade path. */
function refusePreRelease(schema: string, applied: readonly { version: number; name: string }[]): void {
  const first = applied.find((r) => r.version === 1);
  if (first === undefined || first.name !== 'schema') return;
  throw new SchemaRefusal(
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
      const [, version, name] = FILE.exec(file) ?? [];
      if (version === undefined || name === undefined)
        throw new SchemaRefusal(
          `${file}: migration files must be named NNN_name.sql (digits, underscore, lower case name)`,
        );
      const text = readFileSync(join(dir, file), 'utf8');
      return {
        version: Number(version),
        name,
        file,
        sql: text,
        checksum: createHash('sha256').update(text).digest('hex'),
      };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((b, i) => {
    const a = migrations[i - 1];
    if (a?.version === b.version)
      throw new SchemaRefusal(`${a.file} and ${b.file} share version ${a.version}; give each its own number`);
  });
  return migrations;
}

/** Applies pending migrations, each once in its own transaction, under a session advisory lock. */
export async function migrate(pool: Pool, options: MigrateOptions): Promise<MigrateResult> {
  const migrations = readMigrations(options.sqlDir);
  const { schema } = options;
  const client = await pool.connect();
  const applied: string[] = [];
  let alreadyApplied = 0;
  const lock = `adops-migrate:${schema}`;
  try {
    await execute(client, sql.lock(lock, 'session'));
    try {
      await execute(client, sql.createSchema(schema));
      await execute(client, sql.createMigrationsTable(schema));
      const rows = await rowsOf(client, sql.appliedMigrations(schema));
      refusePreRelease(schema, rows);
      const done = new Map(rows.map((r) => [r.version, r]));
      for (const m of migrations) {
        const previous = done.get(m.version);
        if (previous !== undefined) {
          if (previous.checksum !== m.checksum) {
            throw new SchemaRefusal(
              `sql/${m.file} was changed after it was applied (checksum ${previous.checksum.slice(0, 12)} applied, ${m.checksum.slice(0, 12)} on disk); ` +
                'never edit an applied migration: restore the file and put the change in a new numbered file',
            );
          }
          alreadyApplied++;
          continue;
        }
        try {
          await withTransaction(client, async () => {
            await execute(client, sql.localSearchPath(schema));
            await execute(client, statement(m.sql));
            await execute(client, sql.recordMigration(schema, m));
          });
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          throw new SchemaRefusal(`sql/${m.file} failed and was rolled back: ${reason}`, { cause: error });
        }
        applied.push(m.file);
        options.logger?.info({ migration: m.file }, 'migration applied');
      }
      if (options.afterMigrations !== undefined) await options.afterMigrations(client);
    } finally {
      await execute(client, sql.lock(lock, 'unlock'));
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
  readonly pacing: PacingOutcome;
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
    readonly pacing?: PacingSettings; // bi_campaign_pacing's report and bands (default: chosen, 0.9 / 1.1).
  },
): Promise<SetupResult> {
  let made: Omit<SetupResult, keyof MigrateResult> | undefined;
  const { reports } = options;
  const result = await migrate(wh.pool, {
    schema: wh.schema,
    sqlDir: sqlDir(),
    ...(wh.logger === undefined ? {} : { logger: wh.logger }),
    afterMigrations: async (client) => {
      const tables = await ensureReportTables(client, wh, reports, { autoSwap: options.autoSwap ?? true });
      // One transaction: a view made again (or a refused view file's, replaced) is never seen half-done.
      const { views, dailyViews, pacing } = await withTransaction(client, async () => {
        const made = await ensureViews(client, wh, reports);
        const daily = await ensureDailyViews(client, wh, reports);
        const paced = await ensurePacingView(client, wh, reports, options.pacing);
        await describeReportObjects(client, wh, reports);
        await regrantBiViews(client, wh);
        return { views: made, dailyViews: daily, pacing: paced };
      });
      const partitions = await maintainPartitions(client, wh, reports, options.now);
      made = { tables, views, dailyViews, partitions, pacing };
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

/** Claims the schema with `marker` if missing, empty or marked, locked so two claims can't both win. */
export async function claimSchema(wh: Warehouse, marker: string): Promise<SchemaClaim> {
  const { schema } = wh;
  return inTransaction(wh.pool, async (client) => {
    await execute(client, sql.lock(`adops-claim:${schema}`));
    const found = await firstRow(client, sql.schemaClaim(schema));
    const comment = found?.comment ?? undefined;
    const relationCount = found?.n ?? 0;
    const relations = found?.names ?? [];
    if (comment !== marker && relationCount > 0) return { claimed: false, comment, relations, relationCount };
    await execute(client, sql.createSchema(schema));
    await execute(client, sql.comment('SCHEMA', schema, schema, marker));
    return { claimed: true, comment, relations, relationCount };
  });
}
