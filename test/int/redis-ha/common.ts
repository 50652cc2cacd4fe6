// What the Redis HA tests share: the CLI run in-process, the per-period load counts, and a
// reference warehouse loaded through the shared single Redis to compare a run against.
import { Writable } from 'node:stream';
import { main } from '../../../src/cli/main.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { createHarness, snapshot, type Harness } from '../../helpers/pipeline.js';

/** Runs `adops` in this process with `env`. */
export async function adops(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const sink = (into: string[]) =>
    new Writable({
      write(chunk: Buffer | string, _enc, done) {
        into.push(chunk.toString());
        done();
      },
    });
  const code = await main(['node', 'adops', ...args], env, sink(out), sink(err));
  return { code, out: out.join(''), err: err.join('') };
}

/** Loaded attempts per report and period, in no order. */
export async function loadedPerPeriod(h: Harness): Promise<number[]> {
  const { rows } = await h.db.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM "${TEST_SCHEMA}".report_loads WHERE status = 'loaded'
      GROUP BY report, period_start, period_end`,
  );
  return rows.map((r) => Number(r.n));
}

/** Periods with a current load (a report_totals row). */
export async function totalsRows(h: Harness): Promise<number> {
  const { rows } = await h.db.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM "${TEST_SCHEMA}".report_totals`,
  );
  return Number(rows[0]?.n);
}

/** The warehouse a fault-free backfill of `from..to` leaves, loaded through the shared Redis. */
export async function referenceRun(from: string, to: string): Promise<Record<string, unknown[]>> {
  const h = await createHarness();
  try {
    await h.worker({ concurrency: 6 });
    const { pulls } = await enqueueBackfill(h.queues.pulls, h.jobs.reports, from, to);
    const result = await waitForPulls(h.queues.pulls, pulls, { pollMs: 100 });
    if (result.failed.length > 0) throw new Error(`the reference run failed ${result.failed.length} pulls`);
    return await snapshot(h.db.pool, h.jobs);
  } finally {
    await h.close();
  }
}
