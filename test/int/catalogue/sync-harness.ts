// Set-up of the catalogue sync's queue tests: a database, a BullMQ prefix, an emulator whose
// requests are logged with their arrival time, and in-process workers. close() ends everything.
import type { Job } from 'bullmq';
import { loadConfig, type Config } from '../../../src/platform/config/env.js';
import { loadJobs } from '../../../src/platform/config/jobs.js';
import {
  startEmulator,
  type EmulatorOptions,
  type RequestLogEntry,
  type RunningEmulator,
} from '../../../src/emulator/index.js';
import { enqueueEntitySync } from '../../../src/catalogue/enqueue.js';
import type { EntitySyncResult } from '../../../src/catalogue/sync.js';
import { createLogger } from '../../../src/platform/log/logger.js';
import { ENTITY_QUEUE } from '../../../src/platform/queue/jobs.js';
import { openQueues, type Queues } from '../../../src/platform/queue/queues.js';
import { startWorker, type RunningWorker, type WorkerDeps } from '../../../src/worker/start.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';
import { QUEUE_ENV } from '../../helpers/services.js';

/** A request the emulator served, with the local time it was logged. */
export interface LoggedRequest extends RequestLogEntry {
  readonly at: number;
}

export interface SyncHarness {
  readonly db: TestDatabase;
  readonly emulator: RunningEmulator;
  readonly env: Record<string, string>;
  readonly config: Config;
  readonly queues: Queues;
  /** Every /v2 request served so far, in order. */
  readonly requests: LoggedRequest[];
  worker(extra?: Partial<WorkerDeps>): Promise<RunningWorker>;
  /** Enqueues a sync and waits for it; returns its result and its finished job. */
  sync(timeoutMs?: number): Promise<{ result: EntitySyncResult; job: Job }>;
  /** Waits for sync job `jobId` (enqueued earlier) to finish. */
  wait(jobId: string, timeoutMs?: number): Promise<{ result: EntitySyncResult; job: Job }>;
  close(): Promise<void>;
}

export const quiet = createLogger({ level: 'silent', secrets: [] });

/** A harness over a fresh database, prefix and emulator (`emulator` options merged in). */
export async function createSyncHarness(
  o: { emulator?: EmulatorOptions; env?: Record<string, string> } = {},
): Promise<SyncHarness> {
  const requests: LoggedRequest[] = [];
  const db = await createTestDatabase();
  db.pool.on('error', () => undefined);
  const emulator = await startEmulator({
    seed: 5,
    cellsPerDay: 25,
    lateDataDays: 0,
    ...o.emulator,
    onRequest: (entry) => requests.push({ ...entry, at: Date.now() }),
  });
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    REDIS_URL,
    ADOPS_QUEUE_PREFIX: testPrefix(),
    ADOPS_BASE_URL: emulator.url,
    ADOPS_API_KEY: 'demo-key',
    ADOPS_SCHEMA: TEST_SCHEMA,
    ADOPS_JOBS_DIR: 'jobs',
    ADOPS_METRICS_PORT: '0',
    ADOPS_RATE_LIMIT: '500',
    ADOPS_HTTP_MAX_BACKOFF_MS: '50',
    LOG_LEVEL: 'silent',
    ...QUEUE_ENV,
    ...o.env,
  };
  const config = loadConfig(env);
  const jobs = loadJobs('jobs');
  const queues = await openQueues(config);
  const workers: RunningWorker[] = [];
  const events = queues.backend.events(ENTITY_QUEUE);
  events.on('error', () => undefined);
  await events.waitUntilReady();
  const harness: SyncHarness = {
    db,
    emulator,
    env,
    config,
    queues,
    requests,
    async worker(extra = {}) {
      const w = await startWorker({
        config,
        jobs,
        pool: db.pool,
        logger: quiet,
        concurrency: 4,
        metrics: false,
        backoff: { baseMs: 50, maxMs: 400 },
        stall: { lockDurationMs: 10_000, stalledIntervalMs: 5_000 },
        ...extra,
      });
      workers.push(w);
      return w;
    },
    async sync(timeoutMs = 50_000) {
      const { jobId } = await enqueueEntitySync(queues.syncs);
      return harness.wait(jobId, timeoutMs);
    },
    async wait(jobId, timeoutMs = 50_000) {
      const job = await queues.syncs.getJob(jobId);
      if (job === undefined) throw new Error(`sync job ${jobId} vanished`);
      const result = (await job.waitUntilFinished(events, timeoutMs)) as EntitySyncResult;
      return { result, job: (await queues.syncs.getJob(jobId)) ?? job };
    },
    async close() {
      await Promise.allSettled(workers.map((w) => w.close(2_000)));
      await events.close().catch(() => undefined);
      await queues.close();
      await emulator.close();
      await db.drop();
    },
  };
  return harness;
}
