import { describe, expect, it } from 'vitest';
import { Checkpoint, foldStaged } from '../../../src/catalogue/checkpoint.js';
import type { StagedPage } from '../../../src/warehouse/catalogue/runs.js';

const page = (listing: number, offset: number, ids: number[], size: number, last: boolean): StagedPage => ({
  listing,
  offset,
  items: ids.map((id) => ({ id })),
  size,
  last,
  gone: false,
});

describe('foldStaged', () => {
  it('continues each listing after its staged pages, and knows the complete ones', () => {
    const state = foldStaged([
      page(0, 2, [3, 4], 2, false),
      page(0, 0, [1, 2], 2, false),
      page(7, 0, [9], 1, true),
    ]);
    expect(state.get(0)).toEqual({
      items: [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }],
      next: 4,
      last: false,
      gone: false,
      pages: 2,
    });
    expect(state.get(7)).toMatchObject({ next: 1, last: true, pages: 1 });
  });

  it('counts a page whose items were repeats by its size, not its items', () => {
    const state = foldStaged([page(0, 0, [1, 2], 2, false), page(0, 2, [3], 2, true)]);
    expect(state.get(0)).toMatchObject({ next: 4, last: true, items: [{ id: 1 }, { id: 2 }, { id: 3 }] });
  });

  it('ignores pages after a gap, so they are read again', () => {
    const state = foldStaged([page(0, 0, [1, 2], 2, false), page(0, 4, [5, 6], 2, false)]);
    expect(state.get(0)).toMatchObject({ next: 2, last: false, pages: 1 });
  });

  it('marks a creative listing that answered 404 as gone', () => {
    const gone = { listing: 5, offset: -1, items: [], size: 0, last: true, gone: true };
    expect(foldStaged([page(5, 0, [1], 1, false), gone]).get(5)).toMatchObject({ gone: true, last: true });
  });
});

describe('Checkpoint', () => {
  it('stages pages in batches of the policy size, and the rest on flush', async () => {
    const batches: number[][] = [];
    const cp = new Checkpoint(async (pages) => void batches.push(pages.map((p) => p.offset)), [], {
      pages: 2,
      ms: 60_000,
    });
    for (const offset of [0, 1, 2]) await cp.add(page(0, offset, [offset], 1, false));
    expect(batches).toEqual([[0, 1]]);
    await cp.flush();
    expect(batches).toEqual([[0, 1], [2]]);
  });

  it('stages a lone page after the policy time without a flush', async () => {
    let staged!: () => void;
    const done = new Promise<void>((r) => (staged = r));
    const cp = new Checkpoint(async () => staged(), [], { pages: 100, ms: 10 });
    await cp.add(page(0, 0, [1], 1, true));
    await done;
    await cp.flush();
  });

  it('fails the next add and the flush once a staging failed', async () => {
    const cp = new Checkpoint(async () => Promise.reject(new Error('pg down')), [], { pages: 1, ms: 60_000 });
    await expect(cp.add(page(0, 0, [1], 1, false))).rejects.toThrow('pg down');
    await expect(cp.add(page(0, 1, [2], 1, false))).rejects.toThrow('pg down');
    await expect(cp.flush()).rejects.toThrow('pg down');
  });

  it('counts the pages it resumed from', () => {
    const cp = new Checkpoint(async () => undefined, [page(0, 0, [1], 1, true), page(1, 0, [2], 1, true)]);
    expect(cp.resumedPages).toBe(2);
    expect(cp.listing(3)).toMatchObject({ next: 0, last: false, items: [] });
  });
});
