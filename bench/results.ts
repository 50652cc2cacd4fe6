// Figures in, verdicts and a printable table out: pure, so the arithmetic of ratios is testable.
import Table from 'cli-table3';
import type { BackfillFigures } from './backfill/index.js';
import type { CliFigures } from './cli/index.js';
import { RSS_GROWTH_LIMIT, type MemoryFigures } from './memory/index.js';
import type { EmulatorFigures } from './load/capture.js';
import type { LoadFigures } from './load/index.js';
import { isBusy, type Machine } from './machine.js';
import type { BenchOptions } from './options.js';
import type { ParserFigures } from './parser/index.js';
import type { AccountsBackfillFigures } from './scale/accounts-backfill.js';
import type { BiQueryFigures } from './scale/bi-partitions.js';
import type { EnqueueFigures, HistoryFigures } from './scale/history.js';
import { QUEUE_BACKENDS, type QueueBackendKind } from './pull/figures.js';
import type { PullFigures } from './pull/index.js';
import type { RequestsFigures } from './requests/index.js';
import type { SyncFigures } from './sync/index.js';

/**
 * Worker CPU ms per 100-row pull before issue 20's per-pull work (BENCHMARKS.md, "today's figure"),
 * the baseline of the cpuMsPerPull target.
 */
export const CPU_MS_PER_PULL_BEFORE = 4.7;

/** The issue's targets. */
export const TARGETS = {
  oursOverTextCopy: 1.1,
  oursOverBinaryCopy: 0.9,
  /** Issue 25: the load path against the faster of psql's text and binary \copy. */
  oursOverBetterCopy: 0.95,
  oursOverNaive: 20,
  peakRssOverBody: 4,
  backfillWallOverIdeal: 1.3,
  syncHostileOverFaithful: 3,
  cliHelpMs: 200,
  statusEmptyMs: 700,
  statusBigMs: 1000,
  /** Half of today's figure in BENCHMARKS.md (CPU_MS_PER_PULL_BEFORE). */
  cpuMsPerPull: CPU_MS_PER_PULL_BEFORE / 2,
  backfillOverRateBound: 1.1,
} as const;

export interface TargetCheck {
  readonly name: string;
  readonly target: string;
  readonly measured: number;
  readonly met: boolean;
  /** How `measured` reads: a ratio (default) or milliseconds. */
  readonly unit?: 'x' | 'ms' | 'MiB';
}

/** The CLI figures under the keys issue 20 names, beside the raw runs. */
export interface CliSummary extends CliFigures {
  /** Best wall time of `adops --help`. */
  readonly cliHelpMs: number;
  /** Best wall time of `adops status`: empty warehouse, and at `bigLoads` report_loads rows. */
  readonly statusMs: { readonly empty: number; readonly loads1M: number };
  /** Best wall time of `node -e 0`, the floor under both. */
  readonly nodeMs: number;
}

/** The CLI section's figures with the issue's keys. */
export function summarizeCli(f: CliFigures): CliSummary {
  return {
    ...f,
    cliHelpMs: f.help.bestMs,
    statusMs: { empty: f.statusEmpty.bestMs, loads1M: f.statusBig.bestMs },
    nodeMs: f.node.bestMs,
  };
}

/** The memory section as results.json keeps it: `rssGrowthBytes` per body size, and the plot's file. */
export interface MemorySummary {
  readonly rssGrowthBytes: Record<string, number>;
  readonly points: MemoryFigures['points'];
  readonly plot: string;
}

export function summarizeMemory(f: MemoryFigures): MemorySummary {
  return { rssGrowthBytes: f.rssGrowthBytes, points: f.points, plot: f.plot };
}

