// The memory section's plot: peak RSS growth against body size, as an SVG the bench writes itself.

export interface RssPoint {
  readonly bodyBytes: number;
  readonly growthBytes: number;
}

const W = 640;
const H = 360;
const PAD = { left: 70, right: 20, top: 30, bottom: 50 };
const MB = 1_000_000;

/**
 * An SVG of `points` (body size on a log axis, RSS growth on a linear one), with the goal line
 * (`limitBytes`) and, for scale, what holding the body whole would cost (growth = body size).
 */
export function rssPlot(points: readonly RssPoint[], limitBytes: number, title: string): string {
  const sorted = [...points].sort((a, b) => a.bodyBytes - b.bodyBytes);
  const minX = Math.log10(Math.min(...sorted.map((p) => p.bodyBytes)) / MB);
  const maxX = Math.log10(Math.max(...sorted.map((p) => p.bodyBytes)) / MB);
  const spanX = Math.max(maxX - minX, 0.5);
  const maxY = Math.max(limitBytes * 2, ...sorted.map((p) => p.growthBytes)) / MB;
  const x = (bytes: number) =>
    PAD.left + ((Math.log10(bytes / MB) - minX) / spanX) * (W - PAD.left - PAD.right);
  const y = (bytes: number) =>
    H - PAD.bottom - (Math.min(bytes / MB, maxY) / maxY) * (H - PAD.top - PAD.bottom);
  const line = sorted.map((p) => `${x(p.bodyBytes).toFixed(1)},${y(p.growthBytes).toFixed(1)}`).join(' ');
  const whole = sorted.map((p) => `${x(p.bodyBytes).toFixed(1)},${y(p.bodyBytes).toFixed(1)}`).join(' ');
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => Math.round(f * maxY));
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="18" text-anchor="middle" font-size="14">${escape(title)}</text>`,
    `<line x1="${PAD.left}" y1="${H - PAD.bottom}" x2="${W - PAD.right}" y2="${H - PAD.bottom}" stroke="black"/>`,
    `<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${H - PAD.bottom}" stroke="black"/>`,
    ...yTicks.map(
      (t) =>
        `<text x="${PAD.left - 6}" y="${(y(t * MB) + 4).toFixed(1)}" text-anchor="end">${t}</text>` +
        `<line x1="${PAD.left}" y1="${y(t * MB).toFixed(1)}" x2="${W - PAD.right}" y2="${y(t * MB).toFixed(1)}" stroke="#ddd"/>`,
    ),
    ...sorted.map(
      (p) =>
        `<text x="${x(p.bodyBytes).toFixed(1)}" y="${H - PAD.bottom + 16}" text-anchor="middle">${formatMb(p.bodyBytes)}</text>`,
    ),
    `<text x="${W / 2}" y="${H - 10}" text-anchor="middle">body size (log scale)</text>`,
    `<text x="16" y="${H / 2}" text-anchor="middle" transform="rotate(-90 16 ${H / 2})">peak RSS growth, MB</text>`,
    `<line x1="${PAD.left}" y1="${y(limitBytes).toFixed(1)}" x2="${W - PAD.right}" y2="${y(limitBytes).toFixed(1)}" stroke="#c00" stroke-dasharray="6 4"/>`,
    `<text x="${W - PAD.right - 4}" y="${(y(limitBytes) - 6).toFixed(1)}" text-anchor="end" fill="#c00">goal: ${formatMb(limitBytes)}</text>`,
    `<polyline points="${whole}" fill="none" stroke="#999" stroke-dasharray="2 3"/>`,
    `<text x="${PAD.left + 8}" y="${PAD.top + 14}" fill="#999">dotted: the body held whole (growth = body size, clipped)</text>`,
    `<polyline points="${line}" fill="none" stroke="#06c" stroke-width="2"/>`,
    ...sorted.map(
      (p) =>
        `<circle cx="${x(p.bodyBytes).toFixed(1)}" cy="${y(p.growthBytes).toFixed(1)}" r="4" fill="#06c"><title>${formatMb(p.bodyBytes)}: +${formatMb(p.growthBytes)}</title></circle>`,
    ),
    '</svg>',
  ];
  return `${parts.join('\n')}\n`;
}

function formatMb(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : `${Math.round(bytes / MB)} MB`;
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}
