import { describe, expect, it } from 'vitest';
import { buildCatalogue } from '../../../src/warehouse/entities/catalogue.js';
import { creative, fullCampaign } from './fixtures.js';

describe('buildCatalogue', () => {
  it('keeps one row per id when paging showed an entity twice, the last copy winning', () => {
    const catalogue = buildCatalogue({
      campaigns: [fullCampaign({ name: 'old' }), fullCampaign({ name: 'new' })],
      creativesByCampaign: new Map([[862599431, [creative({ name: 'a' }), creative({ name: 'b' })]]]),
    });
    expect(catalogue.campaigns.map((c) => c.row.name)).toEqual(['new']);
    expect(catalogue.creatives.map((c) => c.name)).toEqual(['b']);
  });

  it('drops creative listings of campaigns that are not in the campaign list', () => {
    const catalogue = buildCatalogue({
      campaigns: [fullCampaign()],
      creativesByCampaign: new Map([[99, [creative({ campaign_id: 99, creative_id: 5 })]]]),
    });
    expect(catalogue.creatives).toEqual([]);
  });
});
