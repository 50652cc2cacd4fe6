// The archive of a body that is loaded while it streams in: each chunk is hashed as received,
// redacted, hashed as stored, gzip-compressed and written to report_raw_parts as it passes, on
// its own connection and outside the load's transaction, so a load that fails keeps its body.
import { createHash, type Hash } from 'node:crypto';
import { createGzip, type Gzip } from 'node:zlib';
import type { Pool } from 'pg';
import { ChunkRedactor } from '../log/redact.js';
import { qualified } from './pg.js';
import type { PackedBody } from './raw.js';

/** Compressed bytes per row of report_raw_parts. */
const PART_BYTES = 1024 * 1024;

/** gzip level of the archive, as for a whole body (raw.ts). */
const GZIP_LEVEL = 1;

/** A gzip stream written to report_raw_parts a part at a time. */
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
    if (chunk.length === 0 || this.failed !== undefined) return;
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
      this.failed ??= error as Error;
      throw error;
    }
  }
}

/**
 * A response body on its way to the loader. `chunks()` gives the body (secrets redacted) to the
 * parser while archiving it; `finish()` archives whatever the parser did not read (it stopped on
 * an error) and gives the archived body's fingerprint for report_raw. The source is read once,
 * by whichever of the two is reading.
 */
export class StreamedBody {
  private readonly source: AsyncIterator<Buffer>;
  private readonly redactor: ChunkRedactor;
  private readonly received: Hash = createHash('sha256');
  private readonly stored: Hash = createHash('sha256');
  private storedBytes = 0;
  /** Bytes received so far (before redaction). */
  receivedBytes = 0;
  private ended = false;
  private finishing: Promise<PackedBody> | undefined;
  /** Why the source stopped before its end, when it did: the archive holds what came before. */
  private cut: unknown;

  private constructor(
    source: AsyncIterable<Buffer>,
    secrets: readonly string[],
    private readonly writer: PartWriter,
  ) {
    this.source = source[Symbol.asyncIterator]();
    this.redactor = new ChunkRedactor(secrets);
  }

  /** Takes a spool id (Postgres sequence) for the body's parts, which are the account's. */
  static async open(
    pool: Pool,
    schema: string,
    account: string,
    source: AsyncIterable<Buffer>,
    secrets: readonly string[],
  ): Promise<StreamedBody> {
    const { rows } = await pool.query<{ id: string }>('SELECT nextval($1::regclass) AS id', [
      qualified(schema, 'report_raw_spool_seq'),
    ]);
    const id = Number((rows[0] as { id: string }).id);
    return new StreamedBody(source, secrets, new PartWriter(pool, schema, account, id));
  }

  /** The body's bytes, redacted, archived as they pass. Stopping early leaves the source open for finish(). */
  async *chunks(): AsyncGenerator<Buffer> {
    while (!this.ended) {
      const out = await this.next();
      if (out.length > 0) yield out;
    }
  }

  /**
   * Archives the rest of the body (when the parser stopped early) and ends the archive. A source
   * that fails part way leaves the archive holding the bytes before the failure; the failure is
   * the load's to report, so it is not thrown here.
   */
  finish(): Promise<PackedBody> {
    this.finishing ??= (async (): Promise<PackedBody> => {
      while (!this.ended) await this.next().catch(() => undefined);
      await this.writer.end();
      const sha256 = this.stored.digest('hex');
      const receivedSha256 = this.received.digest('hex');
      return {
        spoolId: this.writer.spoolId,
        bytes: this.storedBytes,
        sha256,
        receivedSha256,
      };
    })();
    return this.finishing as Promise<PackedBody>;
  }

  /** Why the body stopped short, if it did (undefined: it was read to its end, or not yet). */
  get cutBy(): unknown {
    return this.cut;
  }

  /** One chunk from the source, redacted and archived; at the end, the redactor's held tail. */
  private async next(): Promise<Buffer> {
    let step: IteratorResult<Buffer>;
    try {
      step = await this.source.next();
    } catch (error) {
      this.ended = true;
      this.cut = error;
      await this.keep(this.redactor.end());
      throw error;
    }
    if (step.done === true) {
      this.ended = true;
      return this.keep(this.redactor.end());
    }
    this.received.update(step.value);
    this.receivedBytes += step.value.length;
    return this.keep(this.redactor.push(step.value));
  }

  private async keep(out: Buffer): Promise<Buffer> {
    if (out.length > 0) {
      this.stored.update(out);
      this.storedBytes += out.length;
      await this.writer.write(out);
    }
    return out;
  }
}
