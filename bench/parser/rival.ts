// The same typed rows from @streamparser/json, the best maintained streaming JSON parser on npm,
// so the bench can show whether our hand-written scanner (src/flatten/scan.ts) earns its keep.
import { JSONParser } from '@streamparser/json';
import { type Dimension, COUNTERS } from '../../src/platform/config/dimensions.js';
import { childPath, RowBuilder } from '../../src/flatten/rows.js';
import { type ReportRow } from '../../src/flatten/types.js';

/** Bytes fed to the parser per write, as a socket would hand them over. */
const CHUNK = 64 * 1024;

/**
 * Parses a nested GET /reports body (one level of keys per dimension, counters at the leaves) with
 * @streamparser/json and types each leaf through the same RowBuilder our scanner uses: the same
 * rows, the same checks per value, only the JSON reading differs.
 */
export function parseWithStreamparser(body: Buffer, dims: readonly Dimension[]): ReportRow[] {
  const builder = new RowBuilder<undefined>(dims, childPath);
  const dimRaw = dims.map(() => undefined);
  const parser = new JSONParser({ paths: [`$.items${'.*'.repeat(dims.length)}`], keepStack: false });
  parser.onValue = ({ value, stack, key }) => {
    // stack: root, items, then one entry per enclosing dimension level (its key is the parent's key).
    for (let d = 0; d < dims.length - 1; d++) builder.setKey(d, String(stack[d + 2]?.key), undefined);
    builder.setKey(dims.length - 1, String(key), undefined);
    const leaf = value as Record<string, unknown>;
    builder.emit(
      dims.length,
      dimRaw,
      COUNTERS.map((c) => leaf[c]),
      undefined,
      String(key),
    );
  };
  for (let i = 0; i < body.length; i += CHUNK) parser.write(body.subarray(i, i + CHUNK));
  if (!parser.isEnded) parser.end();
  return builder.rows;
}
