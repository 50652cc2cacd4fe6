// Report evolution under load: a report's dimensions change while a worker runs and a BI reader
// loops; the stable views keep answering, switch to the new version once it covers every period,
// and end equal, row for row, to a fresh run of the new shape.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { addDays, localDate } from '../../../src/platform/dates/calendar.js';
import { loadJobs, liveJobs } from '../../../src/platform/config/jobs.js';
import { createLogger } from '../../../src/platform/log/logger.js';
import { enqueueBackfill, waitForPulls, enqueuePulls } from '../../../src/schedule/enqueue.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { createHarness, type Harness } from '../../helpers/pipeline.js';
import { until } from '../../helpers/wait.js';

let h: Harness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const S = TEST_SCHEMA;
const definition = (name: string, dims: string) => `name: ${name}\ndimensions: [${dims}]\nperiod: day\n`;

/** Runs `adops <args>` in-process; its exit code and stdout. */
async function adops(env: Record<string, string>, ...args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const stdout = { write: (s: string) => ((out += s), true) } as unknown as NodeJS.WritableStream;
  const stderr = { write: () => true } as unknown as NodeJS.WritableStream;
  return { code: await main(['node', 'adops', ...args], env, stdout, stderr), out };
}

const COLUMNS =
  'period_start, day, campaign_id, country, ad_requests, filled_impressions, impressions, measurable_impressions, viewable_impressions';

