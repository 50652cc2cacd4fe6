import { describe, expect, it } from 'vitest';
import { scheduledTime } from '../../../src/plan/tick.js';

describe('scheduledTime', () => {
  it('is the instant the tick was scheduled for, however late it runs', () => {
    const at = Date.UTC(2026, 0, 10, 3);
    expect(scheduledTime({ data: {}, timestamp: 0, opts: { prevMillis: at } }).getTime()).toBe(at);
    expect(
      scheduledTime({ id: `repeat:adops-report-x:${at}`, data: {}, timestamp: 0, opts: {} }).getTime(),
    ).toBe(at);
    expect(scheduledTime({ id: 'other', data: {}, timestamp: at - 5, delay: 5, opts: {} }).getTime()).toBe(
      at,
    );
  });
});
