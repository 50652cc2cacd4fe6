// Each sink redacts the key itself, whichever path brought it there: an error from any fetcher or
// sync (not only the product's API client, which redacts what it quotes) must reach report_loads,
// BullMQ's failedReason and stacktrace without it; an archived body is stored redacted beside the
// digest of the body as received; the CLI's last word redacts the key read from ADOPS_API_KEY_FILE.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueueEvents } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { enqueueBackfill, waitForPulls } from '../../../src/schedule/enqueue.js';
import { ENTITY_QUEUE } from '../../../src/platform/queue/jobs.js';
import { enqueueEntitySync } from '../../../src/catalogue/enqueue.js';
import { ReportBody } from '../../../src/api/body.js';
import type { ReportFetcher } from '../../../src/pull/run.js';
import { TEST_SCHEMA } from '../../helpers/db.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { canaryKey, createHarness, lastDays, type Harness } from '../../helpers/pipeline.js';
import { runCli } from '../../helpers/run-cli.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A fetcher standing for any client: it answers `body`, or throws an error quoting the key. */
function echoingFetcher(key: string, body?: string): ReportFetcher {
  return {
    fetchReport: async () => {
      if (body === undefined) throw new Error(`upstream refused key ${key} (${encodeURIComponent(key)})`);
      // As the API client hands a body on: the key redacted by ReportBody, its received digest kept.
      return {
        body: new ReportBody(Buffer.from(body), [key]),
        fetchedAt: new Date(),
        attempts: 1,
        fetchMs: 1,
      };
    },
  };
}

