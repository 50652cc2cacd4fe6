import { describe, expect, it } from 'vitest';
import { exhaustedFor } from '../../../src/api/http.js';
import { limiterKey } from '../../../src/limits/limiter.js';
import { createAccountGuard, isAccountTrouble } from '../../../src/worker/runtime.js';

describe('the account guard', () => {
  it('never holds the pulls of a single account', () => {
    const guard = createAccountGuard(1, 2);
    guard.failed('default');
    guard.paused('default', 60_000);
    expect([guard.enter('default'), guard.enter('default'), guard.enter('default')]).toEqual([0, 0, 0]);
  });

  it('lets one of several accounts take all slots but one', () => {
    const guard = createAccountGuard(3, 3);
    expect(guard.enter('a')).toBe(0);
    expect(guard.enter('a')).toBe(0);
    expect(guard.enter('a')).toBeGreaterThan(0);
    expect(guard.enter('b')).toBe(0);
    guard.leave('a');
    expect(guard.enter('a')).toBe(0);
  });

  it('holds only the troubled account, longer with each failure in a row, until it answers', () => {
    let now = 0;
    const guard = createAccountGuard(2, 4, () => now);
    guard.failed('a');
    expect(guard.enter('a')).toBe(1_000);
    expect(guard.enter('b')).toBe(0);
    now = 1_000;
    guard.failed('a');
    expect(guard.enter('a')).toBe(2_000);
    now = 3_000;
    expect(guard.enter('a')).toBe(0);
    guard.leave('a');
    guard.succeeded('a');
    guard.failed('a');
    expect(guard.enter('a')).toBe(1_000);
    // A 429's pause holds the account for its Retry-After.
    guard.paused('b', 5_000);
    expect(guard.enter('b')).toBe(5_000);
  });

  it('calls no answer, a 5xx and a refused key trouble of the account, not a bad body or a 404', () => {
    expect(isAccountTrouble({ name: 'ApiTransportError', status: undefined })).toBe(true);
    expect(isAccountTrouble({ name: 'ApiHttpError', status: 503 })).toBe(true);
    expect(isAccountTrouble({ name: 'ApiHttpError', status: 401 })).toBe(true);
    expect(isAccountTrouble({ name: 'ApiHttpError', status: 404 })).toBe(false);
    expect(isAccountTrouble({ name: 'ReportFormatError' })).toBe(false);
    expect(isAccountTrouble(undefined)).toBe(false);
  });
});

describe('limiterKey', () => {
  it("gives each account its own key, and keeps the default account's key of releases before accounts", () => {
    expect(limiterKey('p')).toBe('p:adops:api-requests');
    expect(limiterKey('p', 'default')).toBe('p:adops:api-requests');
    expect(limiterKey('p', 'north')).toBe('p:adops:api-requests:north');
  });
});

describe('usage headers', () => {
  it('say the budget is spent only when none remains, for the ms until the reset', () => {
    expect(exhaustedFor({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '12' })).toBe(12_000);
    expect(exhaustedFor({ 'ratelimit-remaining': '0', 'ratelimit-reset': '1.5' })).toBe(1_500);
    expect(exhaustedFor({ 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': '12' })).toBeUndefined();
    expect(exhaustedFor({ 'x-ratelimit-remaining': '0' })).toBeUndefined();
    expect(exhaustedFor({})).toBeUndefined();
    // A reset hours away is capped: the pause is never longer than 5 minutes.
    expect(exhaustedFor({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1767225600' })).toBe(300_000);
  });
});
