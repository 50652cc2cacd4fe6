import { describe, expect, it } from 'vitest';
import { dimensionType } from '../../../src/config/dimensions.js';
import { afterUpgrades, pendingUpgrades } from '../../../src/warehouse/column-upgrades.js';
import { createRowEncoder } from '../../../src/warehouse/load/encode.js';
import { RowValueError } from '../../../src/warehouse/errors.js';
import { tableSpec } from '../../../src/warehouse/table-spec.js';

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

describe('known column upgrades', () => {
  const spec = tableSpec({ name: 'hourly', dimensions: ['day', 'hour'] });
  const found = spec.columns.map((c) => ({
    name: c.name,
    type: c.name === 'hour' ? 'text' : c.type,
    notNull: c.notNull,
  }));

  it('recognise a text hour as the hour upgrade, which leaves no difference behind', () => {
    const upgrades = pendingUpgrades(spec.columns, found);
    expect(upgrades).toEqual([{ column: 'hour', from: 'text', to: 'smallint' }]);
    expect(afterUpgrades(found, upgrades).find((c) => c.name === 'hour')?.type).toBe('smallint');
  });

  it('do not cover other retypes', () => {
    const retyped = found.map((c) => (c.name === 'hour' ? { ...c, type: 'integer' } : c));
    expect(pendingUpgrades(spec.columns, retyped)).toEqual([]);
    const tier = tableSpec({ name: 'tiers', dimensions: ['day', 'tier'] });
    const tierText = tier.columns.map((c) => ({ ...c, type: c.name === 'tier' ? 'text' : c.type }));
    expect(pendingUpgrades(tier.columns, tierText)).toEqual([]);
  });
});
