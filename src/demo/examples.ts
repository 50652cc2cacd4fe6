import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { packageRoot } from '../config/files.js';
import { ident, withTransaction } from '../warehouse/pg.js';

/** An example BI query shipped in sql/examples/, shown by `adops demo`. */
export interface ExampleQuery {
  readonly title: string;
  readonly file: string;
}

export const EXAMPLE_QUERIES: readonly ExampleQuery[] = [
  { title: 'Top campaigns by impressions', file: 'top_campaigns.sql' },
  { title: 'Daily fill rate', file: 'daily_fill_rate.sql' },
  { title: 'Viewability by device', file: 'viewability_by_device.sql' },
];

export interface QueryResult {
  readonly columns: readonly string[];
  readonly rows: ReadonlyArray<readonly string[]>;
}

/** Runs one example in `schema` (a transaction-local search_path, so the pool is left as it was). */
export async function runExample(pool: Pool, schema: string, example: ExampleQuery): Promise<QueryResult> {
  const sql = readFileSync(join(packageRoot(), 'sql', 'examples', example.file), 'utf8');
  const client = await pool.connect();
  try {
    const result = await withTransaction(
      client,
      async () => {
        await client.query(`SET LOCAL search_path TO ${ident(schema)}, public`);
        return client.query({ text: sql, rowMode: 'array' });
      },
      { begin: 'BEGIN READ ONLY' },
    );
    return {
      columns: result.fields.map((f) => f.name),
      rows: (result.rows as unknown[][]).map((row) => row.map(cellText)),
    };
  } finally {
    client.release();
  }
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  // node-postgres reads a date column as local midnight: format it in local time, not UTC.
  if (value instanceof Date) {
    const pad = (n: number) => String(n).padStart(2, '0');
    return `${value.getFullYear()}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
  }
  return String(value);
}