export interface LoadSummary {
  readonly rows: number;
  readonly bodyBytes: number;
  readonly ours: {
    readonly bestMs: number;
    readonly runsMs: readonly number[];
    readonly rowsPerSecond: number;
  };
  readonly limit: {
    readonly bestMs: number;
    readonly runsMs: readonly number[];
    readonly rowsPerSecond: number;
  };
  readonly naive: {
    readonly sampleRows: number;
    readonly sampleMs: number;
    readonly rowsPerSecond: number;
    /** The time N rows would take at the sample's rate: extrapolated, not measured. */
    readonly extrapolatedMs: number;
  };
  /** psql \copy of the same rows from a binary file. */
  readonly binaryLimit: {
    readonly bestMs: number;
    readonly runsMs: readonly number[];
    readonly rowsPerSecond: number;
  };
  readonly oursOverLimit: number;
  /** Issue 20's keys: ours over psql's text (CSV) \copy, and over its binary \copy. */
  readonly oursOverTextCopy: number;
  readonly oursOverBinaryCopy: number;
  readonly oursOverNaive: number;
  readonly peakRssBytes: number;
  readonly rssBeforeLoadBytes: number;
  readonly peakRssOverBody: number;
  readonly reconciled: boolean;
  readonly phasesMs: Record<string, number>;
}

export interface BackfillSummary extends BackfillFigures {
  readonly wallOverIdeal: number;
  /**
   * The machine's busy CPU seconds spread over all its CPUs: no wall time can be shorter on this
   * machine while the run needs that much CPU (workers, Postgres, Redis and the emulator alike).
   */
  readonly cpuFloorMs: number;
  readonly cpuFloorOverIdeal: number;
  /** wall / ideal of every run of the scenario, this one (the best) included. */
  readonly runsWallOverIdeal?: readonly number[];
}

export interface Results {
  readonly generatedAt: string;
  readonly machine: Machine;
  readonly options: Pick<
    BenchOptions,
    'rows' | 'days' | 'naiveSample' | 'workers' | 'concurrency' | 'latencyMs' | 'failRate' | 'seed'
  >;
  readonly load: LoadSummary | undefined;
  /** The same body read by our scanner, JSON.parse plus the tree walk, and @streamparser/json. */
  readonly parser?: ParserFigures | undefined;
  /** A catalogue sync against the faithful and the hostile server (issue 15: at most 3x). */
  readonly sync?: SyncFigures | undefined;
  /** How soon `adops --help` and `adops status` answer, against `node -e 0`. */
  readonly cli?: CliSummary | undefined;
  readonly memory?: MemorySummary | undefined;
  /** Worker CPU per small pull, and a backfill against the shared rate limit's bound. */
  readonly pull?: PullFigures | undefined;
  /** Several days per request against one per period (issue 37). */
  readonly requests?: RequestsFigures | undefined;
  readonly emulator: (EmulatorFigures & { readonly overOurLoad: number | undefined }) | undefined;
  readonly backfill:
    | {
        readonly clean: BackfillSummary;
        readonly faulty: BackfillSummary;
        /** The clean backfill once more with no latency: how many pulls a second this machine can do. */
        readonly capacity?: CapacitySummary;
      }
    | undefined;
  /**
   * `--scale`: status, heal and the tick's gap query as history grows; a 100,000-pull enqueue; top
   * 20 campaigns of one month, partitioned against unpartitioned (bench/scale/bi-partitions.ts);
   * a 3-account backfill against its rate-limit bound (bench/scale/accounts-backfill.ts).
   */
  readonly scale?:
    | {
        readonly history?: HistoryFigures | undefined;
        readonly enqueue?: EnqueueFigures | undefined;
        readonly biQuery?: BiQueryFigures | undefined;
        readonly accountsBackfill?: AccountsBackfillFigures | undefined;
      }
    | undefined;
  readonly targets: readonly TargetCheck[];
}

/** Rows per second of `rows` in `ms`. */
export function rate(rows: number, ms: number): number {
  return ms > 0 ? rows / (ms / 1000) : Infinity;
}

