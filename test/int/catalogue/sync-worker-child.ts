// A worker process for the crash case, run as `node --import tsx sync-worker-child.ts` with the
// harness' env, so the test can SIGKILL it mid-sync. The product's own worker, unchanged: it
// consumes catalogue syncs with its default sync client. Prints READY once consuming.
import { loadConfig } from '../../../src/platform/config/env.js';
import { loadJobs } from '../../../src/platform/config/jobs.js';
import { createLogger } from '../../../src/platform/log/logger.js';
import { startWorker } from '../../../src/worker/start.js';
import { createPool } from '../../../src/platform/pg/handle.js';

const config = loadConfig(process.env);
const logger = createLogger({
  level: config.logLevel,
  secrets: config.apiKey === undefined ? [] : [config.apiKey],
  destination: process.stderr,
  pretty: false,
});
await startWorker({
  config,
  jobs: loadJobs(config.jobsDir),
  pool: createPool(config, { max: 4, logger }),
  logger,
  concurrency: 1,
  // A short lock: the job of a killed worker is taken up again within about two seconds.
  stall: { lockDurationMs: 2_000, stalledIntervalMs: 1_000 },
  metrics: false,
});
process.stdout.write('READY\n');
