// The doctor's output: a table and the env lines to set, or one JSON object for scripts. Every
// text passes through the key's redaction last, whatever a server echoed into a message.
import Table from 'cli-table3';
import { redactSecrets } from '../log/redact.js';
import type { Observations, Verdict } from './types.js';

/** Width of the detail column: long findings wrap instead of widening the table past a terminal. */
const DETAIL_WIDTH = 66;

/** The table, then `Set these:` with one NAME=value line each, or why a pull cannot work. */
export function renderText(o: Observations, v: Verdict, secrets: readonly string[]): string {
  const table = new Table({
    head: ['check', 'result', 'detail'],
    style: { head: [], border: [] },
    colWidths: [null, null, DETAIL_WIDTH],
    wordWrap: true,
  });
  for (const row of v.rows) table.push([row.check, row.status, row.detail]);
  const lines = [`adops doctor: ${o.baseUrl}`, table.toString(), ''];
  if (v.settings !== undefined) {
    lines.push('Set these:');
    for (const [name, value] of Object.entries(v.settings)) lines.push(`${name}=${value}`);
    lines.push('', 'A pull can work.');
  } else {
    lines.push('A pull cannot work:');
    for (const p of v.problems) lines.push(`- ${p}`);
  }
  return redactSecrets(`${lines.join('\n')}\n`, secrets);
}

/** The verdict as one JSON object: ok, problems, rows, settings (null when a pull cannot work), facts. */
export function renderJson(o: Observations, v: Verdict, secrets: readonly string[]): string {
  const doc = {
    ok: v.ok,
    baseUrl: o.baseUrl,
    problems: v.problems,
    settings: v.settings ?? null,
    rows: v.rows,
    // null rather than a missing key: scripts can tell "not known" from a misspelt field.
    facts: { ...v.facts, gzip: v.facts.gzip ?? null, clockSkewSeconds: v.facts.clockSkewSeconds ?? null },
  };
  return redactSecrets(`${JSON.stringify(doc, null, 2)}\n`, secrets);
}
