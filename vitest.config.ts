import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The integration files whose assertions depend on the queue backend, run on both (issue 26): the
 * queue's own semantics (retries, rate limits, stalls, schedulers, counts, lost jobs, a worker's
 * stop and health, one account's slots) and what a queue keeps (webhook deliveries, the secrets
 * scan of queue keys). Files that go through the queue only to reach something else (the hostile
 * server's HTTP, the metrics port, status --check, the catalogue's in-place 429 waits, evolution's
 * views) run on Redis only: the backend changes nothing they assert.
 */
const POSTGRES_QUEUE_FILES = [
  'test/int/queue/acceptance.test.ts',
  'test/int/queue/backfill.test.ts',
  'test/int/queue/failures.test.ts',
  'test/int/queue/schedule.test.ts',
  'test/int/queue/worker.test.ts',
  'test/int/queue/counts.test.ts',
  'test/int/queue/accounts-isolation.test.ts',
  'test/int/reliability/crashes.test.ts',
  'test/int/webhooks/webhooks.test.ts',
];

/**
 * The files that take longest (10-50 s each), about longest first. A fresh clone has no durations for
 * vitest to order by, and a long file that happens to start last is a tail with the other workers idle.
 * The integration-serial files (*) are spread among them, so that each is likely to find the one
 * before it finished (they run one at a time: a file that starts early waits for the lock).
 */
const LONG_FIRST = [
  'test/int/redis-ha/waits.test.ts', // *
  'test/int/acceptance/hostile-server.test.ts',
  'test/int/worker/big-bodies.test.ts',
  'test/int/catalogue/resilience.test.ts',
  'test/int/queue/acceptance.test.ts',
  'test/int/queue/worker.test.ts',
  'test/int/redis-ha/failover.test.ts', // *
  'test/int/queue/backfill.test.ts',
  'test/int/reliability/crashes.test.ts',
  'test/int/queue/retry-after-cap.test.ts',
  'test/int/reliability/api-faults.test.ts',
  'test/int/webhooks/webhooks.test.ts',
  'test/int/queue/pg-restart.test.ts', // *
  'test/int/queue/ratelimit-pg.test.ts',
  'test/int/queue/status-check.test.ts',
  'test/int/queue/metrics-port.test.ts',
  'test/int/foundation/cli.test.ts',
  'test/int/redis-ha/cluster.test.ts', // *
  'test/int/queue/schedule.test.ts',
];

/**
 * Within each group, the LONG_FIRST files of every project first (a project's twin after integration's),
 * then the other files project by project (integration-serial's among integration's), as vitest orders them.
 */
class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (s: TestSpecification) => {
      const i = LONG_FIRST.findIndex((f) => s.moduleId.endsWith(f));
      return i === -1 ? LONG_FIRST.length : i;
    };
    const block = (s: TestSpecification) => s.project.name.replace(/^integration-serial$/, 'integration');
    const sorted = await super.sort(files);
    return sorted
      .map((s, i) => ({ s, i }))
      .sort((a, b) => {
        const [ga, gb] = [a.s.project.config.sequence.groupOrder, b.s.project.config.sequence.groupOrder];
        if (ga !== gb) return ga - gb;
        if (rank(a.s) !== rank(b.s)) return rank(a.s) - rank(b.s);
        const [pa, pb] = [block(a.s), block(b.s)];
        if (pa !== pb) return pa < pb ? -1 : 1;
        return a.i - b.i;
      })
      .map(({ s }) => s);
  }
}

/** Files outside test/int/redis-ha that restart servers of their own: run one at a time (integration-serial). */
const SERIAL_FILES = ['test/int/queue/pg-restart.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    // The suite waits on Postgres, Redis and HTTP far more than it computes: three files at once on
    // two cores (vitest's default is cores - 1, one file at a time here) halves the wall time.
    maxWorkers: 3,
    sequence: { sequencer: LongFilesFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // No unit test mocks a module, fakes a timer or changes a global it does not restore: a
          // worker runs its files in one module graph, so src/ is imported once per worker, not per file.
          isolate: false,
          testTimeout: 20_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/int/**/*.test.ts'],
          exclude: ['test/int/redis-ha/**', ...SERIAL_FILES],
          // As the unit project: a worker runs its files in one module graph, importing src/ and the
          // helpers once, not per file (that was a third of the suite's CPU). Files close what they
          // open and restore what they fake (one fakes Date for one call; none mocks a module).
          isolate: false,
          globalSetup: ['test/helpers/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          // The queue-facing files again, on BullMQ's PostgreSQL backend (ADOPS_QUEUE=postgres).
          name: 'integration-postgres',
          include: POSTGRES_QUEUE_FILES,
          env: { ADOPS_TEST_QUEUE: 'postgres' },
          isolate: false,
          globalSetup: ['test/helpers/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          // Failovers and outages of private Redis servers (and a private Postgres restarted), timed
          // in seconds: one file at a time (each holds a lock: test/helpers/one-at-a-time.ts), so that
          // no two promotions or outages share the machine, but beside the other projects' files.
          name: 'integration-serial',
          include: ['test/int/redis-ha/**/*.test.ts', ...SERIAL_FILES],
          globalSetup: ['test/helpers/global-setup.ts'],
          setupFiles: ['test/helpers/one-at-a-time.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