/** Turns the measured figures into ratios against the limit, the naive loader and the targets. */
export function summarizeLoad(f: LoadFigures): LoadSummary {
  const oursBest = Math.min(...f.oursMs);
  const limitBest = Math.min(...f.limitMs);
  const ours = rate(f.rows, oursBest);
  const limit = rate(f.rows, limitBest);
  const binaryBest = Math.min(...f.binaryLimitMs);
  const binary = rate(f.rows, binaryBest);
  return {
    rows: f.rows,
    bodyBytes: f.bodyBytes,
    ours: { bestMs: oursBest, runsMs: f.oursMs, rowsPerSecond: ours },
    limit: { bestMs: limitBest, runsMs: f.limitMs, rowsPerSecond: limit },
    binaryLimit: { bestMs: binaryBest, runsMs: f.binaryLimitMs, rowsPerSecond: binary },
    naive: {
      sampleRows: f.naive.sample,
      sampleMs: f.naive.ms,
      rowsPerSecond: f.naive.rowsPerSecond,
      extrapolatedMs: (f.rows / f.naive.rowsPerSecond) * 1000,
    },
    oursOverLimit: ours / limit,
    oursOverTextCopy: ours / limit,
    oursOverBinaryCopy: ours / binary,
    oursOverNaive: ours / f.naive.rowsPerSecond,
    peakRssBytes: f.ours.peakRssBytes,
    rssBeforeLoadBytes: f.ours.rssBeforeBytes,
    peakRssOverBody: f.ours.peakRssBytes / f.bodyBytes,
    reconciled: f.ours.reconciled,
    phasesMs: f.phases,
  };
}

/** Adds wall/ideal, and the CPU floor on a machine of `cpus` CPUs, to a backfill scenario. */
export function summarizeBackfill(f: BackfillFigures, cpus: number): BackfillSummary {
  const over = (ms: number) => (f.idealMs > 0 ? ms / f.idealMs : Infinity);
  const cpuFloorMs = (f.machineBusyCpuSeconds * 1000) / cpus;
  return { ...f, wallOverIdeal: over(f.wallMs), cpuFloorMs, cpuFloorOverIdeal: over(cpuFloorMs) };
}

/** What the machine can do at most, against what the ideal and the target ask of it. */
export interface CapacitySummary {
  readonly pulls: number;
  readonly failed: number;
  readonly wallMs: number;
  readonly pullsPerSecond: number;
  readonly cpuBusy: number;
  /** Pulls a second the ideal asks for: every slot busy with nothing but the latency. */
  readonly idealPullsPerSecond: number;
  /** Pulls a second a backfill at the target's wall / ideal needs. */
  readonly targetPullsPerSecond: number;
}

/** The capacity run against the ideal of `slots` slots at `latencyMs`. */
export function summarizeCapacity(f: BackfillFigures, slots: number, latencyMs: number): CapacitySummary {
  const idealPullsPerSecond = (slots * 1000) / latencyMs;
  return {
    pulls: f.pulls,
    failed: f.failed,
    wallMs: f.wallMs,
    pullsPerSecond: f.pullsPerSecond,
    cpuBusy: f.cpuBusy,
    idealPullsPerSecond,
    targetPullsPerSecond: idealPullsPerSecond / TARGETS.backfillWallOverIdeal,
  };
}

/** The run closest to its ideal, carrying every run's wall / ideal. */
export function bestBackfill(runs: readonly BackfillSummary[]): BackfillSummary {
  if (runs.length === 0) throw new RangeError('no backfill runs');
  const best = runs.reduce((a, b) => (b.wallOverIdeal < a.wallOverIdeal ? b : a));
  return { ...best, runsWallOverIdeal: runs.map((r) => r.wallOverIdeal) };
}

