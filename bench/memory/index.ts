// Section `memory`: peak RSS growth of a worker loading one big body as it streams in, for body
// sizes from 10 MB up (to 1 GB with --big), and a plot of it written to bench/rss-growth.svg.
import { fork } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_SCHEMA, benchReport, createBenchDatabase } from '../database.js';
import type { BenchOptions } from '../options.js';
import type { MemoryChildRequest, MemoryChildResult } from './child.js';
import { rssPlot } from './plot.js';
import { SYNTHETIC_DIMENSIONS } from './synthetic-body.js';

/** The goal of issue 20: growth at most this, whatever the body's size. */
export const RSS_GROWTH_LIMIT = 128 * 1024 * 1024;

const MB = 1_000_000;

export interface MemoryFigures {
  /** Peak RSS growth per body size label ("10MB", "100MB", "1GB"), bytes. */
  readonly rssGrowthBytes: Record<string, number>;
  readonly points: ReadonlyArray<
    MemoryChildResult & { readonly label: string; readonly growthBytes: number }
  >;
  readonly plot: string;
}

/** The body sizes measured: to 100 MB by default, to 1 GB with --big. */
export function bodySizes(big: boolean): number[] {
  return big ? [10, 30, 100, 300, 1000].map((m) => m * MB) : [10, 30, 100].map((m) => m * MB);
}

export async function runMemorySection(o: BenchOptions, say: (line: string) => void): Promise<MemoryFigures> {
  const report = benchReport('bench_memory', SYNTHETIC_DIMENSIONS);
  const db = await createBenchDatabase(o.adminUrl, 'memory', [report]);
  const points: Array<MemoryFigures['points'][number]> = [];
  try {
    for (const bytes of bodySizes(o.big)) {
      const label = bytes >= 1e9 ? `${bytes / 1e9}GB` : `${bytes / MB}MB`;
      say(`memory: loading a ${label} body as it streams in...`);
      const result = await runChild({
        bodyBytes: bytes,
        databaseUrl: db.url,
        schema: BENCH_SCHEMA,
        report,
        day: '2026-01-01',
      });
      const growthBytes = Math.max(0, result.peakRssBytes - result.rssBeforeBytes);
      say(
        `  ${result.rows} rows, ${(result.bodyBytes / MB).toFixed(0)} MB in ${(result.ms / 1000).toFixed(1)} s, peak RSS +${(growthBytes / MB).toFixed(1)} MB`,
      );
      points.push({ ...result, label, growthBytes });
    }
  } finally {
    await db.drop();
  }
  const plot = o.resultsFile.replace(/results\.json$/, 'rss-growth.svg');
  await mkdir(dirname(plot), { recursive: true });
  await writeFile(
    plot,
    rssPlot(
      points.map((p) => ({ bodyBytes: p.bodyBytes, growthBytes: p.growthBytes })),
      RSS_GROWTH_LIMIT,
      'Worker peak RSS growth while loading one streamed report body',
    ),
  );
  say(`memory: plot written to ${plot}`);
  return { rssGrowthBytes: Object.fromEntries(points.map((p) => [p.label, p.growthBytes])), points, plot };
}

function runChild(req: MemoryChildRequest): Promise<MemoryChildResult> {
  const script = fileURLToPath(new URL('./child.js', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = fork(script, [], {
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let answer: { ok: true; result: MemoryChildResult } | { ok: false; error: string } | undefined;
    child.once('message', (m) => (answer = m as typeof answer));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (answer?.ok === true) resolve(answer.result);
      else if (answer?.ok === false) reject(new Error(`memory child failed: ${answer.error}`));
      else reject(new Error(`memory child exited (code ${code}, signal ${signal}) without an answer`));
    });
    child.send(req);
  });
}
