// The secrets check: after a case, search for its API key in every captured log line, every Redis
// key and value under its prefix, and a data dump of its database (archived bodies decompressed).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { readArchivedBody } from '../../../src/pull/archive.js';
import { qualified, warehouseOf } from '../../../src/platform/pg/handle.js';
import { TEST_SCHEMA } from '../schema.js';

const run = promisify(execFile);

export interface SecretScan {
  /** Places the key was found, e.g. `redis <key>` or `log line 12`; empty when it leaked nowhere. */
  readonly found: string[];
  /** What was searched, so a scan of nothing cannot pass unnoticed. */
  readonly searched: { logLines: number; redisKeys: number; dumpBytes: number; rawBodies: number };
}

/** Every form the key could take in text: as is, URL-encoded, base64 (e.g. in a Basic header). */
function forms(secret: string): string[] {
  return [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')];
}

/**
 * `text` with the encodings a server may write an (ASCII) key in undone: \uXXXX and \/ behind any
 * number of backslashes (JSON inside a JSON log line), and %XX, either case. A key written any of
 * those ways, or a mix, comes out whole.
 */
export function decoded(text: string): string {
  return text
    .replace(/\\+u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    .replace(/\\+\//g, '/')
    .replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** Characters of a key that, found together, count as a leak (a key cut short still leaks its rest). */
const LEAK_WINDOW = 16;

/**
 * Whether `text` holds `secret` in any form: as is, URL-encoded, base64, or encoded as decoded()
 * undoes, whole or any 16 characters of it in a row (what an excerpt cut through the key leaves).
 */
export function holdsSecret(text: string, secret: string): boolean {
  if (forms(secret).some((n) => text.includes(n))) return true;
  const plain = decoded(text);
  for (let at = 0; at + LEAK_WINDOW <= secret.length; at++)
    if (plain.includes(secret.slice(at, at + LEAK_WINDOW))) return true;
  return false;
}

/** Scans logs, Redis (keys matching `${prefix}*` on each URL) and the database for `secret`. */
export async function scanForSecret(o: {
  secret: string;
  logLines: readonly string[];
  redis: ReadonlyArray<{ url: string; prefix: string }>;
  database: { url: string; pool: Pool };
}): Promise<SecretScan> {
  const has = (text: string) => holdsSecret(text, o.secret);
  const found: string[] = [];
  o.logLines.forEach((l, i) => {
    if (has(l)) found.push(`log line ${i + 1}: ${l.slice(0, 200)}`);
  });

  let redisKeys = 0;
  for (const { url, prefix } of o.redis) {
    const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
    await redis.connect();
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) {
          redisKeys++;
          if (has(key)) found.push(`redis key ${key}`);
          const value = await redisValue(redis, key);
          if (has(value)) found.push(`redis value of ${key}`);
        }
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  }

  const { stdout } = await run('pg_dump', ['--data-only', '--no-owner', o.database.url], {
    maxBuffer: 512 * 1024 * 1024,
  });
  if (has(stdout)) found.push('pg_dump of the database');
  const { rows } = await o.database.pool.query<{ load_id: string }>(
    `SELECT load_id::text FROM ${qualified(TEST_SCHEMA, 'report_raw')}`,
  );
  // Through the reader of the archive: a streamed body is kept in parts, not in body.
  for (const r of rows)
    if (
      has(
        (await readArchivedBody(warehouseOf(o.database.pool, TEST_SCHEMA), Number(r.load_id)))?.toString(
          'utf8',
        ) ?? '',
      )
    )
      found.push(`report_raw ${r.load_id}`);
  return {
    found,
    searched: { logLines: o.logLines.length, redisKeys, dumpBytes: stdout.length, rawBodies: rows.length },
  };
}

/** A Redis value of any type, as one text. */
async function redisValue(redis: Redis, key: string): Promise<string> {
  const type = await redis.type(key);
  switch (type) {
    case 'string':
      return (await redis.get(key)) ?? '';
    case 'hash':
      return JSON.stringify(await redis.hgetall(key));
    case 'list':
      return JSON.stringify(await redis.lrange(key, 0, -1));
    case 'set':
      return JSON.stringify(await redis.smembers(key));
    case 'zset':
      return JSON.stringify(await redis.zrange(key, 0, -1, 'WITHSCORES'));
    case 'stream':
      return JSON.stringify(await redis.xrange(key, '-', '+'));
    default:
      return '';
  }
}
