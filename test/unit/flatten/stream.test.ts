import { describe, expect, it } from 'vitest';
import type { Dimension } from '../../../src/platform/config/dimensions.js';
import { ReportFormatError } from '../../../src/flatten/errors.js';
import { parseReport } from '../../../src/flatten/parse.js';
import { streamReport } from '../../../src/flatten/stream.js';
import type { ReportRow } from '../../../src/flatten/types.js';

const dims: Dimension[] = ['day', 'campaign_id'];
const leaf = (n: number) => ({
  ad_requests: n * 4,
  filled_impressions: n * 3,
  impressions: n * 2,
  measurable_impressions: n * 2,
  viewable_impressions: n,
});

/** A body of `days` x `campaigns` leaves, with totals that add up (or are off by `skew`). */
function body(days: number, campaigns: number, skew = 0): string {
  const items: Record<string, Record<string, ReturnType<typeof leaf>>> = {};
  let n = 0;
  let sum = 0;
  for (let d = 1; d <= days; d++) {
    const day: Record<string, ReturnType<typeof leaf>> = {};
    for (let c = 1; c <= campaigns; c++) {
      day[String(100_000_000 + c)] = leaf(++n);
      sum += n;
    }
    items[`2026-01-${String(d).padStart(2, '0')}`] = day;
  }
  return JSON.stringify({ items, totals: { ...leaf(sum), viewable_impressions: sum + skew } });
}

async function drain(rows: AsyncIterable<ReportRow>): Promise<ReportRow[]> {
  const out: ReportRow[] = [];
  for await (const row of rows) out.push(row);
  return out;
}

describe('streamReport', () => {
  it('yields exactly the rows of parseReport, over many small batches, and reconciles at the end', async () => {
    const text = body(3, 50);
    const stream = streamReport(text, dims, { batch: 7 });
    const rows = await drain(stream.rows);
    const parsed = parseReport(text, dims);
    expect(rows).toEqual(parsed.rows);
    expect(stream.summary()).toEqual({
      totals: parsed.totals,
      reconciliation: parsed.reconciliation,
      leaves: 150,
    });
    expect(stream.summary().reconciliation.ok).toBe(true);
  });

  it('reports a mismatch between the streamed rows and the totals', async () => {
    const stream = streamReport(body(2, 10, 5), dims, { batch: 3 });
    await drain(stream.rows);
    expect(stream.summary().reconciliation).toEqual({
      ok: false,
      differences: [{ counter: 'viewable_impressions', items: 210, totals: 215 }],
      reason: 'mismatch',
    });
  });

  it('sums counters above 2^32 exactly across batches', async () => {
    const big = 2 ** 51 + 1;
    const day = {
      '1': { ...leaf(1), ad_requests: big },
      '2': { ...leaf(1), ad_requests: big },
      '3': { ...leaf(1), ad_requests: big },
    };
    const text = JSON.stringify({
      items: { '2026-01-01': day },
      totals: { ...leaf(3), ad_requests: 3 * big },
    });
    const stream = streamReport(text, dims, { batch: 1 });
    await drain(stream.rows);
    expect(stream.summary().reconciliation.ok).toBe(true);
    expect(stream.summary().totals.ad_requests).toBe(3 * big);
  });

  it('throws the format error part way, and refuses a summary before the end', async () => {
    const text = body(3, 20).replace('"2026-01-03"', '"2026-01-03","x":1,"y"');
    const stream = streamReport(text, dims, { batch: 5 });
    expect(() => stream.summary()).toThrow(/read to the end/);
    const seen: ReportRow[] = [];
    await expect(
      (async () => {
        for await (const row of stream.rows) seen.push(row);
      })(),
    ).rejects.toBeInstanceOf(ReportFormatError);
    expect(seen.length).toBeGreaterThan(0);
  });
});
