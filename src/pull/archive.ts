// The raw archive: each pull's body (redacted by the API client), by load_id, with the digest as received, so
// a corrected parser can re-flatten a period without the API (adops replay). A body read whole is stored as it
// is in its report_raw row, compressed by Postgres (lz4: sql/008_raw_body.sql); a streamed one goes to
// report_raw_parts gzipped as it passes.
import { createHash, type Hash } from 'node:crypto';
import { promisify } from 'node:util';
import { createGzip, gunzip, gzip, type Gzip } from 'node:zlib';
import type { ReportBody } from '../api/body.js';
import type { Period } from '../flatten/types.js';
import { execute, firstRow, rowsOf, type Warehouse } from '../platform/pg/handle.js';
import {
  archivedLoadSql,
  insertRawPartSql,
  latestDigestSql,
  nextvalSql,
  pruneRawPartsSql,
  pruneRawSql,
  rawBodySql,
  rawPartsSql,
  type PackedBody,
} from './sql.js';

export type { PackedBody } from './sql.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

// Level 1 is 2.4x faster than the default 6 for a quarter more bytes (0.16 of the body, not 0.13): every
// gzipped body pays the time; the archive is kept only ADOPS_RAW_RETENTION_DAYS.
const GZIP_LEVEL = 1;
// Up to this size (ADOPS_STREAM_BODY_MB's default) a whole body goes to Postgres as it is, which compresses
// it; a bigger one (a raised ADOPS_STREAM_BODY_MB, a replay of a big body) is gzipped in the thread pool,
// so that neither the statement nor the column nears Postgres' 1 GB limit.
const RAW_MAX_BYTES = 8_000_000;

const PART_BYTES = 1024 * 1024; // compressed bytes per row of report_raw_parts

/** A whole body to archive (as it is, or gzipped past RAW_MAX_BYTES), fingerprinted; `receivedSha256`: the
 * body's as the API sent it, which is this body's too when `redacted` is false (not hashed again). */
export async function packBody(body: Buffer, receivedSha256?: string, redacted = true): Promise<PackedBody> {
  const sha256 =
    !redacted && receivedSha256 !== undefined
      ? receivedSha256
      : createHash('sha256').update(body).digest('hex');
  const fingerprint = { bytes: body.length, sha256, receivedSha256: receivedSha256 ?? sha256 };
  if (body.length <= RAW_MAX_BYTES) return { body, ...fingerprint };
  return { gzip: await gzipAsync(body, { level: GZIP_LEVEL }), ...fingerprint };
}

/** A tee of a response body: `chunks()` hands each chunk to the parser and the archive; `finish()` archives
 * what the parser did not read (it stopped on an error) and gives the fingerprint for report_raw.
 * `failedStep`: which side failed, if one did (fetch: the response broke off; or the archive). */
export class BodyArchive {
  failedStep: 'fetch' | 'archive' | undefined;
  private readonly source: AsyncIterator<Buffer>;
  private readonly held: Buffer[] = [];
  private readonly stored: Hash = createHash('sha256');
  private storedBytes = 0;
  private ended = false;
  private finishing: Promise<PackedBody> | undefined;
  private writing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly body: ReportBody,
    private readonly parts: PartWriter | undefined,
  ) {
    this.source = body[Symbol.asyncIterator]();
  }

  /** The archive of `body`; a streamed body takes a spool id (Postgres sequence). */
  static async open(wh: Warehouse, account: string, body: ReportBody): Promise<BodyArchive> {
    if (body.whole) return new BodyArchive(body, undefined);
    const spool = await firstRow(wh, nextvalSql(wh.schema, 'report_raw_spool_seq'));
    return new BodyArchive(body, new PartWriter(wh, account, Number(spool?.id)));
  }

  /** The API client read the body whole: archived in one row. */
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
      // One chunk (a body read whole) is archived as it is, not copied.
      const [only, ...more] = this.held;
      const whole = only !== undefined && more.length === 0 ? only : Buffer.concat(this.held);
      if (this.parts === undefined) return packBody(whole, receivedSha256, this.body.redacted);
      try {
        await this.writing;
        await this.parts.end();
      } catch (error) {
        this.failedStep ??= 'archive';
        throw error;
      }
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
      this.failedStep ??= 'fetch';
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
      this.writing = this.parts.write(out).catch((error: unknown) => {
        this.failedStep ??= 'archive';
        throw error;
      });
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
    private readonly wh: Warehouse,
    private readonly account: string,
    readonly spoolId: number,
  ) {
    this.gzip.on('data', (out: Buffer) => {
      this.held.push(out);
      this.heldBytes += out.length;
    });
    this.gzip.on('error', (error: Error) => (this.failed ??= error));
  }

  /** Compresses `chunk`, writing each part's worth of output. After a failed write (Postgres gone) it does
   * nothing: the archive is lost, and draining the body must not wait out a connection timeout per part. */
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
      await execute(
        this.wh,
        insertRawPartSql(this.wh.schema, this.account, this.spoolId, this.part++, bytes),
      );
    } catch (error) {
      this.failed ??= error instanceof Error ? error : new Error(String(error));
      throw error;
    }
  }
}

