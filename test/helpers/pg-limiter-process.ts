// A second worker process for the tests of the Postgres request limit: opens a subscribed
// createPgRequestLimiter on LIMIT_URL / LIMIT_SCHEMA / LIMIT_KEY at LIMIT_PER_SECOND, says
// {"ready":true}, takes LIMIT_COUNT slots (stdout {"slots":[...]}), then, with LIMIT_AWAIT_PAUSE,
// waits for a pause another process sets and says {"pause":ms,"waited":ms} (the wait of its next
// slot). One JSON object per line on stdout.
import pg from 'pg';
import { createPgRequestLimiter } from '../../src/limits/postgres.js';

const env = (name: string): string => process.env[name] ?? '';
const say = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);
const pool = new pg.Pool({ connectionString: env('LIMIT_URL'), max: 2 });
let heard!: (ms: number) => void;
const paused = new Promise<number>((resolve) => (heard = resolve));
const limiter = createPgRequestLimiter(
  { pool, schema: env('LIMIT_SCHEMA') },
  env('LIMIT_KEY'),
  Number(env('LIMIT_PER_SECOND')),
  {
    subscribe: true,
    onPause: (ms) => heard(ms),
  },
);
await limiter.ready();
say({ ready: true });
const slots: number[] = [];
for (let i = 0; i < Number(env('LIMIT_COUNT')); i++) slots.push(await limiter.acquire());
say({ slots });
if (env('LIMIT_AWAIT_PAUSE') !== '') {
  const ms = await paused;
  const t = performance.now();
  await limiter.acquire();
  say({ pause: ms, waited: performance.now() - t });
}
await limiter.close();
await pool.end();
