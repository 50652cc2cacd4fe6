// The import graph of src/, folded to its top-level folders, and the floors it must respect; and the
// file graph of the whole repository, which must have no circle. Read by test/unit/architecture.test.ts (the rule) and scripts/architecture/draw.ts (the picture).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * The floors of src/, lowest first. A folder may import any folder on a lower floor, never one
 * above; folders of one floor import each other only along FEATURE_ARROWS.
 */
export const FLOORS: readonly (readonly string[])[] = [
  ['platform'],
  ['flatten', 'plan'],
  ['api'],
  ['limits', 'webhooks', 'schema', 'catalogue', 'pull', 'schedule', 'evolution', 'status'],
  ['doctor'],
  ['worker', 'emulator'],
  ['cli'],
];

/**
 * Where one feature uses another (from -> to): each arrow goes one way, through the few exports
 * ARCHITECTURE.md names, and together they form no circle.
 */
export const FEATURE_ARROWS: readonly (readonly [string, string])[] = [
  ['catalogue', 'limits'],
  ['pull', 'schema'],
  ['schedule', 'pull'],
  ['evolution', 'schema'],
  ['evolution', 'schedule'],
  ['evolution', 'webhooks'],
  ['status', 'catalogue'],
  ['status', 'evolution'],
  ['status', 'pull'],
  ['status', 'schema'],
  ['status', 'webhooks'],
];

/**
 * Folders that import no other folder of src/: the emulator is our model of the API, and must not
 * agree with our client or warehouse by sharing their code.
 */
export const STANDALONE: readonly string[] = ['emulator'];

export interface ImportEdge {
  readonly fromFile: string;
  readonly toFile: string;
  readonly from: string;
  readonly to: string;
}

/** Every .ts file under `dir`, as paths relative to `root`. */
function sourceFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(root, path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out.sort();
}

/** The top-level folder of src/ that `file` (relative to the root, e.g. src/api/x.ts) lives in. */
export function folderOf(file: string): string {
  const parts = file.split(sep);
  return parts.length > 2 ? (parts[1] ?? '') : '(root)';
}

/** The folders whose files must import round no circle: the product and all the code around it. */
export const CIRCLE_FREE: readonly string[] = ['src', 'bench', 'scripts', 'test'];

/**
 * Every relative import (static, re-export, type-only or dynamic) from a file under `dirs` to a file
 * under them; by default the files of src/, which the floors rule.
 */
export function importEdges(root: string, dirs: readonly string[] = ['src']): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const inside = (path: string): boolean => dirs.some((dir) => path.startsWith(`${dir}${sep}`));
  for (const file of dirs.flatMap((dir) => sourceFiles(root, dir))) {
    const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    for (const imported of info.importedFiles) {
      if (!imported.fileName.startsWith('.')) continue;
      const target = relative(root, resolve(root, dirname(file), imported.fileName)).replace(/\.js$/, '.ts');
      if (!inside(target)) continue;
      edges.push({ fromFile: file, toFile: target, from: folderOf(file), to: folderOf(target) });
    }
  }
  return edges;
}

/** The floor index of each folder; throws on a folder FLOORS does not place. */
export function floorOf(folder: string): number {
  const i = FLOORS.findIndex((floor) => floor.includes(folder));
  if (i < 0)
    throw new Error(`src/${folder} is on no floor: add it to FLOORS in scripts/architecture/graph.ts`);
  return i;
}

/** Why `from` may not import `to`, or undefined when it may. */
export function ruleBroken(from: string, to: string): string | undefined {
  if (from === to) return undefined;
  if (STANDALONE.includes(from)) return `${from} stands apart and imports no other folder`;
  const [f, t] = [floorOf(from), floorOf(to)];
  if (t < f) return undefined;
  if (t === f && FEATURE_ARROWS.some(([a, b]) => a === from && b === to)) return undefined;
  return t === f
    ? `${from} and ${to} share a floor, and ${from} -> ${to} is not in FEATURE_ARROWS`
    : `${to} is on a higher floor than ${from}`;
}

/** Folder-level edges with the number of file imports behind each. */
export function folderEdges(edges: readonly ImportEdge[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of edges) {
    if (e.from === e.to) continue;
    const key = `${e.from} ${e.to}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** File-level cycles, each as the list of files around it (Tarjan's strongly connected components). */
export function fileCycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.fromFile, [...(next.get(e.fromFile) ?? []), e.toFile]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v);
  return cycles;
}
