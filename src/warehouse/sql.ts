import { createHash } from 'node:crypto';
import { escapeIdentifier } from 'pg';
import { REPORT_NAME } from '../config/jobs.js';

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** A quoted identifier from a name already validated against a strict pattern; throws otherwise. */
export function ident(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`refusing unsafe SQL identifier ${JSON.stringify(name)}`);
  return escapeIdentifier(name);
}

/** `"schema"."table"`, both validated. */
export function qualified(schema: string, table: string): string {
  return `${ident(schema)}.${ident(table)}`;
}

/** Table name of a report definition: report_<name>. */
export function reportTable(reportName: string): string {
  if (!REPORT_NAME.test(reportName))
    throw new Error(`refusing unsafe report name ${JSON.stringify(reportName)}`);
  return `report_${reportName}`;
}

/** A query as pg takes it, with the name that makes it a prepared statement. */
export interface NamedQuery {
  readonly name: string;
  readonly text: string;
  readonly values: unknown[];
}

const statementNames = new Map<string, string>();

/**
 * A statement as a named prepared statement, so Postgres parses and plans it once per connection
 * instead of on every run. The name is a digest of the text: one name never stands for two texts.
 */
export function named(text: string, values: unknown[]): NamedQuery;
export function named(query: { text: string; values: unknown[] }): NamedQuery;
export function named(
  query: string | { text: string; values: unknown[] },
  values: unknown[] = [],
): NamedQuery {
  const q = typeof query === 'string' ? { text: query, values } : query;
  let name = statementNames.get(q.text);
  if (name === undefined) {
    name = `adops_${createHash('sha1').update(q.text).digest('hex').slice(0, 24)}`;
    // Texts are per schema and report: a handful. The cap only guards against a caller's mistake.
    if (statementNames.size < 10_000) statementNames.set(q.text, name);
  }
  return { name, text: q.text, values: q.values };
}
