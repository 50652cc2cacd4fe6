// Section 1 (load path against the psql COPY limit and a naive loader) and section 2 (emulator
// items/s), measured side by side in one run on one fresh database.
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { qualified } from '../../src/platform/pg/handle.js';
import { onInterrupt } from '../cleanup.js';
import { BENCH_SCHEMA, benchReport, createBenchDatabase } from '../database.js';
import type { BenchOptions } from '../options.js';
import { captureBody, LOAD_DIMENSIONS, LOAD_PERIOD, type EmulatorFigures } from './capture.js';
import type { LoadChildRequest, LoadChildResult } from './child.js';
import { copyCommand, exportBinaryCommand, timePsqlCopy, writeCsv } from './limit.js';
import { timeNaiveInsert, type NaiveFigures } from './naive.js';
import { runLoadChild } from './run-child.js';

/** Rounds of the limit and ours, in turn, each into its own fresh table; the best counts. */
export const ROUNDS = 2;

export interface LoadFigures {
  readonly rows: number;
  readonly bodyBytes: number;
  /** Each round's ms. */
  readonly oursMs: number[];
  readonly limitMs: number[];
  /** psql \copy of the same rows from a COPY binary file: the faster limit. */
  readonly binaryLimitMs: number[];
  readonly naive: NaiveFigures;
  /** Our best round's child result (peak RSS, status, reconciliation). */
  readonly ours: LoadChildResult;
  /** Where our time goes, phase by phase (a separate child run). */
  readonly phases: Record<string, number>;
  readonly profileDir: string | undefined;
}

export interface LoadSectionResult {
  readonly emulator: EmulatorFigures;
  readonly load: LoadFigures | undefined;
}

