// The naive loader: one parameterized INSERT per row, all in one transaction, awaited one by one.
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { Dimension } from '../../src/platform/config/dimensions.js';
import type { Period, ReportRow } from '../../src/flatten/types.js';
import { ident, qualified } from '../../src/platform/pg/handle.js';
import { copyColumns } from '../../src/schema/report-tables.js';

export interface NaiveFigures {
  /** Rows really inserted. */
  readonly sample: number;
  readonly ms: number;
  readonly rowsPerSecond: number;
}

/** Inserts the first `sample` rows row by row in one transaction and times it (commit included). */
export async function timeNaiveInsert(
  databaseUrl: string,
  schema: string,
  table: string,
  dimensions: readonly Dimension[],
  period: Period,
  rows: readonly ReportRow[],
  sample: number,
): Promise<NaiveFigures> {
  const columns = copyColumns(dimensions);
  const text = `INSERT INTO ${qualified(schema, table)} (${columns.map(ident).join(', ')}) VALUES (${columns
    .map((_, i) => `$${i + 1}`)
    .join(', ')})`;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const n = Math.min(sample, rows.length);
  try {
    const started = performance.now();
    await client.query('BEGIN');
    for (let i = 0; i < n; i++) {
      const row = rows[i] as ReportRow;
      await client.query(text, [period.start, period.end, ...row.dims, ...row.counters, 1, 'default']);
    }
    await client.query('COMMIT');
    const ms = performance.now() - started;
    return { sample: n, ms, rowsPerSecond: n / (ms / 1000) };
  } finally {
    await client.end();
  }
}
