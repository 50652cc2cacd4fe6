// The catalogue's statements and storable text (src/warehouse/catalogue/).
import { describe, expect, it } from 'vitest';
import { CAMPAIGN_COLUMNS, storableJson, storableText } from '../../../src/catalogue/stored-rows.js';
import { chunks } from '../../../src/catalogue/sync.js';
import { softDeleteStatement, upsertStatement } from '../../../src/catalogue/sql.js';
import { parseViewFile } from '../../../src/schema/views.js';

const CAMPAIGNS = { table: 'campaigns', key: 'campaign_id', columns: CAMPAIGN_COLUMNS } as const;

describe('entity statements', () => {
  it('carries every row value in one jsonb parameter, never in the SQL text', () => {
    const s = upsertStatement('adops', 'north', CAMPAIGNS, [
      { campaign_id: 1, name: "x'); DROP TABLE y; --" },
    ]);
    expect(s.text).not.toContain('DROP TABLE');
    expect(s.values).toHaveLength(2);
    expect(s.values[1]).toBe('north');
    expect(JSON.parse(s.values[0] as string)).toEqual([{ campaign_id: 1, name: "x'); DROP TABLE y; --" }]);
    expect(s.text).toContain('ON CONFLICT (account, "campaign_id") DO UPDATE');
    expect(s.text).toContain('deleted_at = NULL');
    expect(s.text).not.toContain('"campaign_id" = EXCLUDED');
  });

  it("soft-deletes only the account's live rows that the upserts of this transaction did not stamp", () => {
    const s = softDeleteStatement('adops', 'north', CAMPAIGNS);
    expect(s.text).toBe(
      'UPDATE "adops"."campaigns" SET deleted_at = now() WHERE account = $1 AND deleted_at IS NULL AND synced_at <> now()',
    );
    expect(s.values).toEqual(['north']);
  });

  it('refuses an unsafe schema name', () => {
    expect(() => softDeleteStatement('a"; drop', 'default', CAMPAIGNS)).toThrow(/unsafe SQL identifier/);
  });

  it('splits into chunks of at most the given size', () => {
    expect(chunks([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunks([], 3)).toEqual([]);
  });
});

describe('parseViewFile', () => {
  it('reads the report name from the file name and the required columns from the header', () => {
    const v = parseViewFile(
      'daily_creative.sql',
      '-- View\n-- requires: day, campaign_id , creative_id\nSELECT 1',
    );
    expect(v.report).toBe('daily_creative');
    expect(v.requires).toEqual(['day', 'campaign_id', 'creative_id']);
  });
});

describe('storableText', () => {
  it('removes NULs and replaces each unpaired surrogate with U+FFFD, keeping pairs and other text', () => {
    expect(storableText('a\u0000b\u0000')).toBe('ab');
    expect(storableText('\udc00x\ud83d')).toBe('\ufffdx\ufffd');
    expect(storableText('\ud83d\ude00 é \t\n')).toBe('\ud83d\ude00 é \t\n');
    const plain = 'plain';
    expect(storableText(plain)).toBe(plain);
  });
});

describe('storableJson', () => {
  it('keeps the first value when a repaired key meets an existing one, and __proto__ as a key', () => {
    const parsed = JSON.parse('{"a":1,"a\\u0000":2,"__proto__":{"x":"\\u0000"}}') as Record<string, unknown>;
    const paths: string[] = [];
    const stored = storableJson(parsed, (path) => paths.push(path)) as Record<string, unknown>;
    expect(Object.keys(stored)).toEqual(['a', '__proto__']);
    expect(stored.a).toBe(1);
    expect(Object.getOwnPropertyDescriptor(stored, '__proto__')?.value).toEqual({ x: '' });
    expect(paths).toEqual(['a', '__proto__.x']);
    // What Postgres refused before is now JSON it takes: no \u0000, no lone surrogate escapes.
    expect(JSON.stringify(storableJson(['\udc00', { k: 'v\u0000' }]))).toBe('["\ufffd",{"k":"v"}]');
  });
});