describe('report evolution', () => {
  it('a dimension change under load switches the stable views once covered, never failing or emptying a bi_ query, and ends equal to a fresh run of the new shape', async () => {
    dir = mkdtempSync(join(tmpdir(), 'adops-evolve-'));
    writeFileSync(join(dir, 'evo.yaml'), definition('evo', 'day, campaign_id'));
    h = await createHarness({ env: { ADOPS_JOBS_DIR: dir }, jobs: loadJobs(dir) });
    const env = h.env;
    expect((await adops(env, 'migrate')).code).toBe(0);
    await h.worker({
      liveJobs: liveJobs(dir, h.jobs, { checkEveryMs: 0 }),
      concurrency: 2,
      logger: createLogger({ level: 'warn', secrets: [] }),
    });
    const yesterday = addDays(localDate(new Date(), 'UTC'), -1);
    const from = addDays(yesterday, -5);
    const old = await enqueueBackfill(h.queues.pulls, loadJobs(dir).reports, from, yesterday);
    expect((await waitForPulls(h.queues.pulls, old.pulls, { pollMs: 50 })).failed).toEqual([]);
    const before = await h.db.pool.query<{ day: string; impressions: string }>(
      `SELECT day::text, sum(impressions)::text AS impressions FROM "${S}".bi_evo GROUP BY day ORDER BY day`,
    );
    expect(before.rows).toHaveLength(6);

    // A BI reader loops through everything that follows.
    const oldRows = await h.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${S}".bi_evo`);
    const reads = { ok: 0, empty: 0, fewest: Infinity, errors: [] as string[] };
    let reading = true;
    const reader = (async () => {
      while (reading) {
        try {
          const { rows } = await h!.db.pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM "${S}".bi_evo`,
          );
          const n = rows[0]?.n ?? 0;
          reads.fewest = Math.min(reads.fewest, n);
          if (n > 0) reads.ok++;
          else reads.empty++;
        } catch (error) {
          reads.errors.push((error as Error).message);
          if (reads.errors.length > 20) break;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();

    // Loads keep running while the definition changes: a second backfill is in flight.
    const during = await enqueueBackfill(
      h.queues.pulls,
      loadJobs(dir).reports,
      addDays(from, -3),
      addDays(from, -1),
    );
    writeFileSync(join(dir, 'evo.yaml'), definition('evo', 'day, campaign_id, country'));
    const migrated = await adops(env, 'migrate');
    expect(migrated.code).toBe(0);
    expect(migrated.out).toMatch(/started: evo loads version 2/);
    expect(migrated.out).toMatch(/enqueued \d+ pulls of the new shapes, newest first/);
    await waitForPulls(h.queues.pulls, during.pulls, { pollMs: 50 });

    const state = async () =>
      (
        await h!.db.pool.query<{ version: number; state: string }>(
          `SELECT version, state FROM "${S}".report_versions WHERE report = 'evo' ORDER BY version`,
        )
      ).rows;
    await until(
      'version 2 serving',
      async () => (await state()).some((v) => v.version === 2 && v.state === 'serving'),
      60_000,
      100,
    );
    reading = false;
    await reader;
    expect(reads.errors).toEqual([]);
    expect(reads.empty).toBe(0);
    expect(reads.ok).toBeGreaterThan(10);
    // Never a half-built version: the new shape splits each old row by country, so a view switched
    // before every old period was covered would show fewer rows than the old version had.
    expect(reads.fewest).toBeGreaterThanOrEqual(oldRows.rows[0]?.n ?? Infinity);
    expect(await state()).toEqual([
      { version: 1, state: 'retired' },
      { version: 2, state: 'serving' },
    ]);

    // The stable name is now a view over version 2, with the new column, and bi_ follows it.
    const kind = await h.db.pool.query<{ relkind: string }>(
      `SELECT relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE nspname = $1 AND relname = 'report_evo'`,
      [S],
    );
    expect(kind.rows[0]?.relkind).toBe('v');
    // bi_campaign_pacing, set aside for the swap, reads the stable name again, not the retired table.
    const pacing = await h.db.pool.query<{ d: string }>(`SELECT pg_get_viewdef($1::regclass) AS d`, [
      `"${S}".bi_campaign_pacing`,
    ]);
    expect(pacing.rows[0]?.d).toMatch(/report_evo(?!_)/);
    expect(pacing.rows[0]?.d).not.toMatch(/report_evo__v1/);
    const after = await h.db.pool.query<{ day: string; impressions: string }>(
      `SELECT day::text, sum(impressions)::text AS impressions FROM "${S}".bi_evo
        WHERE day BETWEEN $1 AND $2 GROUP BY day ORDER BY day`,
      [from, yesterday],
    );
    expect(after.rows).toEqual(before.rows);

    // Row for row, the same as a fresh run of the new shape.
    writeFileSync(join(dir, 'fresh.yaml'), definition('fresh', 'day, campaign_id, country'));
    expect((await adops(env, 'migrate')).code).toBe(0);
    const fresh = await enqueueBackfill(
      h.queues.pulls,
      loadJobs(dir).reports.filter((r) => r.name === 'fresh'),
      addDays(from, -3),
      yesterday,
    );
    expect((await waitForPulls(h.queues.pulls, fresh.pulls, { pollMs: 50 })).failed).toEqual([]);
    const diff = await h.db.pool.query(
      `(SELECT ${COLUMNS} FROM "${S}".report_evo EXCEPT ALL SELECT ${COLUMNS} FROM "${S}".report_fresh)
       UNION ALL
       (SELECT ${COLUMNS} FROM "${S}".report_fresh EXCEPT ALL SELECT ${COLUMNS} FROM "${S}".report_evo)`,
    );
    expect(diff.rows).toEqual([]);
    const total = await h.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${S}".report_evo`);
    expect(total.rows[0]?.n).toBeGreaterThan(0);

    // status shows nothing pending any more; evolve --drop-old removes the old table.
    const evolve = await adops(env, 'evolve', '--report', 'evo', '--drop-old');
    expect(evolve.code).toBe(0);
    expect(evolve.out).toMatch(/dropped .*report_evo__v1/);
    expect(evolve.out).toMatch(/evo: version 2/);
    const left = await h.db.pool.query(`SELECT to_regclass($1) AS t`, [`"${S}".report_evo__v1`]);
    expect(left.rows[0]?.t).toBeNull();
  }, 180_000);

  it('a pull started before the swap that lands after it is refused as superseded, and status and heal see its period missing until heal loads it into the serving version', async () => {
    dir = mkdtempSync(join(tmpdir(), 'adops-evolve-race-'));
    writeFileSync(join(dir, 'race.yaml'), definition('race', 'day, campaign_id'));
    h = await createHarness({ env: { ADOPS_JOBS_DIR: dir }, jobs: loadJobs(dir) });
    const env = h.env;
    const pool = h.db.pool;
    expect((await adops(env, 'migrate')).code).toBe(0);
    // Two slots: one held by the slow pull, one for the new shape's pulls.
    await h.worker({
      liveJobs: liveJobs(dir, h.jobs, { checkEveryMs: 0 }),
      concurrency: 2,
      logger: createLogger({ level: 'warn', secrets: [] }),
    });
    const yesterday = addDays(localDate(new Date(), 'UTC'), -1);
    const slow = addDays(yesterday, -1);
    const others = [addDays(yesterday, -4), addDays(yesterday, -3), addDays(yesterday, -2)];
    const first = await enqueueBackfill(h.queues.pulls, loadJobs(dir).reports, others[0]!, others[2]!);
    expect((await waitForPulls(h.queues.pulls, first.pulls, { pollMs: 50 })).failed).toEqual([]);

    // The slow pull: it reads the old definition and fetches, then its load waits on the period's
    // lock, which this connection holds until the new version has swapped in.
    const holder = await pool.connect();
    let held = true;
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))', [
        `${S}.race`,
        `${slow}/${slow}`,
      ]);
      const [pull] = await enqueuePulls(h.queues.pulls, [
        { report: 'race', period: { start: slow, end: slow } },
      ]);
      await until(
        'the pull waiting on the advisory lock',
        async () => {
          const { rows } = await pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
          );
          return (rows[0]?.n ?? 0) > 0;
        },
        60_000,
        100,
      );

      // The dimensions change; the new version covers every period the old one holds and swaps.
      writeFileSync(join(dir, 'race.yaml'), definition('race', 'day, campaign_id, country'));
      const migrated = await adops(env, 'migrate');
      expect(migrated.code).toBe(0);
      const versions = async () =>
        (
          await pool.query<{ version: number; state: string }>(
            `SELECT version, state FROM "${S}".report_versions WHERE report = 'race' ORDER BY version`,
          )
        ).rows;
      await until(
        'version 2 serving',
        async () => (await versions()).some((v) => v.version === 2 && v.state === 'serving'),
        60_000,
        100,
      );
      expect(await versions()).toEqual([
        { version: 1, state: 'retired' },
        { version: 2, state: 'serving' },
      ]);

      // Now the slow pull's load goes on, after the swap.
      await holder.query('ROLLBACK');
      held = false;
      const done = await waitForPulls(h.queues.pulls, [pull!], { pollMs: 50 });
      expect(done.failed).toEqual([]);
    } finally {
      if (held) await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
    }

    // Refused: recorded as superseded by the serving version, nothing written to the retired table.
    const attempt = await pool.query<{ status: string; dimensions: string[]; error: string | null }>(
      `SELECT status, dimensions, error FROM "${S}".report_loads WHERE report = 'race' AND period_start = $1
        ORDER BY load_id`,
      [slow],
    );
    expect(attempt.rows).toHaveLength(1);
    expect(attempt.rows[0]).toMatchObject({ status: 'superseded', dimensions: ['day', 'campaign_id'] });
    expect(attempt.rows[0]?.error).toMatch(/version 1 .*retired.*report_race.* version 2/);
    const inRetired = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${S}".report_race__v1 WHERE period_start = $1`,
      [slow],
    );
    expect(inRetired.rows[0]?.n).toBe(0);
    const served = async () =>
      (
        await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${S}".report_race WHERE day = $1`, [
          slow,
        ])
      ).rows[0]?.n ?? 0;
    expect(await served()).toBe(0);

    // status counts only loads of the serving version: the period is missing, and heal pulls it.
    const missing = async () => {
      const status = await adops(env, 'status', '--json');
      expect(status.code).toBe(0);
      const race = (
        JSON.parse(status.out) as { reports: Array<{ report: string; missing: string[] }> }
      ).reports.find((r) => r.report === 'race');
      return race?.missing ?? [];
    };
    expect(await missing()).toContain(slow);
    const dry = await adops(env, 'heal', '--dry-run', '--days', '7');
    expect(dry.code).toBe(0);
    // With yesterday, never pulled: consecutive days in one request (days_per_request).
    expect(dry.out).toContain(`race ${slow}..${yesterday}\n`);
    for (const d of others) expect(dry.out).not.toContain(d);

    const heal = await adops(env, 'heal', '--days', '7', '--wait');
    expect(heal.code).toBe(0);
    expect(await served()).toBeGreaterThan(0);
    expect(await missing()).not.toContain(slow);
    const healed = await pool.query<{ dimensions: string[] }>(
      `SELECT dimensions FROM "${S}".report_loads WHERE report = 'race' AND period_start = $1 AND status = 'loaded'`,
      [slow],
    );
    expect(healed.rows.map((r) => r.dimensions)).toEqual([['day', 'campaign_id', 'country']]);
  }, 180_000);
});
