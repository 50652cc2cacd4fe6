// A body streamed in chunks must read exactly as the same body read whole: same rows, same totals,
// same error at the same byte, wherever the chunks and windows happen to end.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Dimension } from '../../../src/platform/config/dimensions.js';
import { parseReport } from '../../../src/flatten/parse.js';
import { streamReport } from '../../../src/flatten/stream.js';
import type { ReportRow } from '../../../src/flatten/types.js';

const dims: Dimension[] = ['day', 'campaign_id'];

/** A body of `days` x `campaigns` leaves (some values spelled as strings, some spaced out). */
function body(days: number, campaigns: number, seed: number): string {
  const items: Record<string, Record<string, Record<string, unknown>>> = {};
  let n = seed;
  const sum = [0, 0, 0, 0, 0];
  for (let d = 1; d <= days; d++) {
    const day: Record<string, Record<string, unknown>> = {};
    for (let c = 1; c <= campaigns; c++) {
      n = (n * 7919 + 13) % 1_000_003;
      const v = [n * 4, n * 3, n * 2, n * 2, n];
      v.forEach((x, i) => (sum[i] = (sum[i] as number) + x));
      day[String(100_000_000 + c)] = {
        ad_requests: n % 3 === 0 ? String(v[0]) : v[0],
        filled_impressions: v[1],
        impressions: v[2],
        measurable_impressions: v[3],
        viewable_impressions: v[4],
      };
    }
    items[`2026-01-${String(d).padStart(2, '0')}`] = day;
  }
  const [a, f, i, m, v] = sum;
  const totals = {
    ad_requests: a,
    filled_impressions: f,
    impressions: i,
    measurable_impressions: m,
    viewable_impressions: v,
  };
  const text = JSON.stringify(
    { meta: { note: 'x'.repeat(seed % 50) }, items, totals },
    null,
    seed % 2 ? 1 : 0,
  );
  return seed % 3 === 0 ? `\ufeff${text}  \n` : text;
}

/** `bytes` cut at the given points, as a response's chunks. */
async function* chunked(bytes: Buffer, cuts: readonly number[]): AsyncGenerator<Buffer> {
  let from = 0;
  for (const cut of [...cuts].sort((x, y) => x - y)) {
    if (cut <= from || cut >= bytes.length) continue;
    yield bytes.subarray(from, cut);
    from = cut;
  }
  yield bytes.subarray(from);
}

type Outcome = { rows: ReportRow[]; summary: unknown } | { error: string };

function whole(bytes: Buffer): Outcome {
  try {
    const parsed = parseReport(bytes, dims);
    return {
      rows: parsed.rows,
      summary: { totals: parsed.totals, reconciliation: parsed.reconciliation, leaves: parsed.rows.length },
    };
  } catch (error) {
    return { error: errorText(error) };
  }
}

async function streamed(
  bytes: Buffer,
  cuts: readonly number[],
  windowBytes: number,
  margin: number,
): Promise<Outcome> {
  const stream = streamReport(chunked(bytes, cuts), dims, { batch: 5, windowBytes, margin });
  try {
    const rows: ReportRow[] = [];
    for await (const row of stream.rows) rows.push(row);
    return { rows, summary: stream.summary() };
  } catch (error) {
    return { error: errorText(error) };
  }
}

/** The error's class and message, without the body's length (a stream may not know it yet). */
function errorText(error: unknown): string {
  const e = error as Error;
  return `${e.name}: ${e.message.replace(/ of \d+/, '')}`;
}

const cutsOf = (length: number) =>
  fc.array(fc.integer({ min: 1, max: Math.max(1, length - 1) }), { maxLength: 40 });

describe('streamReport over chunks', () => {
  it('reads a body in any chunking and windowing exactly as parseReport reads it whole', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 1, max: 300 }),
        fc.constantFrom(0, 1, 3, 16, 64),
        fc.array(fc.integer({ min: 1, max: 5000 }), { maxLength: 40 }),
        async (days, campaigns, seed, windowBytes, margin, cuts) => {
          const bytes = Buffer.from(body(days, campaigns, seed));
          const expected = whole(bytes);
          expect('rows' in expected).toBe(true);
          expect(await streamed(bytes, cuts, windowBytes, margin)).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('fails a broken body with the error parseReport gives, at the same byte', async () => {
    const base = Buffer.from(body(3, 6, 7));
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: base.length - 1 }),
        fc.constantFrom(
          '',
          '}',
          ']',
          '[',
          '{',
          ',',
          ':',
          '"',
          'x',
          '1',
          ' ',
          '\\',
          'true',
          '"a":{',
          '-',
          '.5e',
        ),
        fc.boolean(),
        fc.integer({ min: 1, max: 200 }),
        fc.constantFrom(0, 1, 8, 32),
        cutsOf(base.length),
        async (at, insert, truncate, windowBytes, margin, cuts) => {
          const bytes = truncate
            ? base.subarray(0, at)
            : Buffer.concat([base.subarray(0, at), Buffer.from(insert), base.subarray(at + 1)]);
          const expected = whole(bytes);
          expect(await streamed(bytes, cuts, windowBytes, margin)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps memory to a window: a source read only as fast as the rows are taken', async () => {
    const bytes = Buffer.from(body(4, 400, 3));
    let read = 0;
    async function* counted(): AsyncGenerator<Buffer> {
      for (let i = 0; i < bytes.length; i += 1000) {
        read += Math.min(1000, bytes.length - i);
        yield bytes.subarray(i, i + 1000);
      }
    }
    const stream = streamReport(counted(), dims, { batch: 10, windowBytes: 4000, margin: 256 });
    const it = stream.rows[Symbol.asyncIterator]();
    for (let i = 0; i < 20; i++) await it.next();
    // Twenty rows in, the source has given a window or two, not the body.
    expect(read).toBeLessThan(10_000);
    expect(bytes.length).toBeGreaterThan(100_000);
    await it.return?.();
  });
});