/** Each target of the issue that this run measured, with its verdict. */
export function checkTargets(
  load: LoadSummary | undefined,
  clean: BackfillSummary | undefined,
  sync?: SyncFigures,
  cli?: CliSummary,
  memory?: MemorySummary,
  pull?: PullFigures,
): TargetCheck[] {
  const out: TargetCheck[] = [];
  if (load !== undefined) {
    out.push(
      at(
        'load path / psql text \\copy (issue 20)',
        `>= ${TARGETS.oursOverTextCopy}x`,
        load.oursOverTextCopy,
        (v) => v >= TARGETS.oursOverTextCopy,
      ),
      at(
        'load path / psql binary \\copy (issue 20)',
        `>= ${TARGETS.oursOverBinaryCopy}x`,
        load.oursOverBinaryCopy,
        (v) => v >= TARGETS.oursOverBinaryCopy,
      ),
      at(
        'load path / the faster psql \\copy, text or binary (issue 25)',
        `>= ${TARGETS.oursOverBetterCopy}x`,
        Math.min(load.oursOverTextCopy, load.oursOverBinaryCopy),
        (v) => v >= TARGETS.oursOverBetterCopy,
      ),
      at(
        'load path / naive INSERT',
        `>= ${TARGETS.oursOverNaive}x`,
        load.oursOverNaive,
        (v) => v >= TARGETS.oursOverNaive,
      ),
      at(
        'peak RSS / body size',
        `<= ${TARGETS.peakRssOverBody}x`,
        load.peakRssOverBody,
        (v) => v <= TARGETS.peakRssOverBody,
      ),
    );
  }
  if (clean !== undefined)
    out.push(
      at(
        'backfill wall / ideal (no faults)',
        `<= ${TARGETS.backfillWallOverIdeal}x`,
        clean.wallOverIdeal,
        (v) => v <= TARGETS.backfillWallOverIdeal,
      ),
    );
  if (sync !== undefined)
    out.push(
      at(
        'catalogue sync, hostile / faithful server',
        `<= ${TARGETS.syncHostileOverFaithful}x`,
        sync.hostileOverFaithful,
        (v) => v <= TARGETS.syncHostileOverFaithful,
      ),
    );
  if (cli !== undefined)
    out.push(
      ms('adops --help', TARGETS.cliHelpMs, cli.cliHelpMs),
      ms('adops status, empty warehouse', TARGETS.statusEmptyMs, cli.statusMs.empty),
      ms(`adops status, ${int(cli.bigLoads)} report_loads rows`, TARGETS.statusBigMs, cli.statusMs.loads1M),
    );
  if (memory !== undefined)
    for (const [label, bytes] of Object.entries(memory.rssGrowthBytes))
      out.push({
        name: `peak RSS growth, streamed ${label} body (issue 20)`,
        target: `<= ${RSS_GROWTH_LIMIT / 1024 / 1024} MiB`,
        measured: bytes / 1024 / 1024,
        met: bytes <= RSS_GROWTH_LIMIT,
        unit: 'MiB',
      });
  if (pull !== undefined) {
    out.push(ms(`worker CPU per ${pull.rowsPerPull}-row pull`, TARGETS.cpuMsPerPull, pull.cpuMsPerPull));
    // Issue 26: the rate-bound backfill holds on either queue backend.
    for (const backend of QUEUE_BACKENDS) {
      const b = pull.backends[backend];
      out.push(
        at(
          `backfill of ${int(b.bound.pulls)} pulls / the rate limit's bound, ${BACKEND_NAMES[backend]} queue`,
          `<= ${TARGETS.backfillOverRateBound}x`,
          b.backfillOverRateBound,
          (v) => v <= TARGETS.backfillOverRateBound,
        ),
      );
    }
  }
  return out;
}

function at(name: string, target: string, measured: number, ok: (v: number) => boolean): TargetCheck {
  return { name, target, measured, met: ok(measured) };
}

function ms(name: string, limitMs: number, measured: number): TargetCheck {
  return { name, target: `<= ${limitMs} ms`, measured, met: measured <= limitMs, unit: 'ms' };
}

/** How each queue backend is named in tables and target names. */
const BACKEND_NAMES: Record<QueueBackendKind, string> = { redis: 'Redis', postgres: 'Postgres' };

/** No colours: the table is read in logs and pasted into BENCHMARKS.md. */
const PLAIN = { style: { head: [], border: [] } };

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const x = (n: number) => `${n.toFixed(2)}x`;
const ms2 = (n: number) => n.toFixed(2);
const pct = (share: number) => `${Math.round(share * 100)}%`;