/** Runs sections 1 and 2 (or only 2 when `load` is not selected). */
export async function runLoadSection(
  o: BenchOptions,
  say: (line: string) => void,
): Promise<LoadSectionResult> {
  say(`capturing a one-day report of ${o.rows} rows from the emulator...`);
  const captured = await captureBody(o.cacheDir, o.rows, o.seed);
  say(
    `  body ${(captured.bytes / 1e6).toFixed(1)} MB, ${captured.emulator.items} items, emulator ${Math.round(captured.emulator.itemsPerSecond)} items/s`,
  );
  if (captured.emulator.items !== o.rows)
    say(`  note: the emulator grouped ${o.rows} cells into ${captured.emulator.items} distinct rows`);
  if (!o.sections.has('load')) {
    await rm(captured.file, { force: true });
    return { emulator: captured.emulator, load: undefined };
  }
  const names = {
    ours: (r: number) => `bench_ours_${r}`,
    limit: (r: number) => `bench_limit_${r}`,
    binary: (r: number) => `bench_binary_${r}`,
  };
  const reports = [
    ...Array.from({ length: ROUNDS }, (_, r) => benchReport(names.ours(r), LOAD_DIMENSIONS)),
    ...Array.from({ length: ROUNDS }, (_, r) => benchReport(names.limit(r), LOAD_DIMENSIONS)),
    ...Array.from({ length: ROUNDS }, (_, r) => benchReport(names.binary(r), LOAD_DIMENSIONS)),
    benchReport('bench_export', LOAD_DIMENSIONS),
    benchReport('bench_naive', LOAD_DIMENSIONS),
    benchReport('bench_phases', LOAD_DIMENSIONS),
    benchReport('bench_profile', LOAD_DIMENSIONS),
  ];
  const db = await createBenchDatabase(o.adminUrl, 'load', reports, [LOAD_PERIOD.start]);
  const csv = resolve(join(o.cacheDir, `report-${o.rows}.csv`));
  const binary = resolve(join(o.cacheDir, `report-${o.rows}.pgcopy`));
  const removeFiles = async () => {
    await rm(csv, { force: true });
    await rm(binary, { force: true });
    await rm(captured.file, { force: true });
  };
  const forgetFiles = onInterrupt(removeFiles);
  try {
    await writeCsv(csv, LOAD_PERIOD, captured.rows);
    const runs = { ours: [] as LoadChildResult[] };
    const limitMs: number[] = [];
    const binaryLimitMs: number[] = [];
    /** One timed child into its own fresh table, checked to have loaded every row. */
    const timed = async (mode: LoadChildRequest['mode'], table: string): Promise<LoadChildResult> => {
      await settle(db.url);
      const result = await runLoadChild({
        mode,
        bodyFile: captured.file,
        databaseUrl: db.url,
        schema: BENCH_SCHEMA,
        report: benchReport(table, LOAD_DIMENSIONS),
        period: LOAD_PERIOD,
      });
      if (result.status !== 'loaded' || result.rows !== captured.rows.length || !result.reconciled)
        throw new Error(
          `${mode} wrote ${result.rows} rows (${result.status}, reconciled ${result.reconciled}), expected ${captured.rows.length}`,
        );
      return result;
    };
    // The binary limit's file: Postgres' own encoder writes it from rows psql loaded from the CSV.
    await timePsqlCopy(db.url, copyCommand(BENCH_SCHEMA, 'report_bench_export', LOAD_DIMENSIONS, csv));
    await timePsqlCopy(
      db.url,
      exportBinaryCommand(BENCH_SCHEMA, 'report_bench_export', LOAD_DIMENSIONS, binary),
    );
    await dropTable(db.url, 'report_bench_export');
    // Each round runs the three loaders in a rotated order, and each timed table is counted and
    // dropped once loaded, so that every run starts from the same database: a run that came after
    // another's table was 6-10% slower (most likely evicting that table's pages from shared_buffers),
    // which favoured whichever loader ran first.
    const loaders = ['text', 'binary', 'ours'] as const;
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < loaders.length; k++) {
        const loader = loaders[(k + r) % loaders.length];
        if (loader === 'ours') {
          runs.ours.push(await timed('load', names.ours(r)));
          await dropTable(db.url, `report_${names.ours(r)}`);
          continue;
        }
        const text = loader === 'text';
        await settle(db.url);
        const table = `report_${(text ? names.limit : names.binary)(r)}`;
        const file = text ? csv : binary;
        const ms = await timePsqlCopy(
          db.url,
          copyCommand(BENCH_SCHEMA, table, LOAD_DIMENSIONS, file, text ? 'csv' : 'binary'),
        );
        (text ? limitMs : binaryLimitMs).push(ms);
        const rows = await dropTable(db.url, table);
        if (rows !== captured.rows.length)
          throw new Error(`psql \\copy (${loader}) wrote ${rows} rows, expected ${captured.rows.length}`);
      }
      const s = (ms: number | undefined) => `${((ms ?? 0) / 1000).toFixed(2)} s`;
      say(
        `  round ${r + 1}: psql \\copy text ${s(limitMs[r])}, binary ${s(binaryLimitMs[r])}, ours ${s(runs.ours[r]?.ms)}`,
      );
    }
    await settle(db.url);
    say(`naive loader: ${Math.min(o.naiveSample, captured.rows.length)} rows one INSERT at a time...`);
    const naive = await timeNaiveInsert(
      db.url,
      BENCH_SCHEMA,
      'report_bench_naive',
      LOAD_DIMENSIONS,
      LOAD_PERIOD,
      captured.rows,
      o.naiveSample,
    );
    await settle(db.url);
    say('where our time goes (phase by phase)...');
    const profileDir = o.profile ? resolve(join(o.cacheDir, 'profiles')) : undefined;
    const phased = await runLoadChild(
      {
        mode: 'phases',
        bodyFile: captured.file,
        databaseUrl: db.url,
        schema: BENCH_SCHEMA,
        report: benchReport('bench_phases', LOAD_DIMENSIONS),
        period: LOAD_PERIOD,
      },
      undefined,
    );
    if (profileDir !== undefined) {
      say(`profiling our load (node --cpu-prof into ${profileDir})...`);
      await runLoadChild(
        {
          mode: 'load',
          bodyFile: captured.file,
          databaseUrl: db.url,
          schema: BENCH_SCHEMA,
          report: benchReport('bench_profile', LOAD_DIMENSIONS),
          period: LOAD_PERIOD,
        },
        profileDir,
      );
    }
    return {
      emulator: captured.emulator,
      load: {
        rows: captured.rows.length,
        bodyBytes: captured.bytes,
        oursMs: runs.ours.map((x) => x.ms),
        limitMs,
        binaryLimitMs,
        naive,
        ours: fastest(runs.ours),
        phases: phased.phases,
        profileDir,
      },
    };
  } finally {
    await db.drop();
    await removeFiles();
    forgetFiles();
  }
}

/** The run with the least wall time. */
function fastest(runs: readonly LoadChildResult[]): LoadChildResult {
  return runs.reduce((a, b) => (b.ms < a.ms ? b : a));
}

/** Counts a timed table's rows, then drops it (and its partitions), freeing its buffers. */
async function dropTable(url: string, table: string): Promise<number> {
  return withBenchClient(url, async (c) => {
    const name = qualified(BENCH_SCHEMA, table);
    const { rows } = await c.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${name}`);
    await c.query(`DROP TABLE ${name}`);
    return Number(rows[0]?.n);
  });
}

async function withBenchClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** A CHECKPOINT between timed runs, so one run's dirty pages are not written during the next. */
async function settle(url: string): Promise<void> {
  await withBenchClient(url, (c) => c.query('CHECKPOINT'));
}
