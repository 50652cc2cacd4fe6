import { describe, expect, it } from 'vitest';
import { ApiHttpError, ApiTransportError, RateLimitedError } from '../../../src/api/errors.js';
import { ReportFormatError } from '../../../src/report/errors.js';
import { LoadError } from '../../../src/warehouse/errors.js';
import { classifyPullError, failureReason } from '../../../src/queue/errors.js';

const details = { apiMessage: undefined, method: 'GET', path: '/v2/reports', attempts: 1 };

describe('classifyPullError', () => {
  it('fails 4xx at once with the typed error and its hint as the reason', () => {
    const e = new ApiHttpError({ ...details, status: 401, hint: 'check ADOPS_API_KEY', retryable: false });
    const f = classifyPullError(e);
    expect(f.kind).toBe('fatal');
    expect(f.reason).toMatch(/^ApiHttpError: GET \/v2\/reports: HTTP 401 .*check ADOPS_API_KEY/);
  });

  it('retries 5xx and transport failures, and a load that lost its Postgres connection', () => {
    expect(
      classifyPullError(new ApiHttpError({ ...details, status: 503, hint: 'h', retryable: true })).kind,
    ).toBe('retry');
    const transport = new ApiTransportError({
      ...details,
      status: undefined,
      hint: 'h',
      retryable: true,
      code: 'ECONNRESET',
      detail: 'x',
    });
    expect(classifyPullError(transport).kind).toBe('retry');
    const pg = Object.assign(new Error('could not serialize access'), { code: '40001' });
    expect(classifyPullError(new LoadError('loading failed', 12, { cause: pg })).kind).toBe('retry');
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(classifyPullError(new LoadError('loading failed', undefined, { cause: refused })).kind).toBe(
      'retry',
    );
  });

  it('never retries a bad payload, nor an error it does not know', () => {
    expect(classifyPullError(new ReportFormatError('(body)', 'not JSON')).kind).toBe('fatal');
    expect(classifyPullError(new LoadError('x', 3, { cause: new ReportFormatError('a', 'b') })).kind).toBe(
      'fatal',
    );
    expect(classifyPullError(new TypeError('x is undefined')).kind).toBe('fatal');
  });

  it('turns a 429 into a pause for Retry-After', () => {
    const e = new RateLimitedError({
      ...details,
      status: 429,
      hint: 'h',
      retryable: true,
      retryAfterMs: 2_500,
    });
    expect(classifyPullError(e)).toMatchObject({ kind: 'rate-limited', retryAfterMs: 2_500 });
  });
});

describe('an abort by the worker itself', () => {
  it('is its own kind, so it is neither recorded nor counted as an attempt', () => {
    const e = new ApiTransportError({
      ...details,
      status: undefined,
      hint: 'h',
      retryable: true,
      code: 'ABORTED',
      detail: 'x',
    });
    expect(classifyPullError(e).kind).toBe('aborted');
  });
});

describe('failureReason', () => {
  it('adds the hint when the message lacks it, and the first cause', () => {
    const e = Object.assign(new Error('boom', { cause: new RangeError('deep') }), { hint: 'do this' });
    expect(failureReason(e)).toBe('Error: boom (do this); caused by RangeError: deep');
    expect(failureReason('text')).toBe('Error: text');
  });
});