/** The human-readable report printed at the end of a run. */
export function renderResults(r: Results): string {
  const parts: string[] = [];
  const m = r.machine;
  if (isBusy(m))
    parts.push(
      `WARNING: the machine was not quiet when the run began (${Math.round(m.busyBeforeRun * 100)}% CPU busy, load average ${m.loadAverage1m.toFixed(1)}): other work shares the CPUs, so these figures understate what the code can do.`,
    );
  parts.push(
    `machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}, Postgres ${m.postgres}, Redis ${m.redis}`,
  );
  if (r.load !== undefined) {
    const l = r.load;
    const t = new Table({ head: ['load path', 'time', 'rows/s', 'ours / this'], ...PLAIN });
    t.push(
      [
        'ours: gzip, parse, reconcile, COPY (loadPulledPeriod)',
        secs(l.ours.bestMs),
        int(l.ours.rowsPerSecond),
        '1.00x',
      ],
      [
        'limit: psql \\copy of the same rows as CSV',
        secs(l.limit.bestMs),
        int(l.limit.rowsPerSecond),
        x(l.oursOverLimit),
      ],
      [
        'limit: psql \\copy of the same rows from a COPY binary file',
        secs(l.binaryLimit.bestMs),
        int(l.binaryLimit.rowsPerSecond),
        x(l.oursOverBinaryCopy),
      ],
      [
        `naive: INSERT per row, one transaction (${int(l.naive.sampleRows)}-row sample, extrapolated)`,
        `${secs(l.naive.extrapolatedMs)} (est.)`,
        int(l.naive.rowsPerSecond),
        x(l.oursOverNaive),
      ],
    );
    parts.push(
      `load path: ${int(l.rows)} rows, body ${mb(l.bodyBytes)}, best of ${l.ours.runsMs.length} runs each\n${t.toString()}`,
    );
    parts.push(
      `our peak RSS ${mb(l.peakRssBytes)} (${mb(l.rssBeforeLoadBytes)} before the load, body read) = ${x(l.peakRssOverBody)} the body; reconciled: ${l.reconciled}`,
    );
    const p = new Table({ head: ['phase (separate run)', 'time'], ...PLAIN });
    for (const [name, ms] of Object.entries(l.phasesMs)) p.push([name, secs(ms)]);
    parts.push(p.toString());
  }
  if (r.parser !== undefined) parts.push(renderParser(r.parser));
  if (r.sync !== undefined) parts.push(renderSync(r.sync));
  if (r.cli !== undefined) parts.push(renderCli(r.cli));
  if (r.memory !== undefined) parts.push(renderMemory(r.memory));
  if (r.pull !== undefined) parts.push(renderPull(r.pull));
  if (r.emulator !== undefined) {
    const e = r.emulator;
    parts.push(
      `emulator: ${int(e.items)} items (${mb(e.bytes)}) in ${secs(e.warmMs)} warm (${secs(e.coldMs)} cold): ${int(e.itemsPerSecond)} items/s, ${e.megabytesPerSecond.toFixed(0)} MB/s` +
        (e.overOurLoad === undefined ? '' : `, ${x(e.overOurLoad)} our load rate`),
    );
  }
  if (r.backfill !== undefined) {
    const t = new Table({
      head: [
        'backfill',
        'pulls',
        'failed',
        'requests',
        '500s',
        'wall',
        'ideal',
        'wall / ideal',
        'CPU floor / ideal',
        'pulls/s',
        'rows',
        'pull / fetch / load, mean (p95) ms',
        'CPU s: machine / workers / Postgres / Redis / harness+emulator',
      ],
      ...PLAIN,
    });
    const { capacity, ...scenarios } = r.backfill;
    for (const [name, b] of Object.entries(scenarios))
      t.push([
        `${name} (${Math.round(b.failRate * 100)}% 500s)`,
        int(b.pulls),
        int(b.failed),
        int(b.requests),
        int(b.injected500s),
        secs(b.wallMs),
        secs(b.idealMs),
        `${x(b.wallOverIdeal)}${b.runsWallOverIdeal === undefined ? '' : ` (runs: ${b.runsWallOverIdeal.map(x).join(', ')})`}`,
        x(b.cpuFloorOverIdeal),
        b.pullsPerSecond.toFixed(1),
        int(b.rowsLoaded),
        `${b.meanPullMs.toFixed(0)} / ${b.meanFetchMs.toFixed(0)} / ${b.meanLoadMs.toFixed(0)} (${b.p95PullMs.toFixed(0)} / ${b.p95FetchMs.toFixed(0)} / ${b.p95LoadMs.toFixed(0)})`,
        `${b.machineBusyCpuSeconds.toFixed(1)} (${Math.round(b.cpuBusy * 100)}%) / ${b.workersCpuSeconds.toFixed(1)} / ${b.postgresCpuSeconds.toFixed(1)} / ${b.redisCpuSeconds.toFixed(1)} / ${b.harnessCpuSeconds.toFixed(1)}`,
      ]);
    const o = r.options;
    parts.push(
      `backfill: ${o.days} days x the default reports, ${o.workers} workers x concurrency ${o.concurrency}, latency ${o.latencyMs} ms; ideal = requests x latency / ${o.workers * o.concurrency}; CPU floor = the machine's busy CPU seconds / ${r.machine.cpus} CPUs; best run shown\n${t.toString()}`,
    );
    if (capacity !== undefined)
      parts.push(
        `capacity: with no latency the same backfill runs at ${capacity.pullsPerSecond.toFixed(1)} pulls/s ` +
          `(${secs(capacity.wallMs)}, CPUs ${Math.round(capacity.cpuBusy * 100)}% busy); the ideal needs ` +
          `${capacity.idealPullsPerSecond.toFixed(0)} pulls/s, ${x(TARGETS.backfillWallOverIdeal)} of it ` +
          `${capacity.targetPullsPerSecond.toFixed(0)} pulls/s` +
          (capacity.pullsPerSecond < capacity.targetPullsPerSecond
            ? ': this machine cannot reach the target at any latency'
            : ''),
      );
  }
  const bi = r.scale?.biQuery;
  if (bi !== undefined)
    parts.push(
      `scale, BI query (${bi.query}) on ${int(bi.rows)} rows over ${bi.months} months: partitioned ` +
        `${bi.partitionedMs.toFixed(1)} ms (${bi.partitionsScanned} partition read), unpartitioned ` +
        `${bi.unpartitionedMs.toFixed(1)} ms: ${x(bi.speedup)} faster partitioned`,
    );
  const t = new Table({ head: ['target', 'wanted', 'measured', 'met'], ...PLAIN });
  for (const c of r.targets)
    t.push([
      c.name,
      c.target,
      c.unit === 'ms'
        ? `${c.measured < 10 ? c.measured.toFixed(2) : int(c.measured)} ms`
        : c.unit === 'MiB'
          ? `${c.measured.toFixed(1)} MiB`
          : x(c.measured),
      c.met ? 'yes' : 'NO',
    ]);
  parts.push(t.toString());
  return parts.join('\n\n');
}

