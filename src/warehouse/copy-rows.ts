import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ClientBase } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Dimension } from '../config/dimensions.js';
import type { ReportRow } from '../flatten/types.js';
import { copyBinaryChunks } from './copy-binary.js';
import { copyChunks, createRowEncoder } from './copy-encode.js';
import { ident, qualified } from './pg.js';
import { copyColumns } from './schema/report-tables.js';

/** COPY's data format: binary (the default: Postgres parses no numbers or dates) or text. */
import type { CopyFormat } from './pg.js';
export type { CopyFormat };

export const COPY_FORMATS: readonly CopyFormat[] = ['binary', 'text'];

export interface CopyTarget {
  readonly schema: string;
  readonly table: string;
  readonly dimensions: readonly Dimension[];
  readonly periodStart: string;
  readonly periodEnd: string;
  readonly loadId: number;
  /** The account of every row (a validated name). */
  readonly account: string;
}

/**
 * Streams rows into the target table with COPY FROM STDIN on `client` (which must be a dedicated
 * client inside the caller's transaction). Rows are encoded lazily in large chunks and written with
 * backpressure, so memory holds one chunk, not the period. Resolves to the number of rows written
 * once Postgres has confirmed the COPY; a bad value rejects and leaves the transaction aborted.
 */
export async function copyRows(
  client: ClientBase,
  target: CopyTarget,
  rows: Iterable<ReportRow> | AsyncIterable<ReportRow>,
  options: { readonly chunkBytes?: number; readonly format?: CopyFormat } = {},
): Promise<number> {
  const format = options.format ?? 'binary';
  const counter = { rows: 0 };
  const columns = copyColumns(target.dimensions).map(ident).join(', ');
  const stream = client.query(
    copyFrom(
      `COPY ${qualified(target.schema, target.table)} (${columns}) FROM STDIN` +
        (format === 'binary' ? ' WITH (FORMAT binary)' : ''),
    ),
  );
  const chunks =
    format === 'binary'
      ? copyBinaryChunks(rows, target, counter, options.chunkBytes)
      : copyChunks(rows, createRowEncoder(target), counter, options.chunkBytes);
  // pipeline destroys the COPY stream if encoding throws, which makes Postgres abort the COPY;
  // it resolves only after 'finish', i.e. after Postgres acknowledged CommandComplete.
  await pipeline(Readable.from(chunks, { objectMode: false }), stream);
  if (stream.rowCount !== counter.rows)
    throw new Error(`COPY into ${target.table} wrote ${stream.rowCount} rows, ${counter.rows} were sent`);
  return counter.rows;
}
