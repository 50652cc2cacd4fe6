import { describe, expect, it } from 'vitest';
import { assessHealth, type HealthFacts } from '../../../src/worker/health-server.js';

const fine: HealthFacts = {
  backend: 'redis',
  store: 'ready',
  running: true,
  waiting: 0,
  active: 0,
  idleMs: 10,
  stuckAfterMs: 60_000,
};

describe('assessHealth', () => {
  it('is healthy when connected, running and not idle with work waiting', () => {
    expect(assessHealth(fine)).toMatchObject({ ok: true, stuck: false });
    expect(assessHealth({ ...fine, waiting: 5, active: 0, idleMs: 1_000 }).ok).toBe(true);
    expect(assessHealth({ ...fine, waiting: 0, idleMs: 3_600_000 }).ok).toBe(true);
  });

  it('is unhealthy when jobs wait and nothing ran for longer than the limit, though the store answers', () => {
    expect(assessHealth({ ...fine, waiting: 5, active: 0, idleMs: 61_000 })).toMatchObject({
      ok: false,
      stuck: true,
    });
    expect(assessHealth({ ...fine, waiting: 5, active: 1, idleMs: 61_000 }).ok).toBe(true);
  });

  it('names the queue store on each backend, and says `redis` only where the queue is on Redis', () => {
    expect(assessHealth(fine)).toMatchObject({ queue: { backend: 'redis', ok: true }, redis: 'ready' });
    const pg = assessHealth({ ...fine, backend: 'postgres' });
    expect(pg).toMatchObject({ ok: true, queue: { backend: 'postgres', ok: true } });
    expect(pg).not.toHaveProperty('redis');
    const down = assessHealth({ ...fine, backend: 'postgres', waiting: undefined, active: undefined });
    expect(down).toMatchObject({ ok: false, queue: { backend: 'postgres', ok: false } });
  });

  it('is unhealthy when the store is not ready, a worker stopped, or the counts cannot be read', () => {
    expect(assessHealth({ ...fine, store: 'reconnecting' })).toMatchObject({
      ok: false,
      queue: { ok: false },
      redis: 'reconnecting',
    });
    expect(assessHealth({ ...fine, running: false }).ok).toBe(false);
    expect(assessHealth({ ...fine, waiting: undefined, active: undefined }).ok).toBe(false);
  });
});

describe('attemptRecorder', () => {
  it('counts requests by status and retries by the status that caused them', async () => {
    const { attemptRecorder, createWorkerMetrics } = await import('../../../src/worker/metrics.js');
    const metrics = createWorkerMetrics(async () => ({}), { defaultMetrics: false });
    const record = attemptRecorder(metrics);
    record({ status: 503, attempt: 1, path: '/v2/reports?a' });
    record({ status: undefined, attempt: 2, path: '/v2/reports?a' });
    record({ status: 200, attempt: 3, path: '/v2/reports?a' });
    record({ status: 200, attempt: 1, path: '/v2/reports?b' });
    const text = await metrics.registry.metrics();
    expect(text).toContain('adops_api_requests_total{status="503"} 1');
    expect(text).toContain('adops_api_requests_total{status="error"} 1');
    expect(text).toContain('adops_api_requests_total{status="200"} 2');
    expect(text).toContain('adops_api_retries_total{status="503"} 1');
    expect(text).toContain('adops_api_retries_total{status="error"} 1');
  });
});