/** The parser comparison: each reader's best time and its speed against ours. */
function renderParser(p: ParserFigures): string {
  const t = new Table({
    head: ['report body into typed rows', 'time', 'rows/s', 'MB/s', 'ours / this'],
    ...PLAIN,
  });
  for (const run of [p.ours, p.jsonParse, p.streamparser])
    t.push([
      run.name,
      secs(run.bestMs),
      int(run.rowsPerSecond),
      (p.bodyBytes / 1e6 / (run.bestMs / 1000)).toFixed(0),
      x(run.bestMs / p.ours.bestMs),
    ]);
  return `parser: ${int(p.rows)} rows, body ${mb(p.bodyBytes)}, best of ${p.ours.runsMs.length} runs each\n${t.toString()}`;
}

/** The sync comparison: faithful against hostile server, and the ratio issue 15 bounds at 3x. */
function renderSync(s: SyncFigures): string {
  const t = new Table({
    head: ['catalogue sync', 'wall', 'requests', '429s', '5xx and drops', 'over faithful'],
    ...PLAIN,
  });
  t.push(
    [
      'faithful server',
      secs(s.faithful.wallMs),
      int(s.faithful.requests),
      int(s.faithful.rateLimited),
      int(s.faithful.failed),
      '1.00x',
    ],
    [
      'hostile profile',
      secs(s.hostile.wallMs),
      int(s.hostile.requests),
      int(s.hostile.rateLimited),
      int(s.hostile.failed),
      x(s.hostileOverFaithful),
    ],
  );
  return `sync: ${int(s.campaigns)} campaigns through a worker at ${s.rateLimitPerSecond} requests/s\n${t.toString()}`;
}

