// The row value checks every way into a report table shares, and the COPY text format (not CSV): tab between
// columns, newline after rows; only backslash, tab, newline, CR need escaping. NUL cannot be stored in text.
import { TerminalError } from '../platform/retry/errors.js';
import { ACCOUNT_NAME } from '../platform/config/accounts.js';
import {
  dimensionType,
  type Dimension,
  type DimensionType,
  COUNTERS,
} from '../platform/config/dimensions.js';
import { isIsoDate } from '../platform/dates/calendar.js';
import type { Period, ReportRow } from '../flatten/types.js';

const SPECIAL = /[\\\t\n\r]/;
const SPECIAL_ALL = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const INTEGER = /^-?\d{1,20}$/;
// In a `u` regex, \p{Cs} matches only unpaired surrogates: no UTF-8 form, they would silently become U+FFFD.
const LONE_SURROGATE = /\p{Cs}/u;
const INT_RANGE: Record<'bigint' | 'smallint', readonly [bigint, bigint]> = {
  bigint: [-(2n ** 63n), 2n ** 63n - 1n],
  smallint: [-32768n, 32767n],
};

/** Escapes one text value for COPY text format; throws RowValueError on NUL or an unpaired surrogate. */
export function escapeCopyText(value: string, dimension = 'value'): string {
  checkText(value, dimension);
  return escapeSpecials(value);
}

/** The COPY escapes of a value already checked by checkText. */
function escapeSpecials(value: string): string {
  return SPECIAL.test(value) ? value.replace(SPECIAL_ALL, (c) => ESCAPES[c] ?? c) : value;
}

/** Throws RowValueError for text Postgres cannot store as given: a NUL or an unpaired surrogate. */
function checkText(value: string, dimension = 'value'): void {
  const why = value.includes('\u0000')
    ? 'holds a NUL character, which Postgres text cannot store; fix the parser or the source data'
    : LONE_SURROGATE.test(value)
      ? 'holds an unpaired UTF-16 surrogate, which has no UTF-8 form'
      : undefined;
  if (why !== undefined)
    throw new RowValueError(`${dimension} value ${preview(value)} ${why}`, dimension, value);
}

/** Checks a dimension value against its column type and returns its COPY text; throws RowValueError. */
export function encodeDimension(value: string, dimension: string, type: DimensionType): string {
  if (typeof value !== 'string')
    throw new RowValueError(`${dimension} value ${String(value)} is not a string`, dimension, String(value));
  if (type === 'text') return escapeCopyText(value, dimension);
  const bad = (why: string) =>
    new RowValueError(`${dimension} value ${preview(value)} ${why}`, dimension, value);
  if (type === 'date') {
    if (!isIsoDate(value)) throw bad('is not a YYYY-MM-DD date');
    return value;
  }
  if (!INTEGER.test(value)) throw bad('is not a whole number');
  // Up to 18 digits always fits a bigint: skip the BigInt allocation on the hot path of ids.
  if (type === 'bigint' && value.length <= (value.startsWith('-') ? 19 : 18)) return value;
  const n = BigInt(value);
  const [min, max] = INT_RANGE[type];
  if (n < min || n > max)
    throw new RowValueError(`${dimension} value ${value} does not fit a ${type}`, dimension, value);
  return value;
}

/** What every row of one load shares. */
export interface CopyLayout {
  readonly periodStart: string;
  readonly periodEnd: string;
  readonly dimensions: readonly Dimension[];
  readonly loadId: number;
  readonly account: string; // a validated name (ACCOUNT_NAME): it needs no escaping
  /** A request of several periods: each row's own period and load, by its day (the period above is the
   * request's range). */
  readonly periodOf?: ((day: string) => (Period & { loadId: number }) | undefined) | undefined;
}

/** Per row, its period's and load's encoding (`head` of them), made once per day met; the layout's for all
 * rows of a load of one period. */
export function periodHeads<H>(
  layout: CopyLayout,
  head: (p: Period & { loadId: number }) => H,
): (row: ReportRow) => H {
  const whole = head({ start: layout.periodStart, end: layout.periodEnd, loadId: layout.loadId });
  const { periodOf } = layout;
  if (periodOf === undefined) return () => whole;
  const dayAt = layout.dimensions.indexOf('day');
  const heads = new Map<string, H>();
  return (row) => {
    const day = row.dims[dayAt] ?? '';
    let h = heads.get(day);
    if (h === undefined) {
      const p = periodOf(day);
      heads.set(day, (h = p === undefined ? whole : head(p)));
    }
    return h;
  };
}

/**
 * Per row: checks it (values valid for their type, see encodeDimension; the day inside the period; counters
 * non-negative safe integers; else RowValueError) and returns its fields, made by `field`. Rows repeat outer
 * values (day, campaign): one met last row is neither checked nor encoded again. The array is reused.
 */
