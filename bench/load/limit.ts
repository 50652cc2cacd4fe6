// The limit: `psql \copy` of the same rows as CSV into an identical table, no parsing of ours at all.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Dimension } from '../../src/platform/config/dimensions.js';
import type { Period, ReportRow } from '../../src/flatten/types.js';
import { qualified } from '../../src/platform/pg/handle.js';
import { copyColumns } from '../../src/schema/report-tables.js';

/** One CSV field: quoted only when it must be (RFC 4180 / Postgres CSV). */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) || value === '' ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One CSV line with the columns of copyColumns(): period, dimensions, counters, load_id, account. */
export function csvLine(period: Period, row: ReportRow, loadId: number, account = 'default'): string {
  let line = `${period.start},${period.end}`;
  for (const d of row.dims) line += `,${csvField(d)}`;
  for (const c of row.counters) line += `,${c}`;
  return `${line},${loadId},${account}\n`;
}

/** Writes the rows as a CSV file (in big chunks), for psql to read. */
export async function writeCsv(file: string, period: Period, rows: readonly ReportRow[]): Promise<void> {
  const out = createWriteStream(file);
  let chunk = '';
  for (const row of rows) {
    chunk += csvLine(period, row, 1);
    if (chunk.length >= 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
}

/** A file name as a psql string literal. */
function fileLiteral(file: string): string {
  return `'${file.replace(/'/g, "''")}'`;
}

/**
 * The psql command line of a limit: `\copy schema.table (columns) FROM 'file' WITH (FORMAT f)`,
 * CSV for the text limit, binary for the binary one.
 */
export function copyCommand(
  schema: string,
  table: string,
  dimensions: readonly Dimension[],
  file: string,
  format: 'csv' | 'binary' = 'csv',
): string {
  const columns = copyColumns(dimensions).join(', ');
  return `\\copy ${qualified(schema, table)} (${columns}) FROM ${fileLiteral(file)} WITH (FORMAT ${format})`;
}

/**
 * The psql command that writes a loaded table's rows as a COPY binary file, for the binary limit:
 * Postgres' own encoder, not ours, makes the file.
 */
export function exportBinaryCommand(
  schema: string,
  table: string,
  dimensions: readonly Dimension[],
  file: string,
): string {
  const columns = copyColumns(dimensions).join(', ');
  return `\\copy (SELECT ${columns} FROM ${qualified(schema, table)}) TO ${fileLiteral(file)} WITH (FORMAT binary)`;
}

/** Runs psql with the \copy and resolves to its wall time in ms; rejects with psql's stderr on failure. */
export async function timePsqlCopy(databaseUrl: string, command: string): Promise<number> {
  const started = performance.now();
  const child = spawn('psql', [databaseUrl, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', command], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const [code] = (await once(child, 'exit')) as [number | null];
  const ms = performance.now() - started;
  if (code !== 0) throw new Error(`psql \\copy failed (exit ${code}): ${stderr.trim()}`);
  return ms;
}
