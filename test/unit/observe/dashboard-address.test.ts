import { describe, expect, it } from 'vitest';
import { dashboardUrl, isLoopback } from '../../../src/observe/dashboard/address.js';

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
