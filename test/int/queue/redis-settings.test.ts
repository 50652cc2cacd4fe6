// A worker given Redis settings that Redis refuses (a database number beyond its `databases`)
// stops at start, naming REDIS_URL: it used to log the refusal, report "worker started" and run on
// without its database, while every CLI command refused the same URL.
import { afterEach, describe, expect, it } from 'vitest';
import { spawnCli, type CliProcess } from '../../helpers/cli.js';
import { createTestDatabase, TEST_SCHEMA, type TestDatabase } from '../../helpers/db.js';
import { REDIS_URL, testPrefix } from '../../helpers/redis.js';

let db: TestDatabase | undefined;
let worker: CliProcess | undefined;
afterEach(async () => {
  await worker?.kill('SIGKILL');
  await db?.drop();
  worker = undefined;
  db = undefined;
});

describe('adops worker with a Redis database Redis does not have', () => {
  it('exits at start with one line naming REDIS_URL and the refusal, instead of running on', async () => {
    db = await createTestDatabase();
    const url = new URL(REDIS_URL);
    url.pathname = '/999999';
    worker = spawnCli(['worker'], {
      DATABASE_URL: db.url,
      REDIS_URL: url.toString(),
      ADOPS_QUEUE_PREFIX: testPrefix(),
      ADOPS_SCHEMA: TEST_SCHEMA,
      ADOPS_BASE_URL: 'http://127.0.0.1:9/v2',
      ADOPS_API_KEY: 'demo-key',
      ADOPS_METRICS_PORT: '0',
      LOG_LEVEL: 'info',
    });
    const outcome = await Promise.race([
      worker.exited,
      new Promise<string>((resolve) => setTimeout(() => resolve('still running after 20 s'), 20_000)),
    ]);
    expect(outcome, worker.stderr()).toBe(1);
    const lines = worker
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('adops: '));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^adops: Redis at redis:\/\/.*\/999999 refused the connection \(ERR DB index is out of range\): check REDIS_URL/,
    );
    expect(worker.stderr()).not.toContain('"msg":"worker started"');
  });
});
