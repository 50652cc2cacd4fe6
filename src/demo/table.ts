import Table from 'cli-table3';

/** A result as a boxed terminal table; numbers right-aligned. */
export function renderTable(columns: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const numeric = columns.map(
    (_, i) => rows.length > 0 && rows.every((r) => /^-?\d+(\.\d+)?$/.test(r[i] ?? '')),
  );
  const table = new Table({
    head: [...columns],
    style: { head: [], border: [] },
    // No rule between body rows: results read as a compact grid.
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    colAligns: numeric.map((n) => (n ? 'right' : 'left')),
  });
  for (const row of rows) table.push([...row]);
  return table.toString();
}
