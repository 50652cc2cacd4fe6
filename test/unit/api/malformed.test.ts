import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/errors.js';
import { bodyDigest, malformedAnswer, parseJsonBody, reportBodyProblem } from '../../../src/api/malformed.js';

const b = (text: string) => Buffer.from(text, 'utf8');
const AT = { status: 200, method: 'GET', path: '/v2/reports', attempts: 1, secrets: ['k3y-secret'] };

describe('reportBodyProblem', () => {
  it.each([
    ['', 'an empty body'],
    ['  \n', 'an empty body'],
    ['<html><h1>502</h1></html>', 'an HTML page'],
    ['\ufeff  <!DOCTYPE html>', 'an HTML page'],
    ['Service Unavailable', 'not JSON'],
    ['{"items":{"2026-01-01":{"ad_requests":1', 'a JSON object cut short (it does not end with "}")'],
    ['{"items":{}} <html>', 'a JSON object cut short (it does not end with "}")'],
  ])('calls %j malformed: %s', (text, problem) => {
    expect(reportBodyProblem(b(text), 'application/json')).toBe(problem);
  });

  it('trusts the body over its label, and leaves shapes and inner syntax to the parser', () => {
    expect(reportBodyProblem(b('{"items":{},"totals":{}}\n'), 'text/html')).toBeUndefined();
    expect(reportBodyProblem(b('Service Unavailable'), 'text/html; charset=utf-8')).toBe('an HTML page');
    expect(reportBodyProblem(b('[1,2]'), undefined)).toBeUndefined();
    expect(reportBodyProblem(b('"an error"'), undefined)).toBeUndefined();
    expect(reportBodyProblem(b('{"items":{,}}'), undefined)).toBeUndefined();
  });
});

describe('parseJsonBody', () => {
  it('parses JSON, a byte order mark included', () => {
    expect(parseJsonBody(b('\ufeff{"items":[]}'), 'application/json')).toEqual({
      ok: true,
      doc: { items: [] },
    });
  });

  it('names the problem without quoting the body', () => {
    expect(parseJsonBody(b('<html>k3y-secret</html>'), undefined)).toEqual({
      ok: false,
      problem: 'an HTML page',
    });
    expect(parseJsonBody(b('{"items":[k3y-secret'), undefined)).toEqual({
      ok: false,
      problem: 'not valid JSON',
    });
    expect(parseJsonBody(b(''), undefined)).toEqual({ ok: false, problem: 'an empty body' });
  });
});

describe('malformedAnswer', () => {
  it('is retryable the first time, with the body (key redacted) and the digest of the body as received', () => {
    const raw = b('<html>proxy k3y-secret</html>');
    const e = malformedAnswer(raw, 'an HTML page', undefined, AT);
    expect(e).toBeInstanceOf(ApiError);
    expect(e).toHaveProperty('name', 'ApiResponseError');
    expect(e).toMatchObject({ retryable: true, status: 200, sha256: bodyDigest(raw) });
    expect(e.body?.toString()).toBe('<html>proxy [REDACTED]</html>');
    expect(e.excerpt).toBe('<html>proxy [REDACTED]</html>');
    expect(e.message).not.toContain('k3y-secret');
    expect(e.message).toContain('retried like a 5xx');
  });

  it('is final when the body repeats the previous answer byte for byte', () => {
    const raw = b('<html>down</html>');
    const e = malformedAnswer(raw, 'an HTML page', bodyDigest(raw), AT);
    expect(e).toMatchObject({ retryable: false });
    expect(e.message).toContain('an HTML page; the same body twice in a row');
    expect(malformedAnswer(b('<html>down!</html>'), 'an HTML page', bodyDigest(raw), AT).retryable).toBe(
      true,
    );
  });

  it('is never retryable for a POST, whose 2xx may mean the resource was created', () => {
    const e = malformedAnswer(b(''), 'an empty body', undefined, { ...AT, method: 'POST' });
    expect(e.retryable).toBe(false);
    expect(e.hint).toMatch(/never repeated/);
  });
});
