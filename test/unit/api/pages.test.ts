import { describe, expect, it } from 'vitest';
import { entityId, listPages, paginate } from '../../../src/api/pages.js';

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
    await expect(run).rejects.toMatchObject({ name: 'ApiPaginationError' });
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

describe('listPages', () => {
  it('reads ids sent as strings, and resumes after staged pages without repeating their items', async () => {
    const all = Array.from({ length: 7 }, (_, i) => ({ id: String(i + 1) }));
    const asked: number[] = [];
    const pages = [];
    // Items 1..3 were staged from offset 0; since then an insert shifted the list by one, so
    // offset 3 now starts at item 3 again.
    for await (const p of listPages(
      async (p) => (asked.push(p.offset), all.slice(p.offset - 1, p.offset - 1 + p.limit)),
      (x) => x.id,
      3,
      where,
      { offset: 3, seen: [1, 2, 3] },
    ))
      pages.push(p);
    expect(asked).toEqual([3, 6]);
    expect(pages).toEqual([
      { offset: 3, items: [{ id: '4' }, { id: '5' }], size: 3, last: false },
      { offset: 6, items: [{ id: '6' }, { id: '7' }], size: 2, last: true },
    ]);
  });

  it('passes items without a readable id through, never taking them for repeats', async () => {
    const pages: { id: unknown }[][] = [[{ id: 1 }, { id: 'x' }], [{ id: 'x' }, { id: null }], []];
    let i = 0;
    const got = await collect(
      paginate(
        async () => pages[i++] ?? [],
        (x) => x.id,
        2,
        where,
      ),
    );
    expect(got).toEqual([
      [{ id: 1 }, { id: 'x' }],
      [{ id: 'x' }, { id: null }],
    ]);
  });

  it('reads entity ids from positive numbers and digit strings only', () => {
    expect([7, '862599431'].map(entityId)).toEqual([7, 862599431]);
    for (const bad of [0, -1, '0x1', '1.0', 1.5, '', null, undefined, '99999999999999999'])
      expect(entityId(bad), String(bad)).toBeUndefined();
  });
});
