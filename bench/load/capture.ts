// Section 2 and the input of section 1: one day's report fetched from the emulator over real HTTP
// (timed: the emulator's items/s), and its body saved once for every loader to read.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createApiClient } from '../../src/api/client.js';
import type { Dimension } from '../../src/platform/config/dimensions.js';
import { startEmulator } from '../../src/emulator/index.js';
import { parseReport } from '../../src/flatten/parse.js';
import type { Period, ReportRow } from '../../src/flatten/types.js';

/** The load-path report of issue 9. */
export const LOAD_DIMENSIONS: readonly Dimension[] = [
  'day',
  'campaign_id',
  'creative_id',
  'zone_id',
  'country',
  'device',
];

/** A past, final day (no late-data scaling), so every run sees the same bytes for a seed. */
export const LOAD_PERIOD: Period = { start: '2025-06-02', end: '2025-06-02' };

export interface EmulatorFigures {
  /** Leaves (report items) in the body. */
  readonly items: number;
  readonly bytes: number;
  /** First request: includes generating the day's cells. */
  readonly coldMs: number;
  /** Second request of the same day: grouping and serving only. */
  readonly warmMs: number;
  readonly itemsPerSecond: number;
  readonly megabytesPerSecond: number;
}

export interface CapturedBody {
  readonly file: string;
  readonly bytes: number;
  /** The rows as our parser reads them (for the CSV of the psql limit and the naive loader). */
  readonly rows: ReportRow[];
  readonly emulator: EmulatorFigures;
}

/**
 * Starts an emulator with `cellsPerDay` = N, fetches the report twice through our API client (cold,
 * then warm), saves the body under `cacheDir` and parses it once, untimed, for the other loaders.
 */
export async function captureBody(cacheDir: string, rows: number, seed: number): Promise<CapturedBody> {
  await mkdir(cacheDir, { recursive: true });
  // The emulator's clock the day after: campaign flights sit around it, the same on every run.
  const now = new Date(`${LOAD_PERIOD.end}T12:00:00Z`);
  now.setUTCDate(now.getUTCDate() + 1);
  const emulator = await startEmulator({ seed, cellsPerDay: rows, lateDataDays: 0, now: () => now });
  const client = createApiClient({ baseUrl: emulator.url, apiKey: 'demo-key', auth: 'bearer', attempts: 1 });
  let body: Buffer;
  let coldMs: number;
  let warmMs: number;
  try {
    const query = { dimensions: LOAD_DIMENSIONS, period: LOAD_PERIOD };
    let t = performance.now();
    await client.fetchReport(query);
    coldMs = performance.now() - t;
    t = performance.now();
    body = await (await client.fetchReport(query)).body.bytes();
    warmMs = performance.now() - t;
  } finally {
    await client.close();
    await emulator.close();
  }
  const file = join(cacheDir, `report-${rows}-seed${seed}.json`);
  await writeFile(file, body);
  const parsed = parseReport(body, LOAD_DIMENSIONS, { strict: true });
  const items = parsed.rows.length;
  return {
    file,
    bytes: body.length,
    rows: parsed.rows,
    emulator: {
      items,
      bytes: body.length,
      coldMs,
      warmMs,
      itemsPerSecond: items / (warmMs / 1000),
      megabytesPerSecond: body.length / 1e6 / (warmMs / 1000),
    },
  };
}
