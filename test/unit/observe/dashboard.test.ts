import { describe, expect, it } from 'vitest';
import { dashboardUrl, isLoopback, refusal, servesHost } from '../../../src/cli/dashboard.js';

describe('dashboardUrl', () => {
  it('names the bound address and port with a trailing slash', () => {
    expect(dashboardUrl('127.0.0.1', 3000)).toBe('http://127.0.0.1:3000/');
    expect(dashboardUrl('localhost', 8080)).toBe('http://localhost:8080/');
  });

  it('turns a wildcard bind address into an openable loopback of the same family', () => {
    expect(dashboardUrl('0.0.0.0', 3000)).toBe('http://127.0.0.1:3000/');
    expect(dashboardUrl('::', 3000)).toBe('http://[::1]:3000/');
  });

  it('brackets an IPv6 literal', () => {
    expect(dashboardUrl('::1', 3000)).toBe('http://[::1]:3000/');
    expect(dashboardUrl('fe80::1', 80)).toBe('http://[fe80::1]:80/');
  });
});

describe('isLoopback', () => {
  it('accepts only addresses that this machine alone can reach', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1']) expect(isLoopback(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'dash.example.com'])
      expect(isLoopback(host)).toBe(false);
  });
});

describe('servesHost', () => {
  const local = { bind: '127.0.0.1', extra: [] };
  it('takes loopback names and the bind address, never another name', () => {
    for (const name of [
      'localhost',
      'LOCALHOST',
      'app.localhost',
      '127.0.0.1',
      '127.9.9.9',
      '[::1]',
      'localhost.',
    ])
      expect(servesHost(name, local), name).toBe(true);
    for (const name of ['rebind.evil.example', '127.evil.example', 'localhost.evil.example', '10.0.0.5'])
      expect(servesHost(name, local), name).toBe(false);
  });

  it('takes any IP address when bound to every interface, and the extra names given', () => {
    const wide = { bind: '0.0.0.0', extra: ['Dash.Example.com'] };
    for (const name of ['10.0.0.5', '[fe80::1]', 'dash.example.com', 'dash.example.com.'])
      expect(servesHost(name, wide), name).toBe(true);
    for (const name of ['example.com', 'x.dash.example.com', 'dash.example.com.evil.example'])
      expect(servesHost(name, wide), name).toBe(false);
    expect(servesHost('10.0.0.5', { bind: '10.0.0.5', extra: [] })).toBe(true);
    expect(servesHost('10.0.0.6', { bind: '10.0.0.5', extra: [] })).toBe(false);
    expect(servesHost('dash.internal', { bind: 'dash.internal', extra: [] })).toBe(true);
  });
});

describe('refusal', () => {
  const rules = { bind: '127.0.0.1', extra: [] };
  const at = { host: '127.0.0.1:3000' };
  const status = (method: string, headers: Record<string, string>) =>
    refusal({ method, headers }, rules)?.status;

  it('refuses any method with a Host that is not the dashboard, or no Host', () => {
    expect(status('GET', { host: 'rebind.evil.example:3000' })).toBe(403);
    expect(status('GET', {})).toBe(403);
    expect(status('GET', { host: 'a@b' })).toBe(403);
    expect(status('GET', at)).toBeUndefined();
    expect(
      status('GET', { ...at, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }),
    ).toBeUndefined();
  });

  it('refuses a write marked as from another origin by Sec-Fetch-Site, Origin or Referer', () => {
    expect(status('PUT', { ...at, 'sec-fetch-site': 'cross-site' })).toBe(403);
    expect(status('PUT', { ...at, 'sec-fetch-site': 'same-site' })).toBe(403);
    expect(status('PUT', { ...at, 'sec-fetch-site': 'none' })).toBe(403);
    expect(status('PUT', { ...at, origin: 'http://127.0.0.1:3001' })).toBe(403);
    expect(status('PUT', { ...at, origin: 'https://127.0.0.1:3000' })).toBeUndefined();
    expect(status('PUT', { ...at, origin: 'null' })).toBe(403);
    expect(status('DELETE', { ...at, referer: 'http://evil.example/x' })).toBe(403);
    expect(status('PUT', { ...at, referer: 'http://127.0.0.1:3000/queue/x' })).toBeUndefined();
    // Origin decides over Referer when both are sent.
    expect(
      status('PUT', { ...at, origin: 'http://127.0.0.1:3000', referer: 'http://evil.example/' }),
    ).toBeUndefined();
  });

  it('refuses a write whose body is not JSON, and lets a bodiless or JSON write by', () => {
    const same = { ...at, origin: 'http://127.0.0.1:3000', 'sec-fetch-site': 'same-origin' };
    expect(status('POST', { ...same, 'content-type': 'text/plain', 'content-length': '2' })).toBe(415);
    expect(status('POST', { ...same, 'content-type': 'application/x-www-form-urlencoded' })).toBe(415);
    expect(status('POST', { ...same, 'content-length': '12' })).toBe(415);
    expect(status('POST', { ...same, 'transfer-encoding': 'chunked' })).toBe(415);
    expect(status('POST', { ...same, 'content-type': 'Application/JSON; charset=utf-8' })).toBeUndefined();
    expect(status('PUT', same)).toBeUndefined();
    expect(status('PUT', { ...same, 'content-length': '0' })).toBeUndefined();
  });
});
