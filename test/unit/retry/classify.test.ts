import { describe, expect, it } from 'vitest';
import { apiHttpError, apiTransportError, rateLimitedError } from '../../../src/api/errors.js';
import { malformedAnswer } from '../../../src/api/malformed.js';
import { malformedBody, ReportFormatError } from '../../../src/flatten/errors.js';
import { LoadError } from '../../../src/pull/run.js';
import {
  classifyFailure,
  failureReason,
  isRedisOutage,
  isSerializationFailure,
  isTransientNetwork,
  isTransientPg,
  isTransientStatus,
} from '../../../src/platform/retry/classify.js';

const details = { apiMessage: undefined, method: 'GET', path: '/v2/reports', attempts: 1 };

describe('the allowlists', () => {
  it('retries only 500, 502, 503 and 504 among statuses', () => {
    for (const s of [500, 502, 503, 504]) expect(isTransientStatus(s)).toBe(true);
    for (const s of [200, 400, 401, 403, 404, 409, 422, 429, 501, 505])
      expect(isTransientStatus(s)).toBe(false);
  });

  it('retries resets and timeouts, but POST only when the request never reached the server', () => {
    expect(isTransientNetwork('ECONNRESET', 'GET')).toBe(true);
    expect(isTransientNetwork('UND_ERR_HEADERS_TIMEOUT', 'PUT')).toBe(true);
    expect(isTransientNetwork('UND_ERR_SOCKET', 'DELETE')).toBe(true);
    expect(isTransientNetwork('ECONNRESET', 'POST')).toBe(false);
    expect(isTransientNetwork('ECONNREFUSED', 'POST')).toBe(true);
    expect(isTransientNetwork('UND_ERR_INVALID_ARG', 'GET')).toBe(false);
    expect(isTransientNetwork(undefined, 'GET')).toBe(false);
  });

  it('retries Postgres serialization, deadlock, connection and shutdown states, nothing else', () => {
    for (const c of ['40001', '40P01', '53300', '57P01', '57P03', '08006', '08001'])
      expect(isTransientPg(c)).toBe(true);
    for (const c of ['23505', '42P01', '57014', '22P02', undefined]) expect(isTransientPg(c)).toBe(false);
    const pg = (code: string) => Object.assign(new Error(code), { code });
    expect([pg('40001'), pg('40P01'), pg('08006'), new Error('x'), null].map(isSerializationFailure)).toEqual(
      [true, true, false, false, false],
    );
  });
});

describe('classifyFailure', () => {
  it('fails 4xx at once with the typed error and its hint as the reason', () => {
    const e = apiHttpError({ ...details, status: 401, hint: 'check ADOPS_API_KEY', retryable: false });
    const f = classifyFailure(e);
    expect(f.kind).toBe('fatal');
    expect(f.reason).toMatch(/^ApiHttpError: GET \/v2\/reports: HTTP 401 .*check ADOPS_API_KEY/);
  });

  it('retries 5xx and transport failures, and a load that lost its Postgres connection', () => {
    expect(classifyFailure(apiHttpError({ ...details, status: 503, hint: 'h', retryable: true })).kind).toBe(
      'transient',
    );
    const transport = apiTransportError({
      ...details,
      status: undefined,
      hint: 'h',
      retryable: true,
      code: 'ECONNRESET',
      detail: 'x',
    });
    expect(classifyFailure(transport).kind).toBe('transient');
    const pg = Object.assign(new Error('could not serialize access'), { code: '40001' });
    expect(classifyFailure(new LoadError('loading failed', 12, { cause: pg })).kind).toBe('transient');
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(classifyFailure(new LoadError('loading failed', undefined, { cause: refused })).kind).toBe(
      'transient',
    );
  });

  it('never retries a bad payload, nor an error it does not know', () => {
    expect(classifyFailure(new ReportFormatError('(body)', 'not JSON')).kind).toBe('fatal');
    expect(classifyFailure(new LoadError('x', 3, { cause: new ReportFormatError('a', 'b') })).kind).toBe(
      'fatal',
    );
    expect(classifyFailure(new TypeError('x is undefined')).kind).toBe('fatal');
  });

  it('retries a malformed body until the same body comes twice in a row', () => {
    const body = malformedBody('not valid JSON: the body ends early (truncated?) at byte 9 of 9');
    expect(classifyFailure(body).kind).toBe('transient');
    expect(classifyFailure(body.repeated('ab')).kind).toBe('fatal');
    const at = { ...details, status: 200, secrets: ['k'] };
    const html = malformedAnswer(Buffer.from('<html/>'), 'an HTML page', undefined, at);
    expect(classifyFailure(html)).toMatchObject({
      kind: 'transient',
      reason: expect.stringMatching(/an HTML page/),
    });
    expect(
      classifyFailure(malformedAnswer(Buffer.from('<html/>'), 'an HTML page', html.sha256, at)).kind,
    ).toBe('fatal');
  });

  it('turns a 429 into a pause for Retry-After', () => {
    const e = rateLimitedError({
      ...details,
      status: 429,
      hint: 'h',
      retryable: true,
      retryAfterMs: 2_500,
    });
    expect(classifyFailure(e)).toMatchObject({ kind: 'rate-limited', retryAfterMs: 2_500 });
  });
});

