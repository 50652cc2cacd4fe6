// The pipeline as the reliability cases run it: a validated Config from env-style settings, a
// logger captured line by line, and a real worker (BullMQ, API client, loader) in this process.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Pool } from 'pg';
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../../src/api/client.js';
import { loadConfig, type Config } from '../../../src/platform/config/env.js';
import { loadJobs, type JobSet, type ReportJob } from '../../../src/platform/config/jobs.js';
import { join } from 'node:path';
import { packageRoot } from '../../../src/platform/config/files.js';
import { createLogger, type Logger } from '../../../src/platform/log/logger.js';
import type { ReportFetcher } from '../../../src/pull/run.js';
import { openQueues, type Queues } from '../../../src/platform/queue/queues.js';
import { startWorker, type RunningWorker, type WorkerDeps } from '../../../src/worker/start.js';
import { TEST_SCHEMA } from '../schema.js';
import { QUEUE_ENV } from '../services.js';

/** The repository's jobs/ folder. */
export const jobsDir = (): string => join(packageRoot(), 'jobs');

/** A distinctive full-access key: every case uses one, and the secrets check searches for it. */
export function canaryKey(): string {
  return `sk-adops-CANARY-${randomBytes(12).toString('hex')}`;
}

/** The two reports the suite pulls, as defined in jobs/ (their tables exist in the test template). */
export function suiteReports(): { jobs: JobSet; reports: ReportJob[] } {
  const jobs = loadJobs(jobsDir());
  const pick = (name: string) => {
    const r = jobs.reports.find((j) => j.name === name);
    if (r === undefined) throw new Error(`jobs/ has no report ${name}`);
    return r;
  };
  const reports = [pick('daily_campaign'), pick('daily_zone')];
  return { jobs: { reports, entities: [] }, reports };
}

/** The env a case's pipeline runs with: fast retries, no shared-limit waits, metrics off. */
export function suiteEnv(o: {
  baseUrl: string;
  apiKey: string;
  databaseUrl: string;
  redisUrl: string;
  prefix: string;
  extra?: Record<string, string>;
}): Record<string, string> {
  return {
    ADOPS_BASE_URL: o.baseUrl,
    ADOPS_API_KEY: o.apiKey,
    DATABASE_URL: o.databaseUrl,
    REDIS_URL: o.redisUrl,
    ADOPS_SCHEMA: TEST_SCHEMA,
    ADOPS_QUEUE_PREFIX: o.prefix,
    ADOPS_JOBS_DIR: jobsDir(),
    LOG_LEVEL: 'debug',
    ADOPS_HTTP_ATTEMPTS: '3',
    ADOPS_HTTP_MAX_BACKOFF_MS: '100',
    ADOPS_HTTP_HEADERS_TIMEOUT_MS: '2000',
    ADOPS_HTTP_BODY_TIMEOUT_MS: '2000',
    ADOPS_PULL_ATTEMPTS: '10',
    ADOPS_RATE_LIMIT: '1000',
    ADOPS_SHUTDOWN_TIMEOUT_SECONDS: '5',
    ADOPS_METRICS_PORT: '0',
    ...QUEUE_ENV,
    ...o.extra,
  };
}

/** A logger at debug level whose every line (after the product's own redaction) is kept. */
export function capturedLogger(config: Config): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(l);
      done();
    },
  });
  const logger = createLogger({
    level: config.logLevel,
    secrets: config.apiKey === undefined ? [] : [config.apiKey],
    destination,
    pretty: false,
  });
  return { logger, lines };
}

/** The API client a worker of the suite fetches with: short backoffs, 429 handed to the queue. */
export function suiteClient(
  config: Config,
  logger: Logger,
  extra: Partial<ApiClientOptions> = {},
): ApiClient {
  return createApiClient({
    baseUrl: config.baseUrl ?? '',
    apiKey: config.apiKey ?? '',
    auth: config.auth,
    headersTimeoutMs: config.http.headersTimeoutMs,
    bodyTimeoutMs: config.http.bodyTimeoutMs,
    attempts: config.http.attempts,
    baseBackoffMs: 10,
    maxBackoffMs: config.http.maxBackoffMs,
    on429: 'throw',
    logger,
    ...extra,
  });
}

/** The worker's view of an API client (as the worker command wires it): the abort signal passed on. */
export function asFetcher(client: ApiClient, streamFromBytes?: number): ReportFetcher {
  const stream = streamFromBytes === undefined ? {} : { streamFromBytes };
  return {
    fetchReport: (query, signal) =>
      client.fetchReport(query, signal === undefined ? stream : { signal, ...stream }),
    close: () => client.close(),
  };
}

export interface Pipeline {
  readonly config: Config;
  readonly logger: Logger;
  readonly lines: string[];
  readonly queues: Queues;
  readonly worker: RunningWorker;
  /** Closes the worker (with a deadline) and the queues. */
  close(): Promise<void>;
}

/** A worker in this process plus producer queues, both under config.queue.prefix. */
export async function startPipeline(o: {
  env: Record<string, string>;
  pool: Pool;
  jobs: JobSet;
  concurrency?: number;
  stall?: WorkerDeps['stall'];
  client?: Partial<ApiClientOptions>;
  /** Bodies from this size on are loaded as they stream in (the worker's ADOPS_STREAM_BODY_MB). */
  streamFromBytes?: number;
}): Promise<Pipeline> {
  const config = loadConfig(o.env);
  const { logger, lines } = capturedLogger(config);
  const client = suiteClient(config, logger, o.client);
  const queues = await openQueues(config);
  const worker = await startWorker({
    config,
    jobs: o.jobs,
    pool: o.pool,
    logger,
    fetcher: asFetcher(client, o.streamFromBytes),
    concurrency: o.concurrency ?? 2,
    backoff: { baseMs: 20, maxMs: 200 },
    metrics: false,
    ...(o.stall === undefined ? {} : { stall: o.stall }),
  });
  return {
    config,
    logger,
    lines,
    queues,
    worker,
    close: async () => {
      await worker.close(5_000);
      await queues.close();
    },
  };
}
