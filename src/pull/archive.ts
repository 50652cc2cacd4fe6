// The raw archive: each pull's response body (secrets already redacted by the API client), gzip-
// compressed, keyed by load_id, beside the digest of the body as received, so a corrected parser can
// re-flatten a period without calling the API (adops replay). A body the API client read whole is
// stored in its report_raw row; one it streamed goes to report_raw_parts as it passes.
import { createHash, type Hash } from 'node:crypto';
import { promisify } from 'node:util';
import { createGzip, gunzip, gzip, gzipSync, type Gzip } from 'node:zlib';
import type { ClientBase, Pool } from 'pg';
import type { ReportBody } from '../api/body.js';
import type { Dimension } from '../platform/config/dimensions.js';
import type { Period } from '../flatten/types.js';
import { qualified, type Warehouse } from '../platform/pg/handle.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** A body ready to archive, compressed off the transaction: whole in `gzip`, or streamed to report_raw_parts (`spoolId`). */
export type PackedBody = {
  /** Size of the stored (redacted) body. */
  readonly bytes: number;
  /** SHA-256 of the stored body, checked when it is read back. */
  readonly sha256: string;
  /** SHA-256 of the body as received: equal to `sha256` unless a secret was redacted from it. */
  readonly receivedSha256: string;
} & (
  | { readonly gzip: Buffer; readonly spoolId?: undefined }
  | { readonly spoolId: number; readonly gzip?: undefined }
);

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

/** Compressed bytes per row of report_raw_parts. */
const PART_BYTES = 1024 * 1024;

/** Compresses a whole body and fingerprints it; `receivedSha256`: the body's as the API sent it. */
export async function packBody(body: Buffer, receivedSha256?: string): Promise<PackedBody> {
  const options = { level: GZIP_LEVEL };
  const sha256 = digest(body);
  return {
    gzip: body.length <= GZIP_INLINE_BYTES ? gzipSync(body, options) : await gzipAsync(body, options),
    bytes: body.length,
    sha256,
    receivedSha256: receivedSha256 ?? sha256,
  };
}

function digest(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

/**
 * A response body on its way to the parser, archived as it passes. `chunks()` gives the body to
 * the parser; `finish()` archives whatever the parser did not read (it stopped on an error) and
 * gives the archived body's fingerprint for report_raw. The body is read once, by whichever of the
 * two is reading. A failure of the source part way leaves the archive holding what came before it.
 */
export class BodyArchive {
  private readonly source: AsyncIterator<Buffer>;
  private readonly held: Buffer[] = [];
  private readonly stored: Hash = createHash('sha256');
  private storedBytes = 0;
  private ended = false;
  private finishing: Promise<PackedBody> | undefined;
  /** The write of the chunk last handed on, compressing while the parser reads it. */
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly body: ReportBody,
    /** Set for a streamed body: its parts are written as they pass. */
    private readonly parts: PartWriter | undefined,
  ) {
    this.source = body[Symbol.asyncIterator]();
  }

  /** The archive of `body`, the account's; a streamed body takes a spool id (Postgres sequence). */
  static async open(wh: Warehouse, account: string, body: ReportBody): Promise<BodyArchive> {
    if (body.whole) return new BodyArchive(body, undefined);
    const { rows } = await wh.pool.query<{ id: string }>('SELECT nextval($1::regclass)::text AS id', [
      qualified(wh.schema, 'report_raw_spool_seq'),
    ]);
    return new BodyArchive(body, new PartWriter(wh.pool, wh.schema, account, Number(rows[0]?.id)));
  }

  /** The API client read the body whole: it is archived in one row. */
  get whole(): boolean {
    return this.parts === undefined;
  }

  /** The body's bytes, archived as they pass. Stopping early leaves the source open for finish(). */
  async *chunks(): AsyncGenerator<Buffer> {
    while (!this.ended) {
      const out = await this.next();
      if (out !== undefined && out.length > 0) yield out;
    }
  }

  /** Archives the rest of the body and ends the archive (once: later calls share the answer). */
  finish(): Promise<PackedBody> {
    this.finishing ??= (async (): Promise<PackedBody> => {
      while (!this.ended) await this.next().catch(() => undefined);
      const receivedSha256 = this.body.receivedSha256;
      if (this.parts === undefined) {
        const whole = this.held.length === 1 ? (this.held[0] as Buffer) : Buffer.concat(this.held);
        return packBody(whole, receivedSha256);
      }
      await this.writing;
      await this.parts.end();
      return {
        spoolId: this.parts.spoolId,
        bytes: this.storedBytes,
        sha256: this.stored.digest('hex'),
        receivedSha256,
      };
    })();
    return this.finishing;
  }

  private async next(): Promise<Buffer | undefined> {
    // One chunk in the archive at a time; a failed write throws once (and again at finish()).
    const writing = this.writing;
    this.writing = Promise.resolve();
    await writing;
    let step: IteratorResult<Buffer>;
    try {
      step = await this.source.next();
    } catch (error) {
      this.ended = true;
      throw error;
    }
    if (step.done === true) {
      this.ended = true;
      return undefined;
    }
    const out = step.value;
    if (this.parts === undefined) this.held.push(out);
    else if (out.length > 0) {
      this.stored.update(out);
      this.storedBytes += out.length;
      // Not awaited: gzip (thread pool) and the part's INSERT run beside the parser; catch marks it handled.
      this.writing = this.parts.write(out);
      this.writing.catch(() => undefined);
    }
    return out;
  }
}