describe('an abort by the worker itself', () => {
  it('is its own kind, so it is neither recorded nor counted as an attempt', () => {
    const e = apiTransportError({
      ...details,
      status: undefined,
      hint: 'h',
      retryable: true,
      code: 'ABORTED',
      detail: 'x',
    });
    expect(classifyFailure(e).kind).toBe('aborted');
  });
});

describe('failureReason', () => {
  it('adds the hint when the message lacks it, and the first cause', () => {
    const e = Object.assign(new Error('boom', { cause: new RangeError('deep') }), { hint: 'do this' });
    expect(failureReason(e)).toBe('Error: boom (do this); caused by RangeError: deep');
    expect(failureReason('text')).toBe('Error: text');
  });
});

describe('isRedisOutage', () => {
  const coded = (message: string, code: string) => Object.assign(new Error(message), { code });
  const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });

  it.each([
    ["ioredis' offline refusal", new Error("Stream isn't writeable and enableOfflineQueue options is false")],
    ['a closed connection', new Error('Connection is closed.')],
    [
      'retries spent',
      new Error(
        'Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.',
      ),
    ],
    ['a Cluster not ready', new Error("Cluster isn't ready and enableOfflineQueue options is false")],
    ['no sentinel answering', new Error('All sentinels are unreachable. Retrying from scratch after 10ms.')],
    ['a refused connection', coded('connect ECONNREFUSED 127.0.0.1:6379', 'ECONNREFUSED')],
    ['a reset', coded('read ECONNRESET', 'ECONNRESET')],
    ['a server loading its data', reply('LOADING Redis is loading the dataset in memory')],
    [
      'a replica left read-only after a failover',
      reply("READONLY You can't write against a read only replica."),
    ],
    ['a Cluster mid-change', reply('CLUSTERDOWN The cluster is down')],
    ['a master gone', reply('MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no')],
    ['a wrapped cause', new Error('bullmq failed', { cause: coded('connect ETIMEDOUT', 'ETIMEDOUT') })],
    [
      'a Cluster node gone, after the redirections',
      new Error('Too many Cluster redirections. Last error: Error: Connection is closed.'),
    ],
    [
      'a Cluster node coming back, redirected to before it is connected',
      new Error('Too many Cluster redirections. Last error: ReplyError: MOVED 14921 127.0.0.1:7443'),
    ],
    [
      'every Cluster node gone (ioredis keeps the last error as lastNodeError)',
      Object.assign(new Error('Failed to refresh slots cache.'), {
        lastNodeError: new Error('Connection is closed.'),
      }),
    ],
  ])('is true for %s', (_what, error) => {
    expect(isRedisOutage(error)).toBe(true);
  });

  it.each([
    ['a wrong password', reply('WRONGPASS invalid username-password pair or user is disabled.')],
    ['no password', reply('NOAUTH Authentication required.')],
    ['an unknown command', reply("ERR unknown command 'FOO'")],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['not an error', 'Connection is closed.'],
  ])('is false for %s: waiting cannot fix it', (_what, error) => {
    expect(isRedisOutage(error)).toBe(false);
  });
});
