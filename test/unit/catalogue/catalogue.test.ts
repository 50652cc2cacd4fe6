import { describe, expect, it } from 'vitest';
import { buildCatalogue } from '../../../src/catalogue/rows.js';
import { ProblemLog } from '../../../src/catalogue/fields.js';
import { creative, fullCampaign } from './fixtures.js';

describe('buildCatalogue', () => {
  it('keeps one row per id when paging showed an entity twice, the last copy winning', () => {
    const catalogue = buildCatalogue(
      {
        campaigns: [fullCampaign({ name: 'old' }), fullCampaign({ name: 'new' })],
        creativesByCampaign: new Map([[862599431, [creative({ name: 'a' }), creative({ name: 'b' })]]]),
      },
      new ProblemLog(),
    );
    expect(catalogue.campaigns.map((c) => c.row.name)).toEqual(['new']);
    expect(catalogue.creatives.map((c) => c.name)).toEqual(['b']);
  });

  it('drops creative listings of campaigns that are not in the campaign list', () => {
    const catalogue = buildCatalogue(
      {
        campaigns: [fullCampaign()],
        creativesByCampaign: new Map([[99, [creative({ campaign_id: 99, creative_id: 5 })]]]),
      },
      new ProblemLog(),
    );
    expect(catalogue.creatives).toEqual([]);
  });

  it('skips entities with an unreadable id and keeps the rest, counting what it skipped', () => {
    const problems = new ProblemLog();
    const catalogue = buildCatalogue(
      {
        campaigns: [
          fullCampaign(),
          fullCampaign({ campaign_id: null }),
          fullCampaign({ campaign_id: '5', tier: 'x' }),
        ],
        creativesByCampaign: new Map([
          [862599431, [creative(), creative({ creative_id: 'n/a' })]],
          [5, [creative({ campaign_id: '5', creative_id: '6' })]],
        ]),
      },
      problems,
    );
    expect(catalogue.campaigns.map((c) => c.row.campaign_id)).toEqual([862599431, 5]);
    expect(catalogue.creatives.map((c) => [c.creative_id, c.campaign_id])).toEqual([
      [210267475, 862599431],
      [6, 5],
    ]);
    expect(problems.summary()).toMatchObject({
      count: 3,
      skipped: 2,
      byField: { 'campaign campaign_id': 1, 'campaign tier': 1, 'creative creative_id': 1 },
    });
  });
});