/** A gzip stream written to report_raw_parts a part at a time, on its own connections. */
class PartWriter {
  private readonly gzip: Gzip = createGzip({ level: GZIP_LEVEL });
  private held: Buffer[] = [];
  private heldBytes = 0;
  private part = 0;
  private failed: Error | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly schema: string,
    private readonly account: string,
    readonly spoolId: number,
  ) {
    this.gzip.on('data', (out: Buffer) => {
      this.held.push(out);
      this.heldBytes += out.length;
    });
    this.gzip.on('error', (error: Error) => (this.failed ??= error));
  }

  /**
   * Compresses `chunk`, writing a part whenever a part's worth of output is ready. After a failed
   * write (Postgres gone) it does nothing more: the archive is lost, and a drain of the rest of
   * the body must not wait out a connection timeout per part.
   */
  async write(chunk: Buffer): Promise<void> {
    if (this.failed !== undefined) return;
    await new Promise<void>((resolve) => this.gzip.write(chunk, () => resolve()));
    if (this.failed !== undefined) throw this.failed;
    if (this.heldBytes >= PART_BYTES) await this.flushPart();
  }

  /** Ends the gzip stream and writes what is left; throws if any write failed. */
  async end(): Promise<void> {
    if (this.failed !== undefined) throw this.failed;
    await new Promise<void>((resolve) => {
      this.gzip.once('end', resolve);
      this.gzip.once('error', () => resolve());
      this.gzip.end();
    });
    if (this.failed !== undefined) throw this.failed;
    await this.flushPart();
  }

  private async flushPart(): Promise<void> {
    if (this.heldBytes === 0 && this.part > 0) return;
    const bytes = Buffer.concat(this.held, this.heldBytes);
    this.held = [];
    this.heldBytes = 0;
    try {
      await this.pool.query(
        `INSERT INTO ${qualified(this.schema, 'report_raw_parts')} (account, spool_id, part, gzip) VALUES ($1, $2, $3, $4)`,
        [this.account, this.spoolId, this.part++, bytes],
      );
    } catch (error) {
      this.failed ??= error instanceof Error ? error : new Error(String(error));
      throw error;
    }
  }
}

/** INSERT of the archived body of `loadId`. */
export function archiveBodySql(schema: string, account: string, loadId: number, p: PackedBody) {
  return {
    text: `INSERT INTO ${qualified(schema, 'report_raw')} (account, load_id, body_gzip, spool_id, body_bytes, body_sha256, received_sha256) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    values: [
      account,
      loadId,
      p.gzip ?? null,
      p.spoolId ?? null,
      p.bytes,
      p.sha256,
      p.receivedSha256,
    ] as unknown[],
  };
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
  let gzipped = row.body_gzip;
  if (gzipped === null) {
    // A streamed body: the gzip stream of its parts, in order.
    const parts = await db.query<{ gzip: Buffer }>(
      `SELECT gzip FROM ${qualified(schema, 'report_raw_parts')} WHERE account = $1 AND spool_id = $2 ORDER BY part`,
      [row.account, row.spool_id],
    );
    gzipped = Buffer.concat(parts.rows.map((r) => r.gzip));
  }
  const body = await gunzipAsync(gzipped);
  const sha = digest(body);
  if (sha !== row.body_sha256)
    throw new Error(
      `report_raw body of load ${loadId} is corrupt (sha256 ${sha}, recorded ${row.body_sha256})`,
    );
  return body;
}

/**
 * The SHA-256 of the body (as received) archived with the latest load of a report's period, whatever its status;
 * undefined when that load kept no body (a failed fetch, or pruned) or the period has no load.
 * A malformed body equal to it is the same broken answer twice in a row.
 */
export async function latestBodyDigest(
  wh: Warehouse,
  account: string,
  report: string,
  period: Period,
): Promise<string | undefined> {
  const { rows } = await wh.pool.query<{ received_sha256: string | null }>(
    `SELECT r.received_sha256 FROM ${qualified(wh.schema, 'report_loads')} l
       LEFT JOIN ${qualified(wh.schema, 'report_raw')} r ON r.account = l.account AND r.load_id = l.load_id
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
export async function pruneRaw({ pool, schema }: Warehouse, keepDays: number): Promise<number> {
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

/** The fetch of load `loadId` as replay takes it up again, and its archived body (undefined when not kept); undefined when there is no such load. */
export async function archivedLoad(wh: Warehouse, loadId: number) {
  const { rows } = await wh.pool.query<{
    account: string;
    report: string;
    period_start: string;
    period_end: string;
    dimensions: Dimension[];
    http_attempts: number;
    fetch_ms: number | null;
    fetched_at: Date | null;
    fetch_token: string | null;
    archived_at: Date | null;
  }>(
    `SELECT l.account, l.report, l.period_start::text, l.period_end::text, l.dimensions, l.http_attempts, l.fetch_ms,
            l.fetched_at, l.fetch_token::text, r.archived_at
       FROM ${qualified(wh.schema, 'report_loads')} l
       LEFT JOIN ${qualified(wh.schema, 'report_raw')} r ON r.account = l.account AND r.load_id = l.load_id
      WHERE l.load_id = $1`,
    [loadId],
  );
  const load = rows[0];
  if (load === undefined) return undefined;
  return {
    info: {
      // The replay belongs to the account of the load it re-flattens.
      account: load.account,
      report: { name: load.report, dimensions: load.dimensions },
      period: { start: load.period_start, end: load.period_end },
      // A load without a token (a failed fetch that never took one) counts as older than any.
      fetchToken: load.fetch_token === null ? 0 : Number(load.fetch_token),
      fetchedAt: load.fetched_at ?? load.archived_at ?? new Date(0),
      attempts: load.http_attempts,
      fetchMs: load.fetch_ms ?? 0,
    },
    body: load.archived_at === null ? undefined : await readArchivedBody(wh.pool, wh.schema, loadId),
  };
}
