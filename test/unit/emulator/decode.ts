// Decoders for tests that compare a quirky answer with the faithful one: same data, other encoding.

const BOOLEANS: Record<string, boolean> = { '1': true, '0': false, true: true, false: false };

/**
 * Paths where `quirky` is not `faithful` as the quirks may encode it: a number as its decimal
 * string, a boolean as "1"/"0"/"true"/"false", an empty object or an unbounded delivery as [],
 * keys in any order. An empty list means the same data.
 */
export function encodingDiff(faithful: unknown, quirky: unknown, path = '$'): string[] {
  if (typeof faithful === 'number') return quirky === faithful || quirky === String(faithful) ? [] : [path];
  if (typeof faithful === 'boolean')
    return quirky === faithful || (typeof quirky === 'string' && BOOLEANS[quirky] === faithful) ? [] : [path];
  if (Array.isArray(faithful)) {
    if (!Array.isArray(quirky) || quirky.length !== faithful.length) return [path];
    return faithful.flatMap((v, i) => encodingDiff(v, quirky[i], `${path}[${i}]`));
  }
  if (typeof faithful === 'object' && faithful !== null) {
    const f = faithful as Record<string, unknown>;
    const keys = Object.keys(f);
    const unset = keys.length === 0 || (path.endsWith('.delivery') && f.start === 0 && f.end === 0);
    if (Array.isArray(quirky)) return unset && quirky.length === 0 ? [] : [path];
    if (typeof quirky !== 'object' || quirky === null) return [path];
    const q = quirky as Record<string, unknown>;
    if (Object.keys(q).sort().join() !== [...keys].sort().join()) return [`${path} (keys)`];
    return keys.flatMap((k) => encodingDiff(f[k], q[k], `${path}.${k}`));
  }
  return faithful === quirky ? [] : [path];
}

const COUNTERS = [
  'ad_requests',
  'filled_impressions',
  'impressions',
  'measurable_impressions',
  'viewable_impressions',
];

/** A counter as a number, from a JSON number or a string of digits; throws on anything else. */
function counter(raw: unknown): number {
  if (typeof raw === 'number') return raw;
  if (typeof raw === 'string' && /^\d+$/.test(raw)) return Number(raw);
  throw new Error(`not a counter: ${JSON.stringify(raw)}`);
}

/** A report decoded whatever its encoding: leaf key (dimension values joined by |) -> counters, and totals. */
export interface DecodedReport {
  leaves: Map<string, number[]>;
  totals: number[] | 'missing' | 'empty';
}

/** Decodes a report body in nested or rows shape, counters as numbers or strings, [] for empty. */
export function decodeReport(body: unknown, dimensions: readonly string[]): DecodedReport {
  const doc = body as { items: unknown; totals?: unknown };
  const leaves = new Map<string, number[]>();
  const add = (key: string, node: Record<string, unknown>) => {
    if (leaves.has(key)) throw new Error(`leaf ${key} twice`);
    leaves.set(
      key,
      COUNTERS.map((c) => counter(node[c])),
    );
  };
  if (Array.isArray(doc.items)) {
    for (const row of doc.items as Record<string, unknown>[])
      add(dimensions.map((d) => String(row[d])).join('|'), row);
  } else {
    const walk = (node: Record<string, unknown>, depth: number, prefix: string[]) => {
      if (depth === dimensions.length) return add(prefix.join('|'), node);
      for (const [k, v] of Object.entries(node))
        walk(v as Record<string, unknown>, depth + 1, [...prefix, k]);
    };
    walk(doc.items as Record<string, unknown>, 0, []);
  }
  const totals =
    doc.totals === undefined
      ? 'missing'
      : Array.isArray(doc.totals)
        ? 'empty'
        : COUNTERS.map((c) => counter((doc.totals as Record<string, unknown>)[c]));
  return { leaves, totals };
}
