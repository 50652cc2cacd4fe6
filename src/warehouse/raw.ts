// The raw archive: each pull's response body, gzip-compressed, in report_raw keyed by load_id,
// so a corrected parser can re-flatten a period without calling the API (adops replay). A body is
// stored with any echo of the API key redacted, beside the digest of the body as received.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gunzip, gzip, gzipSync } from 'node:zlib';
import type { ClientBase, Pool } from 'pg';
import type { Period } from '../flatten/types.js';
import { qualified } from './pg.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/**
 * A body ready to archive: compressed off the transaction, so no lock waits on zlib. A body held
 * whole is stored in its report_raw row (`gzip`); a streamed one is already in report_raw_parts
 * (`spoolId`, see raw-spool.ts).
 */
export type PackedBody = BodyDigest &
  (
    | { readonly gzip: Buffer; readonly spoolId?: undefined }
    | { readonly spoolId: number; readonly gzip?: undefined }
  );

interface BodyDigest {
  /** Size of the stored (redacted) body. */
  readonly bytes: number;
  /** SHA-256 of the stored body, checked when it is read back. */
  readonly sha256: string;
  /** SHA-256 of the body as received: equal to `sha256` unless a secret was redacted from it. */
  readonly receivedSha256: string;
}

/**
 * gzip level of the archive. Level 1 compresses a report body 2.4x faster than the default 6 for
 * about a quarter more bytes (0.16 of the body instead of 0.13): every load pays the time, while
 * the archive is kept only ADOPS_RAW_RETENTION_DAYS.
 */
const GZIP_LEVEL = 1;

/**
 * Bodies up to this size are compressed on the calling thread: about 0.1 ms for a typical report,
 * a third of the CPU a hand-off to the thread pool and back costs. Bigger ones go to the pool,
 * where they compress beside the load instead of blocking it.
 */
const GZIP_INLINE_BYTES = 256 * 1024;

/**
 * Compresses a body to store and fingerprints it. `received` is the body as the API sent it, when
 * it differs from `body` (a secret was redacted from it), for its digest.
 */
export async function packBody(body: Buffer, received: Buffer = body): Promise<PackedBody> {
  const options = { level: GZIP_LEVEL };
  const sha256 = digest(body);
  return {
    gzip: body.length <= GZIP_INLINE_BYTES ? gzipSync(body, options) : await gzipAsync(body, options),
    bytes: body.length,
    sha256,
    receivedSha256: received === body ? sha256 : digest(received),
  };
}

function digest(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

/** INSERT of the archived body of `loadId`. */
export function archiveBodySql(
  schema: string,
  account: string,
  loadId: number,
  packed: PackedBody,
): { text: string; values: unknown[] } {
  return {
    text: `INSERT INTO ${qualified(schema, 'report_raw')} (account, load_id, body_gzip, spool_id, body_bytes, body_sha256, received_sha256) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    values: [
      account,
      loadId,
      packed.gzip ?? null,
      packed.spoolId ?? null,
      packed.bytes,
      packed.sha256,
      packed.receivedSha256,
    ],
  };
}

/** Inserts the archived body of `loadId` (inside the caller's transaction). */
export async function archiveBody(
  client: ClientBase,
  schema: string,
  account: string,
  loadId: number,
  packed: PackedBody,
): Promise<void> {
  await client.query(archiveBodySql(schema, account, loadId, packed));
}

/** The archived body of a load, decompressed and checked against its fingerprint; undefined if not kept. */
export async function readArchivedBody(
  db: Pool | ClientBase,
  schema: string,
  loadId: number,
): Promise<Buffer | undefined> {
  const { rows } = await db.query<{
    body_gzip: Buffer | null;
    spool_id: string | null;
    account: string;
    body_sha256: string;
  }>(
    `SELECT body_gzip, spool_id, account, body_sha256 FROM ${qualified(schema, 'report_raw')} WHERE load_id = $1`,
    [loadId],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  const body = await gunzipAsync(row.body_gzip ?? (await spooledGzip(db, schema, row.account, row.spool_id)));
  const sha = digest(body);
  if (sha !== row.body_sha256)
    throw new Error(
      `report_raw body of load ${loadId} is corrupt (sha256 ${sha}, recorded ${row.body_sha256})`,
    );
  return body;
}

/** The gzip stream of a streamed body: its parts, in order. */
async function spooledGzip(
  db: Pool | ClientBase,
  schema: string,
  account: string,
  spoolId: string | null,
): Promise<Buffer> {
  const { rows } = await db.query<{ gzip: Buffer }>(
    `SELECT gzip FROM ${qualified(schema, 'report_raw_parts')} WHERE account = $1 AND spool_id = $2 ORDER BY part`,
    [account, spoolId],
  );
  return Buffer.concat(rows.map((r) => r.gzip));
}

/**
 * The SHA-256 of the body (as received) archived with the latest load of a report's period, whatever its status;
 * undefined when that load kept no body (a failed fetch, or pruned) or the period has no load.
 * A malformed body equal to it is the same broken answer twice in a row.
 */
export async function latestBodyDigest(
  db: Pool | ClientBase,
  schema: string,
  account: string,
  report: string,
  period: Period,
): Promise<string | undefined> {
  const { rows } = await db.query<{ received_sha256: string | null }>(
    `SELECT r.received_sha256 FROM ${qualified(schema, 'report_loads')} l
       LEFT JOIN ${qualified(schema, 'report_raw')} r ON r.account = l.account AND r.load_id = l.load_id
      WHERE l.account = $4 AND l.report = $1 AND l.period_start = $2 AND l.period_end = $3
      ORDER BY l.load_id DESC LIMIT 1`,
    [report, period.start, period.end, account],
  );
  return rows[0]?.received_sha256 ?? undefined;
}

/**
 * Deletes archived bodies older than `keepDays` days; then the parts no body names any more (of a
 * deleted body, or of a worker killed mid-body) once as old, and at least a day old, so a body
 * still streaming in keeps its parts. Returns how many bodies were deleted.
 */
export async function pruneRaw(pool: Pool, schema: string, keepDays: number): Promise<number> {
  if (!Number.isInteger(keepDays) || keepDays < 0)
    throw new Error(`keepDays must be a whole number >= 0, got ${keepDays}`);
  const raw = qualified(schema, 'report_raw');
  const result = await pool.query(
    `DELETE FROM ${raw} WHERE archived_at < now() - make_interval(days => $1)`,
    [keepDays],
  );
  await pool.query(
    `DELETE FROM ${qualified(schema, 'report_raw_parts')} p
      WHERE p.written_at < now() - make_interval(days => greatest($1::int, 1))
        AND NOT EXISTS (SELECT 1 FROM ${raw} r WHERE r.account = p.account AND r.spool_id = p.spool_id)`,
    [keepDays],
  );
  return result.rowCount ?? 0;
}
