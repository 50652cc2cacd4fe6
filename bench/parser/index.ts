// The parser section: one report body read into typed rows three ways, side by side in one run:
// our streaming byte scanner, JSON.parse plus the tree walk, and @streamparser/json.
import { readFile, rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { parseReport } from '../../src/flatten/parse.js';
import { parseReportObject } from '../../test/helpers/flatten.js';
import type { ReportRow } from '../../src/flatten/types.js';
import { captureBody, LOAD_DIMENSIONS } from '../load/capture.js';
import type { BenchOptions } from '../options.js';
import { parseWithStreamparser } from './rival.js';

/** Rows of the parser section's body: enough to dwarf start-up, few enough for the slow rivals. */
const MAX_PARSER_ROWS = 300_000;
const ROUNDS = 5;

/** One way of reading the body: each round's time and the best. */
export interface ParserRun {
  readonly name: string;
  readonly runsMs: number[];
  readonly bestMs: number;
  readonly rowsPerSecond: number;
}

export interface ParserFigures {
  readonly rows: number;
  readonly bodyBytes: number;
  readonly ours: ParserRun;
  readonly jsonParse: ParserRun;
  readonly streamparser: ParserRun;
}

/** Times the three readers on the same body, checking they read the same rows. */
export async function runParserSection(o: BenchOptions, say: (line: string) => void): Promise<ParserFigures> {
  const rows = Math.min(o.rows, MAX_PARSER_ROWS);
  say(`parser: capturing a ${rows}-row body...`);
  const captured = await captureBody(o.cacheDir, rows, o.seed);
  const body = await readFile(captured.file);
  await rm(captured.file, { force: true });
  const readers: Array<[keyof Omit<ParserFigures, 'rows' | 'bodyBytes'>, string, () => ReportRow[]]> = [
    ['ours', 'ours: streaming byte scanner (parseReport)', () => parseReport(body, LOAD_DIMENSIONS).rows],
    [
      'jsonParse',
      'JSON.parse + tree walk (parseReportObject)',
      () => parseReportObject(JSON.parse(body.toString('utf8')), LOAD_DIMENSIONS).rows,
    ],
    [
      'streamparser',
      '@streamparser/json + the same row typing',
      () => parseWithStreamparser(body, LOAD_DIMENSIONS),
    ],
  ];
  const runs = new Map(readers.map(([key]) => [key, [] as number[]]));
  // Rounds interleave the readers, so a busy moment of the machine does not favour one of them.
  for (let round = 0; round < ROUNDS; round++)
    for (const [key, name, read] of readers) {
      const t = performance.now();
      const out = read();
      runs.get(key)?.push(performance.now() - t);
      if (!sameRows(out, captured.rows))
        throw new Error(`parser bench: ${name} read different rows than our scanner`);
    }
  const figure = (key: (typeof readers)[number][0]): ParserRun => {
    const [, name] = readers.find(([k]) => k === key) as (typeof readers)[number];
    const runsMs = runs.get(key) ?? [];
    const bestMs = Math.min(...runsMs);
    say(`  ${name}: best ${bestMs.toFixed(0)} ms`);
    return { name, runsMs, bestMs, rowsPerSecond: captured.rows.length / (bestMs / 1000) };
  };
  return {
    rows: captured.rows.length,
    bodyBytes: body.length,
    ours: figure('ours'),
    jsonParse: figure('jsonParse'),
    streamparser: figure('streamparser'),
  };
}

function sameRows(a: readonly ReportRow[], b: readonly ReportRow[]): boolean {
  return (
    a.length === b.length &&
    a.every((row, i) => {
      const other = b[i] as ReportRow;
      return (
        row.dims.join('\u0000') === other.dims.join('\u0000') && row.counters.join() === other.counters.join()
      );
    })
  );
}
