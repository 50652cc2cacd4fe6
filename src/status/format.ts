// Text for people and files: CSV and JSON rows, counter and reconciliation lines, and safe escaping.
import { type Dimension, COUNTERS } from '../platform/config/dimensions.js';
import type { Reconciliation } from '../flatten/rows.js';
import type { Counters, ReportRow, Totals } from '../flatten/types.js';

const CHUNK_ROWS = 2000; // Rows per output chunk: few writes, bounded memory.

/** One CSV field, quoted when it holds a comma, quote, CR or LF, or edge spaces (RFC 4180). */
export function csvField(value: string): string {
  let quote = value.length > 0 && (value.charCodeAt(0) === 32 || value.charCodeAt(value.length - 1) === 32);
  for (let i = 0; !quote && i < value.length; i++) {
    const c = value.charCodeAt(i);
    quote = c === 44 || c === 34 || c === 10 || c === 13;
  }
  return quote ? `"${value.replaceAll('"', '""')}"` : value;
}

/** First characters a spreadsheet reads as a formula (OWASP's CSV injection list). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** A CSV cell a spreadsheet will not run as a formula: a quote in front of = + - @, tab or CR (OWASP). */
export function formulaSafe(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

// C0 and C1 controls (newline and tab: a cell is one line), DEL, and the bidi and line-separator marks.
// eslint-disable-next-line no-control-regex -- control characters are exactly what is matched
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `value` safe to print on a terminal: control characters become visible escapes (`\n`, `\x1b`). */
export function terminalSafe(value: string): string {
  return value.replace(UNPRINTABLE, (c) => {
    const code = c.charCodeAt(0);
    return (
      NAMED[c] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`)
    );
  });
}

export function columns(dimensions: readonly Dimension[]): string[] {
  return [...dimensions, ...COUNTERS];
}

/** CSV text of the rows, header first, in chunks of whole lines; formulaSafe and terminalSafe if asked. */
export function* csvChunks(
  dimensions: readonly Dimension[],
  rows: readonly ReportRow[],
  options: { readonly formulas?: 'safe' | 'as-sent'; readonly terminal?: boolean } = {},
): Generator<string> {
  // The formula check sees the value as sent (a leading tab or CR), before its escapes.
  const formula = options.formulas === 'safe' ? formulaSafe : (v: string) => v;
  const shown = options.terminal === true ? (v: string) => terminalSafe(formula(v)) : formula;
  const cell = (v: string) => csvField(shown(v));
  let out = `${columns(dimensions).map(csvField).join(',')}\n`;
  let r = 0;
  for (const row of rows) {
    for (const dim of row.dims) out += `${cell(dim)},`;
    out += `${row.counters.join(',')}\n`;
    if (++r % CHUNK_ROWS === 0) {
      yield out;
      out = '';
    }
  }
  if (out !== '') yield out;
}

/** JSON text: one array, one object per line; dimension values stay strings (ids can pass 2^53). */
export function* jsonChunks(dimensions: readonly Dimension[], rows: readonly ReportRow[]): Generator<string> {
  const keys = columns(dimensions).map((c) => `${JSON.stringify(c)}:`);
  const n = dimensions.length;
  let out = '[';
  let r = 0;
  for (const row of rows) {
    out += r === 0 ? '\n{' : ',\n{';
    for (let d = 0; d < n; d++) out += `${keys[d]}${JSON.stringify(row.dims[d])},`;
    for (let c = 0; c < COUNTERS.length; c++)
      out += `${keys[n + c]}${row.counters[c]}${c < COUNTERS.length - 1 ? ',' : '}'}`;
    if (++r % CHUNK_ROWS === 0) {
      yield out;
      out = '';
    }
  }
  yield `${out}${rows.length === 0 ? ']' : '\n]'}\n`;
}

/** `ad_requests=1 filled_impressions=2 ...` for a summary line; `none` for totals not given. */
export function countersText(c: Counters | Totals): string {
  if (COUNTERS.every((name) => c[name] === null)) return 'none (the body has no totals)';
  return COUNTERS.map((name) => `${name}=${c[name] ?? 'missing'}`).join(' ');
}

export function reconciliationText(r: Reconciliation): string {
  if (r.ok) return 'reconciliation: ok (the rows sum to the totals)';
  const parts = r.differences.map((d) => `${d.counter} rows=${d.items} totals=${d.totals}`);
  if (r.reason === 'no totals') return 'reconciliation: NOT CHECKED, no totals (the rows are unchecked)';
  if (r.reason === 'partial totals')
    return `reconciliation: PARTIAL, some totals missing${parts.length === 0 ? ' (the given ones match)' : `; MISMATCH ${parts.join(', ')}`}`;
  return `reconciliation: MISMATCH ${parts.join(', ')}`;
}