/** The CLI's answer times beside `node -e 0`'s. */
function renderCli(c: CliSummary): string {
  const t = new Table({ head: ['command', 'best wall', 'over node -e 0'], ...PLAIN });
  const rows: Array<[string, number]> = [
    ['node -e 0', c.nodeMs],
    ['adops --help', c.cliHelpMs],
    ['adops status, empty warehouse', c.statusMs.empty],
    [`adops status, ${int(c.bigLoads)} report_loads rows`, c.statusMs.loads1M],
  ];
  for (const [name, wall] of rows) t.push([name, `${int(wall)} ms`, x(wall / c.nodeMs)]);
  return `cli: best of ${c.help.runsMs.length} runs each\n${t.toString()}`;
}

function renderMemory(m: MemorySummary): string {
  const t = new Table({ head: ['streamed body', 'rows', 'load time', 'peak RSS growth'], ...PLAIN });
  for (const p of m.points) t.push([mb(p.bodyBytes), int(p.rows), secs(p.ms), mb(p.growthBytes)]);
  return `memory: one worker loading one body as it streams in (plot: ${m.plot})\n${t.toString()}`;
}

/**
 * Worker CPU per small pull (on Redis), and a column per queue backend: the rate-bound backfill
 * against its bound, and the capacity with no rate limit, side by side.
 */
export function renderPull(p: PullFigures): string {
  const t = new Table({
    head: ['pull', ...QUEUE_BACKENDS.map((b) => `${BACKEND_NAMES[b]} queue`)],
    ...PLAIN,
  });
  const row = (label: string, cell: (b: PullFigures['backends'][QueueBackendKind]) => string) =>
    t.push([label, ...QUEUE_BACKENDS.map((b) => cell(p.backends[b]))]);
  const { bound, capacity } = p.backends.redis;
  t.push([
    `worker CPU per ${p.rowsPerPull}-row pull (best of ${p.cpuMsPerPullRuns.length} rounds of ${int(p.cpuPulls)} pulls, 1 worker)`,
    `${p.cpuMsPerPull.toFixed(2)} ms`,
    ...QUEUE_BACKENDS.slice(1).map(() => 'not measured'),
  ]);
  row(
    `${int(bound.pulls)} pulls at ${bound.ratePerSecond}/s, ${bound.workers} workers x ${bound.concurrency}, latency ${bound.latencyMs} ms: wall / rate bound (${secs(bound.boundMs)})`,
    (b) => `${secs(b.bound.wallMs)} = ${x(b.backfillOverRateBound)} (CPUs ${pct(b.bound.machineBusy)} busy)`,
  );
  row(
    `capacity: ${int(capacity.pulls)} pulls, no rate limit or latency, ${capacity.workers} workers x ${capacity.concurrency}`,
    (b) =>
      `${int(b.capacity.pullsPerSecond)} pulls/s (${secs(b.capacity.wallMs)}; CPUs ${pct(b.capacity.machineBusy)} busy)`,
  );
  row(
    'CPU per pull in the capacity run: workers + Postgres + Redis = total (informational)',
    (b) =>
      `${ms2(b.capacity.workerCpuMsPerPull)} + ${ms2(b.capacity.postgresCpuMsPerPull)} + ${ms2(b.capacity.redisCpuMsPerPull)} = ${ms2(b.capacity.totalCpuMsPerPull)} ms`,
  );
  return `pull:\n${t.toString()}`;
}
