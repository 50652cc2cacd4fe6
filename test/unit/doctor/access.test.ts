import { describe, expect, it } from 'vitest';
import { decide } from '../../../src/doctor/verdict.js';
import { http, none, NOW, observations, row } from './fixtures.js';

describe('doctor verdict: a server that accepts every reading', () => {
  it('says a pull can work and sets the configured forms, compression none when gzip is not served', () => {
    const v = decide(observations(), NOW);
    expect(v.ok).toBe(true);
    expect(v.problems).toEqual([]);
    expect(v.settings).toEqual({
      ADOPS_AUTH: 'bearer',
      ADOPS_REPORT_PARAMS: 'repeat',
      ADOPS_HTTP_COMPRESSION: 'none',
    });
    expect(v.rows.map((r) => r.check)).toEqual([
      'reachability',
      'auth',
      'scopes',
      'report params repeat',
      'report params brackets',
      'report params comma',
      'report params json-body',
      'gzip',
      'clock',
      'rate limits',
    ]);
    expect(row(v.rows, 'report params repeat')).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/; use this$/),
    });
    expect(row(v.rows, 'report params brackets')?.detail).not.toContain('use this');
  });

  it('keeps a configured form that works rather than the first in order', () => {
    const v = decide(observations({ configured: { auth: 'x-api-key', reportParams: 'comma' } }), NOW);
    expect(v.settings).toMatchObject({ ADOPS_AUTH: 'x-api-key', ADOPS_REPORT_PARAMS: 'comma' });
  });
});

describe('doctor verdict: auth', () => {
  it('picks the form the server accepts when the configured one gets 401', () => {
    const o = observations();
    const v = decide({ ...o, auth: { bearer: http(401), 'x-api-key': o.auth.bearer } }, NOW);
    expect(v.ok).toBe(true);
    expect(v.settings?.ADOPS_AUTH).toBe('x-api-key');
    expect(row(v.rows, 'auth')?.detail).toMatch(/Bearer 401; x-api-key 200; use x-api-key/);
  });

  it('counts a 403 as an accepted key (it lacks a scope, the scopes row says which)', () => {
    const o = observations();
    const v = decide({ ...o, auth: { bearer: http(403), 'x-api-key': http(401) } }, NOW);
    expect(row(v.rows, 'auth')?.status).toBe('ok');
    expect(v.facts.auth).toEqual({ bearer: '403', 'x-api-key': '401' });
  });

  it('exits 1 with "the API refused the key (401) with both header forms" for a wrong key', () => {
    const o = observations();
    const v = decide(
      { ...o, auth: { bearer: http(401), 'x-api-key': http(401) }, scopes: undefined, forms: {} },
      NOW,
    );
    expect(v.ok).toBe(false);
    expect(v.settings).toBeUndefined();
    expect(v.problems).toEqual([
      expect.stringContaining('the API refused the key (401) with both header forms'),
    ]);
    expect(row(v.rows, 'scopes')?.status).toBe('skip');
    expect(row(v.rows, 'report params')?.status).toBe('skip');
  });

  it('points at ADOPS_BASE_URL when both forms get a 404', () => {
    const o = observations();
    const v = decide(
      { ...o, auth: { bearer: http(404), 'x-api-key': http(404) }, scopes: undefined, forms: {} },
      NOW,
    );
    expect(v.ok).toBe(false);
    expect(v.problems[0]).toMatch(
      /GET \/v2\/campaigns\?limit=1 was not accepted .*bearer: 404.*ADOPS_BASE_URL/,
    );
  });
});

describe('doctor verdict: reachability and TLS', () => {
  it('fails naming the error when nothing answered', () => {
    const o = observations();
    const v = decide(
      { ...o, auth: { bearer: none(), 'x-api-key': none() }, scopes: undefined, forms: {} },
      NOW,
    );
    expect(v.ok).toBe(false);
    expect(row(v.rows, 'reachability')).toMatchObject({
      status: 'fail',
      detail: expect.stringContaining('ECONNREFUSED'),
    });
    expect(v.problems).toEqual([expect.stringMatching(/127\.0\.0\.1:8787 did not answer \(ECONNREFUSED/)]);
  });

  it('fails on a certificate this machine does not trust, naming the TLS error', () => {
    const o = observations({
      baseUrl: 'https://acme.api.example.com/v2',
      tls: { ok: false, code: 'DEPTH_ZERO_SELF_SIGNED_CERT', detail: 'self-signed certificate' },
    });
    const v = decide(o, NOW);
    expect(v.ok).toBe(false);
    expect(row(v.rows, 'reachability')?.detail).toContain('DEPTH_ZERO_SELF_SIGNED_CERT');
    expect(v.problems[0]).toMatch(/certificate is not trusted/);
  });

  it('shows the certificate and warns when it expires within two weeks', () => {
    const good = {
      ok: true as const,
      subject: 'acme.api.example.com',
      issuer: 'Example CA',
      validTo: 'Mar 15 12:00:00 2026 GMT',
    };
    const v = decide(observations({ baseUrl: 'https://acme.api.example.com/v2', tls: good }), NOW);
    expect(row(v.rows, 'reachability')).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(/certificate ok .*expires in 7 days/),
    });
    const later = decide(
      observations({
        baseUrl: 'https://acme.api.example.com/v2',
        tls: { ...good, validTo: 'Mar 15 12:00:00 2027 GMT' },
      }),
      NOW,
    );
    expect(row(later.rows, 'reachability')?.status).toBe('ok');
  });

  it('warns about plain http to anything but a loopback address', () => {
    expect(row(decide(observations(), NOW).rows, 'reachability')?.status).toBe('ok');
    const v = decide(observations({ baseUrl: 'http://acme.api.example.com/v2' }), NOW);
    expect(row(v.rows, 'reachability')).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('unencrypted'),
    });
    expect(v.ok).toBe(true);
  });
});

describe('doctor verdict: scopes', () => {
  it('fails naming the reports scope when GET /reports answers 403', () => {
    const o = observations();
    const forbidden = http(403, {}, { apiMessage: 'This API key lacks the scope "reports".' });
    const v = decide({ ...o, scopes: { ...o.scopes!, reports: forbidden }, forms: {} }, NOW);
    expect(v.ok).toBe(false);
    expect(v.problems).toEqual([
      expect.stringMatching(/GET \/reports answered 403 .*lacks the reports scope/),
    ]);
    expect(row(v.rows, 'scopes')?.status).toBe('fail');
    expect(row(v.rows, 'report params')?.detail).toBe('not probed: reports are forbidden to this key');
  });

  it('only warns when the catalogue is forbidden: pulls need reports alone', () => {
    const o = observations();
    const v = decide(
      { ...o, scopes: { campaigns: http(403), creatives: 'no-campaign', reports: o.scopes!.reports } },
      NOW,
    );
    expect(v.ok).toBe(true);
    expect(row(v.rows, 'scopes')).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('creatives not probed'),
    });
  });
});
