import { describe, expect, it } from 'vitest';
import { rssPlot } from '../../../bench/memory/plot.js';

const MB = 1_000_000;

describe('rssPlot', () => {
  it('draws one point per body size on a line, the goal as a dashed line, and labels each size', () => {
    const svg = rssPlot(
      [
        { bodyBytes: 100 * MB, growthBytes: 45 * MB },
        { bodyBytes: 10 * MB, growthBytes: 29 * MB },
        { bodyBytes: 1000 * MB, growthBytes: 60 * MB },
      ],
      128 * 1024 * 1024,
      'RSS <growth>',
    );
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<circle /g)).toHaveLength(3);
    expect(svg).toContain('>10 MB<');
    expect(svg).toContain('>1.0 GB<');
    expect(svg).toContain('goal: 134 MB');
    expect(svg).toContain('RSS &lt;growth>');
    // Points in order of body size: x grows along the line.
    const line = /<polyline points="([^"]+)" fill="none" stroke="#06c"/.exec(svg)?.[1] ?? '';
    const xs = line.split(' ').map((p) => Number(p.split(',')[0]));
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(xs).toHaveLength(3);
  });
});
