// Reads the .cpuprofile files `node --cpu-prof` wrote and says where the time went, by function
// and by source file (self time), so a missed target comes with its explanation.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time in ms per key, where the key names a node's frame. */
export function selfTimes(profile: CpuProfile, keyOf: (n: ProfileNode) => string): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const out = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (node === undefined) return;
    const key = keyOf(node);
    out.set(key, (out.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return out;
}

/**
 * Inclusive time in ms per key: a sample counts once for every distinct key on its stack (so a
 * recursive function is not counted twice). Shows which of our entry points the time sits under.
 */
export function inclusiveTimes(profile: CpuProfile, keyOf: (n: ProfileNode) => string): Map<string, number> {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const out = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at);
      if (node === undefined) break;
      const key = keyOf(node);
      if (seen.has(key)) continue;
      seen.add(key);
      out.set(key, (out.get(key) ?? 0) + ms);
    }
  });
  return out;
}

function shortUrl(url: string): string {
  const at = url.lastIndexOf('/dist/');
  if (at >= 0) return url.slice(at + 6);
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) return url.slice(nm + 14);
  return url === '' ? '(native)' : url.replace(/^file:\/\//, '');
}

/** A text summary of every profile in `dir`: the top `top` functions and files by self time. */
export async function summarizeProfiles(dir: string, top: number): Promise<string> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  const lines: string[] = [];
  for (const file of files) {
    const profile = JSON.parse(await readFile(join(dir, file), 'utf8')) as CpuProfile;
    const fns = selfTimes(
      profile,
      (n) =>
        `${n.callFrame.functionName || '(anonymous)'} ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`,
    );
    const byFile = selfTimes(profile, (n) => shortUrl(n.callFrame.url));
    const total = [...fns.values()].reduce((a, b) => a + b, 0);
    const show = (m: Map<string, number>, n: number) =>
      [...m.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, n)
        .map(
          ([k, ms]) =>
            `  ${ms.toFixed(0).padStart(7)} ms ${((100 * ms) / total).toFixed(1).padStart(5)}%  ${k}`,
        );
    lines.push(`profile ${join(dir, file)}: ${total.toFixed(0)} ms sampled (main thread)`);
    lines.push(' by function (self time):', ...show(fns, top));
    lines.push(' by file (self time):', ...show(byFile, 12));
    const ours = inclusiveTimes(profile, (n) =>
      /\/(src|bench)\//.test(n.callFrame.url) || n.callFrame.url.includes('/node_modules/')
        ? `${n.callFrame.functionName || '(anonymous)'} ${shortUrl(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`
        : '',
    );
    ours.delete('');
    lines.push(' our code and packages (inclusive time):', ...show(ours, top));
  }
  return lines.join('\n');
}