export function rowFields<F>(
  layout: Pick<CopyLayout, 'periodStart' | 'periodEnd' | 'dimensions'>,
  field: (value: string, type: DimensionType) => F,
): (row: ReportRow) => readonly F[] {
  for (const [name, value] of [
    ['period_start', layout.periodStart],
    ['period_end', layout.periodEnd],
  ] as const) {
    if (!isIsoDate(value))
      throw new RowValueError(`${name} ${preview(value)} is not a YYYY-MM-DD date`, name, value);
  }
  const { dimensions, periodStart, periodEnd } = layout;
  const columns = dimensions.map((name) => ({ name, type: dimensionType(name), day: name === 'day' }));
  const lastValue: Array<string | undefined> = columns.map(() => undefined);
  const fields: F[] = [];
  return (row) => {
    if (row.dims.length !== columns.length)
      throw new RowValueError(
        `row has ${row.dims.length} dimension values, expected ${columns.length} (${dimensions.join(', ')})`,
        'dims',
        row.dims.join(','),
      );
    if (row.counters.length !== COUNTERS.length)
      throw new RowValueError(
        `row has ${row.counters.length} counters, expected ${COUNTERS.length} (${COUNTERS.join(', ')})`,
        'counters',
        row.counters.join(','),
      );
    for (let i = 0; i < columns.length; i++) {
      const value = row.dims[i] ?? '';
      const column = columns[i];
      if (value === lastValue[i] || column === undefined) continue;
      const { name, type } = column;
      if (type === 'text') checkText(value, name);
      else encodeDimension(value, name, type);
      // A row of another day would be stored under this period and double-count in BI.
      if (column.day && (value < periodStart || value > periodEnd))
        throw new RowValueError(
          `day value ${preview(value)} is outside the period ${periodStart}..${periodEnd} that was requested`,
          'day',
          value,
        );
      fields[i] = field(value, type);
      lastValue[i] = value;
    }
    for (let i = 0; i < COUNTERS.length; i++) {
      const n = row.counters[i];
      if (n === undefined || !Number.isSafeInteger(n) || n < 0) {
        const counter = COUNTERS[i] ?? 'counter';
        throw new RowValueError(
          `${counter} ${String(n)} is not a non-negative safe integer`,
          counter,
          String(n),
        );
      }
    }
    return fields;
  };
}

/** A row as one COPY text line in copyColumns()' order, checked by rowFields. */
export function createRowEncoder(layout: CopyLayout): (row: ReportRow) => string {
  const fields = rowFields(layout, (value, type) => (type === 'text' ? escapeSpecials(value) : value));
  const account = checkedAccount(layout.account);
  const ends = periodHeads(layout, (p) => [`${p.start}\t${p.end}\t`, `\t${p.loadId}\t${account}\n`] as const);
  return (row) => {
    const [prefix, suffix] = ends(row);
    return `${prefix}${fields(row).join('\t')}\t${row.counters.join('\t')}${suffix}`;
  };
}

/** Streams rows as COPY text in chunks of about `chunkBytes` (few large writes, never the whole period). */
export async function* copyChunks(
  rows: Iterable<ReportRow> | AsyncIterable<ReportRow>,
  encode: (row: ReportRow) => string,
  counter: { rows: number },
  chunkBytes = 256 * 1024,
): AsyncGenerator<Buffer> {
  let pending = '';
  const add = (row: ReportRow): Buffer | undefined => {
    pending += encode(row);
    counter.rows++;
    // String length undercounts UTF-8 bytes; it only sizes chunks, so that is fine.
    if (pending.length < chunkBytes) return undefined;
    const chunk = Buffer.from(pending, 'utf8');
    pending = '';
    return chunk;
  };
  yield* fullChunks(rows, add);
  if (pending.length > 0) yield Buffer.from(pending, 'utf8');
}

/** The chunks `add` returns for each row (undefined while a chunk fills). Rows at hand are walked with a
 * plain loop: `for await` would cost a microtask per row. */
export async function* fullChunks(
  rows: Iterable<ReportRow> | AsyncIterable<ReportRow>,
  add: (row: ReportRow) => Buffer | undefined,
): AsyncGenerator<Buffer> {
  const batches = isBatched(rows) ? rows.batches() : Symbol.iterator in rows ? [rows] : undefined;
  if (batches === undefined) {
    for await (const row of rows) {
      const chunk = add(row);
      if (chunk !== undefined) yield chunk;
    }
  } else {
    for await (const batch of batches)
      for (const row of batch) {
        const chunk = add(row);
        if (chunk !== undefined) yield chunk;
      }
  }
}

/** Rows a streamed report gives a batch at a time too (streamReport's BatchedRows). */
export function isBatched(
  rows: Iterable<ReportRow> | AsyncIterable<ReportRow>,
): rows is AsyncIterable<ReportRow> & { batches(): AsyncIterable<readonly ReportRow[]> } {
  return 'batches' in rows && typeof rows.batches === 'function';
}

/** The account of a layout, refused unless it is a valid name (it goes into COPY unescaped). */
export function checkedAccount(account: string): string {
  if (!ACCOUNT_NAME.test(account))
    throw new RowValueError(`account ${preview(account)} is not an account name`, 'account', account);
  return account;
}

function preview(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
}

/** A row value that cannot be written to its column; the pull fails, its raw body is kept. */
export class RowValueError extends TerminalError {
  override readonly name = 'RowValueError';
  constructor(
    message: string,
    readonly dimension: string,
    readonly value: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
