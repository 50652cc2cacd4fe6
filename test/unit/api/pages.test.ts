import { describe, expect, it } from 'vitest';
import { ApiPaginationError, paginate } from '../../../src/api/pages.js';

const where = { method: 'GET', path: '/v2/campaigns' };
async function collect<T>(it: AsyncIterable<T[]>): Promise<T[][]> {
  const pages: T[][] = [];
  for await (const p of it) pages.push(p);
  return pages;
}

describe('paginate', () => {
  it('pages with limit and offset until a short page', async () => {
    const all = Array.from({ length: 25 }, (_, i) => ({ id: i + 1 }));
    const asked: Array<{ limit: number; offset: number }> = [];
    const pages = await collect(
      paginate(
        async (p) => (asked.push(p), all.slice(p.offset, p.offset + p.limit)),
        (x) => x.id,
        10,
        where,
      ),
    );
    expect(pages.map((p) => p.length)).toEqual([10, 10, 5]);
    expect(asked).toEqual([
      { limit: 10, offset: 0 },
      { limit: 10, offset: 10 },
      { limit: 10, offset: 20 },
    ]);
  });

  it('asks once more after an exactly full last page, and stops on the empty one', async () => {
    const all = Array.from({ length: 20 }, (_, i) => ({ id: i + 1 }));
    let calls = 0;
    const pages = await collect(
      paginate(
        async (p) => (calls++, all.slice(p.offset, p.offset + p.limit)),
        (x) => x.id,
        10,
        where,
      ),
    );
    expect(pages.length).toBe(2);
    expect(calls).toBe(3);
  });

  it('stops with an error when the API repeats a page instead of looping', async () => {
    const page = Array.from({ length: 10 }, (_, i) => ({ id: i + 1 }));
    const run = collect(
      paginate(
        async () => page,
        (x) => x.id,
        10,
        where,
      ),
    );
    await expect(run).rejects.toBeInstanceOf(ApiPaginationError);
    await expect(run).rejects.toThrow(/offset 10/);
  });

  it('drops items shifted into a later page but keeps going', async () => {
    const pages = [[{ id: 1 }, { id: 2 }], [{ id: 2 }, { id: 3 }], [{ id: 4 }]];
    let i = 0;
    const got = await collect(
      paginate(
        async () => pages[i++] ?? [],
        (x) => x.id,
        2,
        where,
      ),
    );
    expect(got).toEqual([[{ id: 1 }, { id: 2 }], [{ id: 3 }], [{ id: 4 }]]);
  });
});
