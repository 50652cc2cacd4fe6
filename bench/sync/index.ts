// The sync section: a catalogue sync of 250 campaigns through a real worker (queue, shared rate
// limit, per-request retries, checkpoint), once against a faithful server and once against the
// emulator's hostile profile; issue 15 wants the hostile one within 3x the faithful one.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import pg from 'pg';
import { loadConfig } from '../../src/platform/config/env.js';
import { PROFILES, startEmulator } from '../../src/emulator/index.js';
import { enqueueEntitySync, waitForEntitySync } from '../../src/catalogue/enqueue.js';
import { createLogger } from '../../src/platform/log/logger.js';
import { openQueues } from '../../src/platform/queue/queues.js';
import { startWorker } from '../../src/worker/start.js';
import { deleteKeys, onInterrupt } from '../cleanup.js';
import { BENCH_SCHEMA, createBenchDatabase } from '../database.js';
import type { BenchOptions } from '../options.js';

/** The catalogue of issue 15's acceptance: 250 campaigns. */
const CAMPAIGNS = 250;

/** One sync: its wall time and what it cost. */
export interface SyncRun {
  readonly wallMs: number;
  readonly requests: number;
  readonly rateLimited: number;
  readonly failed: number;
  readonly campaigns: number;
  readonly creatives: number;
}

export interface SyncFigures {
  readonly campaigns: number;
  /** ADOPS_RATE_LIMIT of the worker: the API's request budget the sync runs within. */
  readonly rateLimitPerSecond: number;
  readonly faithful: SyncRun;
  readonly hostile: SyncRun;
  readonly hostileOverFaithful: number;
}

/** Times the faithful and the hostile sync, one after the other, each on its own database and prefix. */
export async function runSyncSection(o: BenchOptions, say: (line: string) => void): Promise<SyncFigures> {
  say(`sync: ${CAMPAIGNS} campaigns through a worker at ${o.syncRateLimit} requests/s, faithful server...`);
  const faithful = await timeSync(o, false);
  say(`  ${(faithful.wallMs / 1000).toFixed(1)} s, ${faithful.requests} requests; hostile server...`);
  const hostile = await timeSync(o, true);
  say(
    `  ${(hostile.wallMs / 1000).toFixed(1)} s, ${hostile.requests} requests (${hostile.rateLimited} answered 429, ${hostile.failed} failed)`,
  );
  return {
    campaigns: CAMPAIGNS,
    rateLimitPerSecond: o.syncRateLimit,
    faithful,
    hostile,
    hostileOverFaithful: hostile.wallMs / faithful.wallMs,
  };
}

async function timeSync(o: BenchOptions, hostileServer: boolean): Promise<SyncRun> {
  const emulator = await startEmulator({
    seed: o.seed,
    catalogue: { campaigns: CAMPAIGNS },
    ...(hostileServer ? { profile: 'hostile', faults: { ...PROFILES.hostile.faults, seed: o.seed } } : {}),
  });
  const db = await createBenchDatabase(o.adminUrl, 'sync', []);
  const prefix = `adops-bench-${randomBytes(6).toString('hex')}`;
  const redis = new Redis(o.redisUrl, { maxRetriesPerRequest: 1 });
  const forgetKeys = onInterrupt(() => deleteKeys(redis, `${prefix}*`));
  const config = loadConfig({
    DATABASE_URL: db.url,
    REDIS_URL: o.redisUrl,
    ADOPS_QUEUE_PREFIX: prefix,
    ADOPS_BASE_URL: emulator.url,
    ADOPS_API_KEY: 'demo-key',
    // The settings `adops doctor` prints for each server.
    ADOPS_AUTH: hostileServer ? 'x-api-key' : 'bearer',
    ADOPS_REPORT_PARAMS: hostileServer ? 'brackets' : 'repeat',
    ADOPS_SCHEMA: BENCH_SCHEMA,
    ADOPS_RATE_LIMIT: String(o.syncRateLimit),
    ADOPS_METRICS_PORT: '0',
  });
  const logger = createLogger({ level: 'silent', secrets: [] });
  const pool = new pg.Pool({ connectionString: db.url, max: 4 });
  const worker = await startWorker({
    config,
    jobs: { reports: [], entities: [] },
    pool,
    logger,
    metrics: false,
  });
  const queues = await openQueues(config);
  try {
    emulator.resetStats();
    const started = performance.now();
    const { jobId } = await enqueueEntitySync(queues.syncs);
    const result = await waitForEntitySync(queues.syncs, jobId, { timeoutMs: 600_000, pollMs: 100 });
    const wallMs = performance.now() - started;
    const stats = emulator.stats();
    const count = (kind: string) => stats.faults[kind] ?? 0;
    return {
      wallMs,
      requests: Object.values(stats.requests).reduce((a, b) => a + b, 0),
      rateLimited: count('rate_limit') + count('storm'),
      failed: count('fail') + count('drop') + count('drop_mid_body'),
      campaigns: result.campaigns,
      creatives: result.creatives,
    };
  } finally {
    await queues.close();
    await worker.close(5_000);
    await pool.end();
    await emulator.close();
    await deleteKeys(redis, `${prefix}*`).finally(() => redis.disconnect());
    forgetKeys();
    await db.drop();
  }
}
