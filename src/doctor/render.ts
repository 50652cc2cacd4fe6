// The doctor's output: a table and the settings to set, or one JSON object; every text is redacted last.
import Table from 'cli-table3';
import { redactSecrets } from '../platform/log/redact.js';
import type { Observations } from './types.js';
import type { Settings, Verdict } from './verdict.js';

/** An account of ADOPS_ACCOUNTS_FILE: its settings go in its entry there, not in the variables. */
interface AccountTarget {
  readonly account: string;
  readonly file: string;
}

/** The settings as accounts-file fields (auth, report_params, compression), in the file's order. */
export function accountSettings(s: Settings): Record<string, string> {
  return { auth: s.ADOPS_AUTH, report_params: s.ADOPS_REPORT_PARAMS, compression: s.ADOPS_HTTP_COMPRESSION };
}

/** `Set these:` and NAME=value lines, or an account's fields indented to paste under its `- name:` line. */
function settingLines(settings: Settings, target: AccountTarget | undefined): string[] {
  if (target === undefined)
    return ['Set these:', ...Object.entries(settings).map(([name, value]) => `${name}=${String(value)}`)];
  return [
    `Set these in account ${target.account} of ${target.file}:`,
    ...Object.entries(accountSettings(settings)).map(([field, value]) => `    ${field}: ${value}`),
  ];
}

/** Width of the detail column: long findings wrap instead of widening the table past a terminal. */
const DETAIL_WIDTH = 66;

export function renderText(
  o: Observations,
  v: Verdict,
  secrets: readonly string[],
  target?: AccountTarget,
): string {
  const table = new Table({
    head: ['check', 'result', 'detail'],
    style: { head: [], border: [] },
    colWidths: [null, null, DETAIL_WIDTH],
    wordWrap: true,
  });
  for (const row of v.rows) table.push([row.check, row.status, row.detail]);
  const lines = [`adops doctor: ${o.baseUrl}`, table.toString(), ''];
  if (v.settings !== undefined) {
    lines.push(...settingLines(v.settings, target), '', 'A pull can work.');
  } else {
    lines.push('A pull cannot work:');
    for (const p of v.problems) lines.push(`- ${p}`);
  }
  return redactSecrets(`${lines.join('\n')}\n`, secrets);
}

export function renderJson(
  o: Observations,
  v: Verdict,
  secrets: readonly string[],
  target?: AccountTarget,
): string {
  const doc = {
    ok: v.ok,
    ...(target === undefined ? {} : { account: target.account }),
    baseUrl: o.baseUrl,
    problems: v.problems,
    settings: v.settings ?? null,
    ...(target === undefined
      ? {}
      : { accountSettings: v.settings === undefined ? null : accountSettings(v.settings) }),
    rows: v.rows,
    // null rather than a missing key: scripts can tell "not known" from a misspelt field.
    facts: { ...v.facts, gzip: v.facts.gzip ?? null, clockSkewSeconds: v.facts.clockSkewSeconds ?? null },
  };
  return redactSecrets(`${JSON.stringify(doc, null, 2)}\n`, secrets);
}