/** The archived body of a load, decompressed and checked against its fingerprint; undefined if not kept. */
export async function readArchivedBody(wh: Warehouse, loadId: number): Promise<Buffer | undefined> {
  const row = await firstRow(wh, rawBodySql(wh.schema, loadId));
  if (row === undefined) return undefined;
  // Else gzipped: by a release before sql/008_raw_body.sql, or streamed (the gzip stream of its parts, in order).
  const gzipped =
    row.body === null
      ? (row.body_gzip ??
        Buffer.concat(
          (await rowsOf(wh, rawPartsSql(wh.schema, row.account, row.spool_id))).map((r) => r.gzip),
        ))
      : undefined;
  const body = gzipped === undefined ? (row.body ?? Buffer.alloc(0)) : await gunzipAsync(gzipped);
  const sha = createHash('sha256').update(body).digest('hex');
  if (sha !== row.body_sha256)
    throw new Error(
      `report_raw body of load ${loadId} is corrupt (sha256 ${sha}, recorded ${row.body_sha256})`,
    );
  return body;
}

/** The SHA-256 (as received) of the body of a period's latest load, any status (undefined: none kept). A
 * malformed body equal to it is the same broken answer twice. */
export async function latestBodyDigest(
  wh: Warehouse,
  account: string,
  report: string,
  period: Period,
): Promise<string | undefined> {
  return (
    (await firstRow(wh, latestDigestSql(wh.schema, account, report, period)))?.received_sha256 ?? undefined
  );
}

/** Deletes archived bodies older than `keepDays`, then parts no body names (a worker killed mid-body) as old
 * and at least a day old, so a body still streaming in keeps its parts. Returns the bodies deleted. */
export async function pruneRaw(wh: Warehouse, keepDays: number): Promise<number> {
  if (!Number.isInteger(keepDays) || keepDays < 0)
    throw new Error(`keepDays must be a whole number >= 0, got ${keepDays}`);
  const deleted = await execute(wh, pruneRawSql(wh.schema, keepDays));
  await execute(wh, pruneRawPartsSql(wh.schema, keepDays));
  return deleted;
}

/** Load `loadId`'s fetch as replay takes it up, and its archived body if kept; undefined: no such load. */
export async function archivedLoad(wh: Warehouse, loadId: number) {
  const load = await firstRow(wh, archivedLoadSql(wh.schema, loadId));
  if (load === undefined) return undefined;
  return {
    info: {
      // The replay belongs to the account of the load it re-flattens.
      account: load.account,
      report: { name: load.report, dimensions: load.dimensions },
      // A period of a request of several: the body is the request's, this period's rows are among them.
      period: { start: load.request_start, end: load.request_end },
      periods: [{ start: load.period_start, end: load.period_end }],
      // A load without a token (a failed fetch that never took one) counts as older than any.
      fetchToken: load.fetch_token === null ? 0 : Number(load.fetch_token),
      fetchedAt: load.fetched_at ?? load.archived_at ?? new Date(0),
      attempts: load.http_attempts,
      fetchMs: load.fetch_ms ?? 0,
      provisional: load.provisional,
    },
    body: load.body_load_id === null ? undefined : await readArchivedBody(wh, Number(load.body_load_id)),
  };
}
