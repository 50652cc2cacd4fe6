// Section 1 (load path against the psql COPY limit and a naive loader) and section 2 (emulator
// items/s), measured side by side in one run on one fresh database.
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { onInterrupt } from '../cleanup.js';
import { BENCH_SCHEMA, benchReport, createBenchDatabase } from '../database.js';
import type { BenchOptions } from '../options.js';
import { captureBody, LOAD_DIMENSIONS, LOAD_PERIOD, type EmulatorFigures } from './capture.js';
import type { LoadChildResult } from './child.js';
import { copyCommand, timePsqlCopy, writeCsv } from './limit.js';
import { timeNaiveInsert, type NaiveFigures } from './naive.js';
import { runLoadChild } from './run-child.js';

/** Timed runs of ours and of the limit, alternating, each into its own fresh table; the best counts. */
export const ROUNDS = 2;

export interface LoadFigures {
  readonly rows: number;
  readonly bodyBytes: number;
  /** Each round's ms. */
  readonly oursMs: number[];
  readonly limitMs: number[];
  readonly naive: NaiveFigures;
  /** Our best round's child result (peak RSS, status, reconciliation). */
  readonly ours: LoadChildResult;
  /** The overlapped what-if (bench/load/prototype.ts): each round's ms, and its best round. */
  readonly overlappedMs: number[];
  readonly overlapped: LoadChildResult;
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
    overlapped: (r: number) => `bench_overlapped_${r}`,
  };
  const reports = [
    ...Array.from({ length: ROUNDS }, (_, r) => benchReport(names.ours(r), LOAD_DIMENSIONS)),
    ...Array.from({ length: ROUNDS }, (_, r) => benchReport(names.limit(r), LOAD_DIMENSIONS)),
    ...Array.from({ length: ROUNDS }, (_, r) => benchReport(names.overlapped(r), LOAD_DIMENSIONS)),
    benchReport('bench_naive', LOAD_DIMENSIONS),
    benchReport('bench_phases', LOAD_DIMENSIONS),
  ];
  const db = await createBenchDatabase(o.adminUrl, 'load', reports);
  const csv = resolve(join(o.cacheDir, `report-${o.rows}.csv`));
  const removeFiles = async () => {
    await rm(csv, { force: true });
    await rm(captured.file, { force: true });
  };
  const forgetFiles = onInterrupt(removeFiles);
  try {
    await writeCsv(csv, LOAD_PERIOD, captured.rows);
    const oursMs: number[] = [];
    const limitMs: number[] = [];
    const overlappedMs: number[] = [];
    let best: LoadChildResult | undefined;
    let bestOverlapped: LoadChildResult | undefined;
    for (let r = 0; r < ROUNDS; r++) {
      await settle(db.url);
      const limit = await timePsqlCopy(
        db.url,
        copyCommand(BENCH_SCHEMA, `report_${names.limit(r)}`, LOAD_DIMENSIONS, csv),
      );
      limitMs.push(limit);
      await settle(db.url);
      const ours = await runLoadChild({
        mode: 'load',
        bodyFile: captured.file,
        databaseUrl: db.url,
        schema: BENCH_SCHEMA,
        report: reports[r]!,
        period: LOAD_PERIOD,
      });
      if (ours.status !== 'loaded' || ours.rows !== captured.rows.length)
        throw new Error(
          `our load wrote ${ours.rows} rows (${ours.status}), expected ${captured.rows.length}`,
        );
      oursMs.push(ours.ms);
      if (best === undefined || ours.ms < best.ms) best = ours;
      await settle(db.url);
      const overlapped = await runLoadChild({
        mode: 'overlapped',
        bodyFile: captured.file,
        databaseUrl: db.url,
        schema: BENCH_SCHEMA,
        report: benchReport(names.overlapped(r), LOAD_DIMENSIONS),
        period: LOAD_PERIOD,
      });
      if (overlapped.rows !== captured.rows.length || !overlapped.reconciled)
        throw new Error(
          `the overlapped prototype wrote ${overlapped.rows} rows, reconciled ${overlapped.reconciled}`,
        );
      overlappedMs.push(overlapped.ms);
      if (bestOverlapped === undefined || overlapped.ms < bestOverlapped.ms) bestOverlapped = overlapped;
      say(
        `  round ${r + 1}: psql \\copy ${(limit / 1000).toFixed(2)} s, ours ${(ours.ms / 1000).toFixed(2)} s, overlapped prototype ${(overlapped.ms / 1000).toFixed(2)} s`,
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
          report: reports[0]!,
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
        oursMs,
        limitMs,
        naive,
        ours: best!,
        overlappedMs,
        overlapped: bestOverlapped!,
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

/** A CHECKPOINT between timed runs, so one run's dirty pages are not written during the next. */
async function settle(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('CHECKPOINT');
  } finally {
    await c.end();
  }
}
