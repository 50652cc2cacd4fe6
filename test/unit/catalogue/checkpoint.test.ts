// A sync's checkpoint and progress (src/catalogue/checkpoint.ts).
import { describe, expect, it } from 'vitest';
import {
  Checkpoint,
  type SyncProgress,
  asSyncProgress,
  etaSeconds,
  foldStaged,
  progressLine,
} from '../../../src/catalogue/checkpoint.js';
import type { StagedPage } from '../../../src/catalogue/checkpoint.js';

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

const base: SyncProgress = {
  phase: 'creatives',
  startedAt: 1_000_000,
  requests: 40,
  campaignsDone: 30,
  campaignsTotal: 130,
  resumed: 0,
};

describe('sync progress', () => {
  it('estimates the time left from the pace of this try', () => {
    // 30 campaigns in 6 s: 100 more take 20 s.
    expect(etaSeconds(base, base.startedAt + 6_000)).toBeCloseTo(20);
  });

  it('leaves campaigns taken from the checkpoint out of the pace', () => {
    // 20 of the 30 came from the checkpoint: 10 listed in 6 s, so 100 more take 60 s.
    expect(etaSeconds({ ...base, resumed: 20 }, base.startedAt + 6_000)).toBeCloseTo(60);
  });

  it('has no estimate before the total is known or a campaign is listed, and 0 when done', () => {
    expect(etaSeconds({ ...base, campaignsTotal: null }, base.startedAt + 6_000)).toBeUndefined();
    expect(etaSeconds({ ...base, campaignsDone: 5, resumed: 5 }, base.startedAt + 6_000)).toBeUndefined();
    expect(etaSeconds({ ...base, campaignsDone: 130 }, base.startedAt + 6_000)).toBe(0);
  });

  it('prints a line with campaigns, requests, checkpoint and ETA', () => {
    expect(progressLine({ ...base, resumed: 20 }, base.startedAt + 6_000)).toBe(
      'sync creatives: 30/130 campaigns, 40 requests, 20 from the checkpoint, ETA 60s',
    );
    expect(progressLine({ ...base, phase: 'campaigns', campaignsTotal: null }, base.startedAt)).toBe(
      'sync campaigns: 30/? campaigns, 40 requests, ETA ?',
    );
  });

  it('reads back only a well-formed progress value', () => {
    expect(asSyncProgress({ ...base })).toEqual(base);
    expect(asSyncProgress({ ...base, campaignsTotal: null })).toMatchObject({ campaignsTotal: null });
    for (const bad of [
      null,
      42,
      { ...base, phase: 'x' },
      { ...base, requests: '1' },
      { ...base, campaignsTotal: 'n' },
    ])
      expect(asSyncProgress(bad)).toBeUndefined();
  });
});
