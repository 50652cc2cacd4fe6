// A worker process for the crash cases, run as `node --import tsx worker-child.ts` with the suite's
// env, so the test can SIGKILL it. Prints READY once consuming. With REL_PAUSE_AFTER_FETCH set to
// `<dimensions>/<date>` it prints FETCHED after the response of the request holding that day arrived
// and then hangs before loading it: the window between fetch and load, held open for the kill.
import { loadConfig } from '../../../src/platform/config/env.js';
import type { ReportFetcher } from '../../../src/pull/run.js';
import { createLogger } from '../../../src/platform/log/logger.js';
import { startWorker } from '../../../src/worker/start.js';
import { createPool } from '../../../src/platform/pg/handle.js';
import { asFetcher, suiteClient, suiteReports } from '../pipeline.js';

const config = loadConfig(process.env);
const logger = createLogger({
  level: config.logLevel,
  secrets: config.apiKey === undefined ? [] : [config.apiKey],
  destination: process.stderr,
  pretty: false,
});
// The pool the product's worker uses, with its own error handling: what the crash cases test.
const pool = createPool(config, { max: 4, logger });
const client = suiteClient(config, logger);
const pauseAt = process.env.REL_PAUSE_AFTER_FETCH;
const inner = asFetcher(client);
const fetcher: ReportFetcher = {
  async fetchReport(q, signal) {
    const fetched = await inner.fetchReport(q, signal);
    // The request holding that day: a request may cover several days (days_per_request).
    const [dims, day = ''] = (pauseAt ?? '').split('/');
    if (dims === q.dimensions.join(',') && q.period.start <= day && day <= q.period.end) {
      process.stdout.write(`FETCHED ${pauseAt}\n`);
      await new Promise(() => undefined); // hold the fetched body until the kill
    }
    return fetched;
  },
  close: () => inner.close?.() ?? Promise.resolve(),
};
await startWorker({
  config,
  jobs: suiteReports().jobs,
  pool,
  logger,
  fetcher,
  concurrency: 1,
  // A short lock: the job of a killed worker is taken up again within about two seconds.
  stall: { lockDurationMs: 2_000, stalledIntervalMs: 1_000 },
  backoff: { baseMs: 20, maxMs: 200 },
  metrics: false,
});
process.stdout.write('READY\n');
