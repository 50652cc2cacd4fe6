// The house rule: src/ folders import only downwards (scripts/architecture/graph.ts has the floors),
// no file of the repository (src/, bench/, scripts/, test/) imports itself round a circle, and docs/architecture.svg shows the graph as it is.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { architectureSvg } from '../../scripts/architecture/draw.js';
import {
  CIRCLE_FREE,
  FEATURE_ARROWS,
  fileCycles,
  floorOf,
  folderEdges,
  importEdges,
  ruleBroken,
  type ImportEdge,
} from '../../scripts/architecture/graph.js';

const root = join(import.meta.dirname, '..', '..');
const edges = importEdges(root);

describe('src/ import graph', () => {
  it('sees the imports (a sanity check that the parser reads them)', () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(edges.some((e) => e.from === 'worker' && e.to === 'pull')).toBe(true);
  });

  it('places every folder of src/ on a floor', () => {
    const folders = readdirSync(join(root, 'src'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    for (const folder of folders) expect(() => floorOf(folder), folder).not.toThrow();
  });

  it('has no import from a lower floor to a higher one, nor across the emulator wall', () => {
    const broken = edges
      .map((e: ImportEdge) => ({ e, why: ruleBroken(e.from, e.to) }))
      .filter((x) => x.why !== undefined)
      .map(({ e, why }) => `${e.fromFile} imports ${e.toFile}: ${why}`);
    expect(broken).toEqual([]);
  });

  it('has no circle of imports between files, in src/ or anywhere else in the repository', () => {
    expect(fileCycles(edges)).toEqual([]);
    const everywhere = importEdges(root, CIRCLE_FREE);
    for (const dir of CIRCLE_FREE)
      expect(
        everywhere.some((e) => e.fromFile.startsWith(`${dir}/`)),
        dir,
      ).toBe(true);
    expect(everywhere.some((e) => e.fromFile.startsWith('bench/') && e.toFile.startsWith('src/'))).toBe(true);
    expect(fileCycles(everywhere)).toEqual([]);
  });

  it('would catch a broken rule or a circle (the checks are not vacuous)', () => {
    expect(ruleBroken('platform', 'cli')).toMatch(/higher floor/);
    expect(ruleBroken('plan', 'flatten')).toMatch(/share a floor/);
    expect(ruleBroken('pull', 'status')).toMatch(/not in FEATURE_ARROWS/);
    expect(ruleBroken('status', 'pull')).toBeUndefined();
    expect(ruleBroken('emulator', 'api')).toMatch(/apart/);
    expect(ruleBroken('cli', 'platform')).toBeUndefined();
    const edge = (a: string, b: string): ImportEdge => ({ fromFile: a, toFile: b, from: 'x', to: 'x' });
    expect(fileCycles([edge('a', 'b'), edge('b', 'c'), edge('c', 'a'), edge('c', 'd')])).toEqual([
      ['a', 'b', 'c'],
    ]);
    expect(() => floorOf('nowhere')).toThrow(/no floor/);
  });

  it('is drawn as it is in docs/architecture.svg (regenerate with npm run architecture)', () => {
    const committed = readFileSync(join(root, 'docs', 'architecture.svg'), 'utf8');
    expect(committed).toBe(architectureSvg(root));
    for (const key of folderEdges(edges).keys()) {
      expect(committed).toContain(`<title>${key.replace(' ', ' imports ')}</title>`);
    }
  });

  it('draws the feature arrows as a line (no circle) and names each in ARCHITECTURE.md', () => {
    const arrows = FEATURE_ARROWS.map(([a, b]) => ({ fromFile: a, toFile: b, from: a, to: b }));
    expect(fileCycles(arrows)).toEqual([]);
    const architecture = readFileSync(join(root, 'ARCHITECTURE.md'), 'utf8');
    for (const [from, to] of FEATURE_ARROWS)
      expect(architecture, `${from} -> ${to}`).toContain(`\`${from}\` -> \`${to}\``);
    // Every arrow allowed is one the code draws: an unused permission is a stale one.
    const drawn = new Set(edges.map((e) => `${e.from} ${e.to}`));
    expect(FEATURE_ARROWS.filter(([a, b]) => !drawn.has(`${a} ${b}`))).toEqual([]);
  });

  it('keeps the schema from parsing: src/schema imports only types from the parser (flatten/)', () => {
    const schema = join(root, 'src', 'schema');
    const files = readdirSync(schema, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(5);
    const valueImports = files.flatMap((f) =>
      [...readFileSync(join(schema, f), 'utf8').matchAll(/^import (type )?\{[^}]*\} from '([^']*)';/gms)]
        .filter((m) => m[2]?.includes('/flatten/') === true && m[1] === undefined)
        .map((m) => `${f}: ${m[0]}`),
    );
    expect(valueImports).toEqual([]);
    // The check sees an import of a value when there is one.
    expect(/^import (type )?\{/.exec("import { scan } from '../flatten/scan.js';")?.[1]).toBeUndefined();
  });
});
