// A running worker follows its jobs folder: a definition added while it runs is pulled by the next
// backfill without a restart, and a pull of a deleted definition fails with that reason.
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { loadJobs, liveJobs } from '../../../src/platform/config/jobs.js';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { createHarness, lastDays, type Harness } from '../../helpers/pipeline.js';

let h: Harness | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const quiet = { write: () => true } as unknown as NodeJS.WritableStream;

describe('live job definitions', () => {
  it('a definition added while the worker runs is loaded by the next backfill; a deleted one fails with its reason', async () => {
    dir = mkdtempSync(join(tmpdir(), 'adops-live-'));
    copyFileSync(join('jobs', 'daily_zone.yaml'), join(dir, 'daily_zone.yaml'));
    h = await createHarness({ env: { ADOPS_JOBS_DIR: dir }, jobs: loadJobs(dir) });
    await h.worker({ liveJobs: liveJobs(dir, h.jobs, { checkEveryMs: 0 }) });

    writeFileSync(
      join(dir, 'zone_by_country.yaml'),
      'name: zone_by_country\ndimensions: [day, zone_id, country]\nperiod: day\n',
    );
    expect(await main(['node', 'adops', 'migrate'], h.env, quiet, quiet)).toBe(0);
    const added = loadJobs(dir).reports.filter((r) => r.name === 'zone_by_country');
    const { from, to } = lastDays(2);
    const first = await enqueueBackfill(h.queues.pulls, added, from, to);
    const run = await waitForPulls(h.queues.pulls, first.pulls, { pollMs: 50 });
    expect(run.failed).toEqual([]);
    const { rows } = await h.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${TEST_SCHEMA}".report_zone_by_country`,
    );
    expect(rows[0]?.n).toBeGreaterThan(0);

    rmSync(join(dir, 'zone_by_country.yaml'));
    const second = await enqueueBackfill(h.queues.pulls, added, to, to);
    const after = await waitForPulls(h.queues.pulls, second.pulls, { pollMs: 50 });
    expect(after.failed).toHaveLength(1);
    expect(after.failed[0]?.reason).toMatch(/report "zone_by_country" has no job definition/);
  });
});