describe('sinks redact the key themselves', () => {
  it('a pull error quoting the key reaches report_loads, failedReason and stacktrace redacted', async () => {
    const key = canaryKey();
    h = await createHarness({ apiKey: key, env: { ADOPS_PULL_ATTEMPTS: '1' } });
    await h.worker({ fetcher: echoingFetcher(key) });
    const { to } = lastDays(1);
    const report = h.jobs.reports.find((r) => r.name === 'daily_zone');
    if (report === undefined) throw new Error('jobs/ has no daily_zone');
    const { pulls } = await enqueueBackfill(h.queues.pulls, [report], to, to);
    const result = await waitForPulls(h.queues.pulls, pulls, { pollMs: 50 });
    expect(result.failed).toHaveLength(1);
    const [job] = await h.queues.pulls.getFailed();
    expect(job?.failedReason).toContain('upstream refused key [REDACTED]');
    expect(JSON.stringify([job?.failedReason, job?.stacktrace])).not.toContain(key);
    const { rows } = await h.db.pool.query<{ error: string }>(
      `SELECT error FROM "${TEST_SCHEMA}".report_loads WHERE status = 'failed'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.error).toContain('[REDACTED]');
    expect(rows[0]?.error).not.toContain(key);
  });

  it('an archived body is stored redacted, with the SHA-256 of the body as received, and replays', async () => {
    const key = canaryKey();
    h = await createHarness({ apiKey: key });
    const { to } = lastDays(1);
    const counters = {
      ad_requests: 9,
      filled_impressions: 7,
      impressions: 6,
      measurable_impressions: 5,
      viewable_impressions: 4,
    };
    const body = JSON.stringify({ request_key: key, items: { [to]: { '71': counters } }, totals: counters });
    await h.worker({ fetcher: echoingFetcher(key, body) });
    const report = h.jobs.reports.find((r) => r.name === 'daily_zone');
    if (report === undefined) throw new Error('jobs/ has no daily_zone');
    const { pulls } = await enqueueBackfill(h.queues.pulls, [report], to, to);
    expect((await waitForPulls(h.queues.pulls, pulls, { pollMs: 50 })).completed).toHaveLength(1);
    const { rows } = await h.db.pool.query<{
      load_id: string;
      body: Buffer;
      body_sha256: string;
      received_sha256: string;
    }>(`SELECT load_id, body, body_sha256, received_sha256 FROM "${TEST_SCHEMA}".report_raw`);
    expect(rows).toHaveLength(1);
    const stored = rows[0]?.body ?? Buffer.alloc(0);
    expect(stored.toString()).toBe(body.replace(key, '[REDACTED]'));
    expect(rows[0]?.body_sha256).toBe(createHash('sha256').update(stored).digest('hex'));
    expect(rows[0]?.received_sha256).toBe(createHash('sha256').update(body).digest('hex'));
    // The key is no report data: the redacted body replays to the same row.
    const replay = await runCli(['replay', '--load-id', String(rows[0]?.load_id)], h.env);
    expect(replay.stdout).toMatch(/replayed as load \d+: 1 rows, reconciled/);
    const { rows: loaded } = await h.db.pool.query<{ zone_id: string; ad_requests: string }>(
      `SELECT zone_id::text, ad_requests::text FROM "${TEST_SCHEMA}".report_daily_zone`,
    );
    expect(loaded).toEqual([{ zone_id: '71', ad_requests: '9' }]);
  });

  it('a sync error quoting the key reaches failedReason and stacktrace redacted', async () => {
    const key = canaryKey();
    h = await createHarness({ apiKey: key, env: { ADOPS_SYNC_ATTEMPTS: '1' } });
    await h.worker({
      fetcher: echoingFetcher(key),
      entitySync: async () => {
        throw new Error(`catalogue refused key ${key}`);
      },
    });
    const events = new QueueEvents(ENTITY_QUEUE, { connection: { url: REDIS_URL }, prefix: h.prefix });
    try {
      await events.waitUntilReady();
      const { jobId } = await enqueueEntitySync(h.queues.syncs);
      const job = await h.queues.syncs.getJob(jobId);
      await expect(job?.waitUntilFinished(events, 20_000)).rejects.toThrow('[REDACTED]');
    } finally {
      await events.close();
    }
    const [failed] = await h.queues.syncs.getFailed();
    expect(failed?.failedReason).toContain('catalogue refused key [REDACTED]');
    expect(JSON.stringify([failed?.failedReason, failed?.stacktrace])).not.toContain(key);
  });

  it('a catalogue listing that carries the key inside an entity stores it redacted', async () => {
    h = await createHarness();
    const key = h.env.ADOPS_API_KEY ?? '';
    const first = await fetch(`${h.emulator.url}/campaigns?limit=1`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const [campaign] = ((await first.json()) as { items: Array<Record<string, unknown>> }).items;
    // One page with one campaign whose name quotes the key; its creatives come from the emulator.
    h.emulator.override({
      path: '/v2/campaigns',
      status: 200,
      body: JSON.stringify({ items: [{ ...campaign, name: `for ${key} only` }] }),
    });
    const run = await runCli(['sync', '--direct'], h.env);
    expect(run.code).toBe(0);
    const { rows } = await h.db.pool.query<{ name: string; raw: string }>(
      `SELECT name, to_jsonb(c)::text AS raw FROM "${TEST_SCHEMA}".campaigns c`,
    );
    expect(rows.map((r) => r.name)).toEqual(['for [REDACTED] only']);
    expect(rows[0]?.raw).not.toContain(key);
  });

  it('a key pasted where a setting goes is never printed: base URL, key file, accounts-file field names and values', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'adops-key-'));
    try {
      const args = ['pull', '--dimensions', 'day', '--from', '2026-01-01', '--to', '2026-01-01'];
      const key = canaryKey();
      // A key of letters, digits and _ only also reads as a variable name or a YAML field name.
      const word = `sk_live_${key.slice(-24)}`;
      const accounts = (name: string, entry: string) => {
        const file = join(dir, `${name}.yaml`);
        writeFileSync(file, `accounts:\n  - name: north\n    base_url: http://127.0.0.1:9/v2\n${entry}`);
        return { ADOPS_ACCOUNTS_FILE: file, ADOPS_KEY_NORTH: 'k-north' };
      };
      const named = { ADOPS_ACCOUNTS_FILE: join(dir, 'name.yaml'), K: 'k' };
      writeFileSync(
        named.ADOPS_ACCOUNTS_FILE,
        `- name: ${key}\n  base_url: http://127.0.0.1:9/v2\n  api_key_env: K\n`,
      );
      const cases: Array<[string, Record<string, string>, RegExp]> = [
        [
          'query, masked name',
          { ADOPS_BASE_URL: `https://acme.example.com/v2?api_key=${key}` },
          /ADOPS_BASE_URL/,
        ],
        ['query, plain name', { ADOPS_BASE_URL: `https://acme.example.com/v2?k=${key}` }, /query/],
        ['user info', { ADOPS_BASE_URL: `https://${key}@acme.example.com/v2` }, /no user or password/],
        ['key as the URL', { ADOPS_BASE_URL: key }, /not a valid URL/],
        ['key in the path', { ADOPS_BASE_URL: `https://acme.example.com/${key}` }, /does not end in \/v2/],
        ['key as the key file', { ADOPS_API_KEY_FILE: key }, /ADOPS_API_KEY_FILE.*ENOENT/],
        ['api_key_file', accounts('file', `    api_key_file: ${key}\n`), /api_key_file.*ENOENT/],
        ['api_key_env', accounts('env', `    api_key_env: ${word}\n`), /api_key_env.*not set/],
        [
          'field name',
          accounts('field', `    api_key_env: ADOPS_KEY_NORTH\n    ${word}: 1\n`),
          /unknown field/,
        ],
        [
          'empty field',
          accounts('bare', `    api_key_env: ADOPS_KEY_NORTH\n    ${word}:\n`),
          /unknown field/,
        ],
        ['account name', named, /not an account name/],
      ];
      for (const [what, env, expected] of cases) {
        const run = await runCli(args, { ADOPS_HTTP_ATTEMPTS: '1', ...env });
        expect([what, run.code]).toEqual([what, 2]);
        expect(run.stderr, what).toMatch(expected);
        expect(run.stderr + run.stdout, what).not.toContain(key.slice(-24));
      }
      // A path that reads as one is still named, so the user can see which file was meant.
      const path = await runCli(args, { ADOPS_API_KEY_FILE: join(dir, 'missing-key.txt') });
      expect(path.stderr).toContain(join(dir, 'missing-key.txt'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the CLI redacts a key read from ADOPS_API_KEY_FILE from its last message, as one from ADOPS_API_KEY', async () => {
    const key = canaryKey();
    const dir = mkdtempSync(join(tmpdir(), 'adops-key-'));
    try {
      writeFileSync(join(dir, 'key'), key);
      // A base URL that holds the key (some APIs put it in the path) makes every failure quote it.
      const base = { ADOPS_BASE_URL: `http://127.0.0.1:9/${key}/v2`, ADOPS_HTTP_ATTEMPTS: '1' };
      const args = ['pull', '--dimensions', 'day', '--from', '2026-01-01', '--to', '2026-01-01'];
      for (const env of [
        { ...base, ADOPS_API_KEY: key },
        { ...base, ADOPS_API_KEY_FILE: join(dir, 'key') },
      ]) {
        const run = await runCli(args, env);
        expect(run.code).toBe(1);
        expect(run.stderr).toContain('/[REDACTED]/v2/reports');
        expect(run.stderr + run.stdout).not.toContain(key);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
