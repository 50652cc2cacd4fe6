import { describe, expect, it } from 'vitest';
import {
  asSyncProgress,
  etaSeconds,
  progressLine,
  type SyncProgress,
} from '../../../src/catalogue/checkpoint.js';

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
