import { describe, expect, it } from 'vitest';
import {
  FieldReader,
  KEPT_PROBLEMS,
  ProblemLog,
  REPAIRED_TEXT,
  asBool,
  asInt,
  asNum,
  storableEntity,
} from '../../../src/catalogue/fields.js';

describe('scalar reads', () => {
  it('reads whole numbers from numbers and digit strings, nothing else', () => {
    expect([123, '123', '-4', '0', '9007199254740991'].map(asInt)).toEqual([
      123, 123, -4, 0, 9007199254740991,
    ]);
    for (const bad of ['12.5', 12.5, '1e3', ' 1', '', '0x10', '9007199254740993', true, null, [1], {}])
      expect(asInt(bad), JSON.stringify(bad)).toBeUndefined();
  });

  it('reads decimals from numbers and decimal strings', () => {
    expect([2.75, '2.75', '-1', '3e2'].map(asNum)).toEqual([2.75, 2.75, -1, 300]);
    for (const bad of ['2,5', 'NaN', 'Infinity', '', '1.', true])
      expect(asNum(bad), String(bad)).toBeUndefined();
  });

  it('reads booleans from true/false, 1/0, "1"/"0" and "true"/"false"', () => {
    expect([true, 1, '1', 'true'].map(asBool)).toEqual([true, true, true, true]);
    expect([false, 0, '0', 'false'].map(asBool)).toEqual([false, false, false, false]);
    for (const bad of ['yes', 'TRUE', 2, '', null]) expect(asBool(bad), String(bad)).toBeUndefined();
  });
});

describe('FieldReader', () => {
  it('reads every typed column from its string form', () => {
    const problems = new ProblemLog();
    const r = new FieldReader('campaign', 1, problems);
    const obj = { n: '42', f: '0.5', b: '0', t: '1757664027', z: '0', list: ['1', 2] };
    expect(r.int(obj, 'n')).toBe(42);
    expect(r.num(obj, 'f')).toBe(0.5);
    expect(r.bool(obj, 'b')).toBe(false);
    expect(r.time(obj, 't')).toBe('2025-09-12T08:00:27.000Z');
    expect(r.time(obj, 'z')).toBeNull();
    expect(r.intList(obj, 'list')).toEqual([1, 2]);
    expect(problems.summary().count).toBe(0);
  });

  it('reads a value that does not fit as null and reports it once, with a short excerpt', () => {
    const problems = new ProblemLog();
    const r = new FieldReader('creative', 9, problems);
    const long = 'x'.repeat(200);
    expect(r.int({ w: long }, 'w', 'data.width')).toBeNull();
    expect(r.time({ t: -5 }, 't')).toBeNull();
    expect(r.str({ s: 7 }, 's')).toBeNull();
    const [first, second, third] = problems.summary().examples;
    expect(first).toMatchObject({ entity: 'creative', id: 9, field: 'data.width', expected: 'an integer' });
    expect(first?.value.length).toBeLessThan(80);
    expect(second).toMatchObject({
      field: 't',
      expected: 'UNIX seconds from 1970 to 9999',
      value: '-5 (number)',
    });
    expect(third).toMatchObject({ field: 's', expected: 'a string', value: '7 (number)' });
    expect(problems.summary().count).toBe(3);
  });
});

describe('storableEntity', () => {
  it('repairs text Postgres cannot hold, keys included, and reports each field once by its stored path', () => {
    const problems = new ProblemLog();
    const sent = {
      campaign_id: 5,
      name: 'Spring\u0000Sale',
      notes: 'Q2 \ud83d plan\u0000',
      data: { landing_page: 'https://x.example/\udc00', sizes: ['ok', 'a\u0000'] },
      ['lab\u0000el']: 'x',
      fine: 'caf\u00e9 \ud83d\ude00',
    };
    const stored = storableEntity('campaign', 5, sent, problems);
    expect(stored).toEqual({
      campaign_id: 5,
      name: 'SpringSale',
      notes: 'Q2 \ufffd plan',
      data: { landing_page: 'https://x.example/\ufffd', sizes: ['ok', 'a'] },
      label: 'x',
      fine: 'caf\u00e9 \ud83d\ude00',
    });
    const summary = problems.summary();
    expect(summary).toMatchObject({ count: 5, repaired: 5, skipped: 0 });
    expect(summary.examples.map((p) => p.field)).toEqual([
      'name',
      'notes',
      'data.landing_page',
      'data.sizes[1]',
      'label',
    ]);
    expect(summary.examples[0]).toEqual({
      entity: 'campaign',
      id: 5,
      field: 'name',
      expected: REPAIRED_TEXT,
      value: '"Spring\\u0000Sale" (string)',
      repaired: true,
    });
    // Nothing to repair: the very same object, nothing reported.
    const clean = { campaign_id: 6, name: 'Plain', data: { list: [1, 'two'] } };
    expect(storableEntity('campaign', 6, clean, problems)).toBe(clean);
    expect(problems.summary().count).toBe(5);
  });
});

describe('ProblemLog', () => {
  it('counts every problem and aggregates by field, but keeps only the first few in full', () => {
    const log = new ProblemLog();
    for (let i = 0; i < KEPT_PROBLEMS + 50; i++) {
      const r = new FieldReader('campaign', i + 1, log);
      r.int({ tier: 'high' }, 'tier');
      if (i % 10 === 0) r.intList({ zone_ids: [1, 'x'] }, 'zone_ids');
    }
    const s = log.summary();
    expect(s.count).toBe(KEPT_PROBLEMS + 50 + 15);
    expect(s.examples).toHaveLength(KEPT_PROBLEMS);
    expect(s.byField).toEqual({ 'campaign tier': KEPT_PROBLEMS + 50, 'campaign zone_ids[]': 15 });
    expect(Object.keys(s.byField)[0]).toBe('campaign tier');
    expect(s.skipped).toBe(0);
  });
});
