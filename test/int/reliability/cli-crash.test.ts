// The real command line end to end: `adops worker` processes SIGKILLed mid-backfill and replaced,
// `adops backfill --wait` run again over the same periods. Every period ends exact, once, and the
// key is in none of the commands' output.
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { qualified } from '../../../src/platform/pg/handle.js';
import { spawnCli, type CliProcess } from '../../helpers/cli.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { until } from '../../helpers/reliability/child.js';
import { figureBook } from '../../helpers/reliability/figures.js';
import { FROM, openSuite, reportRequests, TO, type Suite } from '../../helpers/reliability/suite.js';
import { verify } from '../../helpers/reliability/truth.js';

let suite: Suite;
const book = figureBook('cli-crash');
const workers: CliProcess[] = [];
const TOTAL = 12;

beforeAll(async () => {
  suite = await openSuite();
});
afterAll(async () => {
  book.flush(inject('runId'));
  for (const w of workers) {
    await w.kill();
    suite.logLines.push(...w.stderr().split('\n'), ...w.stdout().split('\n'));
  }
  await suite?.close();
});

/** Runs `adops <args>` in this process; resolves with its exit code and output. */
async function adops(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; out: string; err: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let o = '';
  let e = '';
  out.on('data', (c: Buffer) => (o += c.toString()));
  err.on('data', (c: Buffer) => (e += c.toString()));
  const code = await main(['node', 'adops', ...args], env, out, err);
  suite.logLines.push(...o.split('\n'), ...e.split('\n'));
  return { code, out: o, err: e };
}

describe('adops worker killed mid-backfill', () => {
  it('a replacement worker and a second backfill --wait end with every period exact and once', async () => {
    const started = Date.now();
    const { db, env } = await suite.newCase();
    suite.emulator.resetStats();
    // Slow answers keep the backfill running long enough to kill a worker in the middle of it.
    suite.emulator.setFaults({ latencyMs: 150, paths: ['/v2/reports'] });
    const reports = ['--report', 'daily_campaign,daily_zone', '--from', FROM, '--to', TO];
    const first = spawnCli(['worker', '--concurrency', '1', '--stall-seconds', '2'], env);
    workers.push(first);
    await first.waitFor(/worker started/);
    const enqueued = await adops(['backfill', ...reports], env);
    expect(enqueued.code).toBe(0);
    const loaded = async () =>
      (
        await db.pool.query<{ n: number }>(
          `SELECT count(DISTINCT (report, period_start))::int AS n FROM ${qualified(TEST_SCHEMA, 'report_loads')} WHERE status = 'loaded'`,
        )
      ).rows[0]?.n ?? 0;
    await until('three periods loaded by the first worker', async () =>
      (await loaded()) >= 3 ? true : undefined,
    );
    expect(await first.kill()).toBe('SIGKILL');
    const loadedAtKill = await loaded();

    const second = spawnCli(['worker', '--concurrency', '2', '--stall-seconds', '2'], env);
    workers.push(second);
    await second.waitFor(/worker started/);
    suite.emulator.setFaults({});
    // Waits for the pulls still queued (and the killed one, once the stall check frees it), and
    // pulls again the periods already loaded: that must replace them, not add to them.
    const waited = await adops(['backfill', ...reports, '--wait'], env);
    expect(waited.code).toBe(0);
    const verdict = await verify(db.pool, TEST_SCHEMA, suite.reports, suite.truth);
    // SIGTERM drains and exits 0.
    expect(await second.kill('SIGTERM')).toBe(0);
    book.add({
      id: 'cli/worker-sigkill',
      title: 'adops worker SIGKILLed mid-backfill (real CLI)',
      injected: `adops worker killed after ${loadedAtKill} of ${TOTAL} periods; a second worker started; adops backfill --wait run again`,
      periodsExact: verdict.exact,
      periodsTotal: verdict.total,
      duplicates: verdict.duplicates,
      retries: reportRequests(suite.emulator) - TOTAL,
      failedAsExpected: 0,
      notes: `${waited.out.trim().split('\n').at(-1) ?? ''}; retries here include the deliberate second pull of loaded periods`,
      ms: Date.now() - started,
    });
    expect(loadedAtKill).toBeLessThan(TOTAL);
    expect(verdict.problems).toEqual([]);
    expect(verdict).toMatchObject({ exact: TOTAL, total: TOTAL, duplicates: 0 });
  });

  it('leaks the key into no command output, Redis key or value, or database dump', async () => {
    for (const w of workers) suite.logLines.push(...w.stderr().split('\n'), ...w.stdout().split('\n'));
    workers.length = 0;
    const scans = await suite.scan();
    expect(scans.flatMap((s) => s.found)).toEqual([]);
    expect(suite.logLines.filter((l) => l.includes('"msg"')).length).toBeGreaterThan(5);
  });
});
