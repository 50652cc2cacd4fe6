// A BullMQ key prefix per test, under the run id so the run's teardown removes every key.
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';

export { REDIS_URL } from './services.js';

/** A fresh BullMQ prefix: `<runId>:<uuid>`. */
export function testPrefix(): string {
  return `${inject('runId')}:${randomUUID()}`;
}
