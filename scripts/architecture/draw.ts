// Draws src/'s folder import graph as docs/architecture.svg: one row per floor, the lowest at the
// bottom, an arrow for each folder that imports another (the picture changes only when such a
// pair appears or goes). Run with `npm run architecture`; test/unit/architecture.test.ts checks
// that the committed file is current.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FLOORS, folderEdges, importEdges } from './graph.js';

const BOX_W = 96;
const BOX_H = 32;
const GAP_X = 40;
const ROW_H = 70;
const MARGIN = 30;

interface Box {
  readonly x: number;
  readonly y: number;
}

/** The SVG text of the graph of the repository at `root`. */
export function architectureSvg(root: string): string {
  const edges = folderEdges(importEdges(root));
  const widest = Math.max(...FLOORS.map((f) => f.length));
  const width = Math.max(MARGIN * 2 + widest * BOX_W + (widest - 1) * GAP_X + 60, 640);
  const height = MARGIN * 2 + FLOORS.length * ROW_H;
  const boxes = new Map<string, Box>();
  FLOORS.forEach((floor, level) => {
    const rowWidth = floor.length * BOX_W + (floor.length - 1) * GAP_X;
    const left = (width - rowWidth) / 2;
    const y = height - MARGIN - (level + 1) * ROW_H + (ROW_H - BOX_H) / 2;
    floor.forEach((folder, i) => boxes.set(folder, { x: left + i * (BOX_W + GAP_X), y }));
  });
  const lines: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">`,
    '<defs><marker id="head" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#5b6b7f"/></marker></defs>',
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${MARGIN}" y="${MARGIN - 10}" fill="#333">src/ imports: every arrow points down a floor (cli on top, platform at the bottom; features across only along FEATURE_ARROWS)</text>`,
  ];
  for (const key of [...edges.keys()].sort()) {
    const [from, to] = key.split(' ');
    const a = boxes.get(from ?? '');
    const b = boxes.get(to ?? '');
    if (a === undefined || b === undefined) continue;
    const down = b.y > a.y;
    const x1 = a.x + BOX_W / 2;
    const y1 = down ? a.y + BOX_H : a.y;
    const x2 = b.x + BOX_W / 2;
    const y2 = down ? b.y : b.y + BOX_H;
    lines.push(
      `<line x1="${x1.toFixed(1)}" y1="${y1.toFixed(1)}" x2="${x2.toFixed(1)}" y2="${y2.toFixed(1)}" stroke="#5b6b7f" stroke-opacity="0.55" stroke-width="1.2" marker-end="url(#head)"><title>${from} imports ${to}</title></line>`,
    );
  }
  for (const [folder, { x, y }] of boxes) {
    lines.push(
      `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${BOX_W}" height="${BOX_H}" rx="6" fill="#e8f0fb" stroke="#2f5d9b"/>`,
      `<text x="${(x + BOX_W / 2).toFixed(1)}" y="${(y + BOX_H / 2 + 4).toFixed(1)}" text-anchor="middle" fill="#12325c">${folder}/</text>`,
    );
  }
  lines.push('</svg>', '');
  return lines.join('\n');
}

const isMain = process.argv[1] !== undefined && /architecture[\\/]draw\.[jt]s$/.test(process.argv[1]);
if (isMain) {
  const root = process.cwd();
  const out = join(root, 'docs', 'architecture.svg');
  writeFileSync(out, architectureSvg(root));
  console.log(`wrote ${out}`);
}
