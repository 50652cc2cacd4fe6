import { describe, expect, it } from 'vitest';
import { dimensionType } from '../../../src/platform/config/dimensions.js';
import { createRowEncoder } from '../../../src/pull/encode.js';
import { RowValueError } from '../../../src/pull/encode.js';

const layout = {
  periodStart: '2026-03-02',
  periodEnd: '2026-03-02',
  dimensions: ['day', 'hour'] as const,
  loadId: 7,
  account: 'default',
};

describe('the hour dimension', () => {
  it('is a smallint column, and COPY writes the API key as a whole number Postgres reads as one', () => {
    expect(dimensionType('hour')).toBe('smallint');
    const encode = createRowEncoder(layout);
    expect(encode({ dims: ['2026-03-02', '07'], counters: [1, 2, 3, 4, 5] })).toBe(
      '2026-03-02\t2026-03-02\t2026-03-02\t07\t1\t2\t3\t4\t5\t7\tdefault\n',
    );
  });

  it('refuses an hour that is not a whole number before anything is sent', () => {
    const encode = createRowEncoder(layout);
    expect(() => encode({ dims: ['2026-03-02', '13:00'], counters: [1, 2, 3, 4, 5] })).toThrow(RowValueError);
    expect(() => encode({ dims: ['2026-03-02', '13:00'], counters: [1, 2, 3, 4, 5] })).toThrow(
      'hour value "13:00" is not a whole number',
    );
  });
});
