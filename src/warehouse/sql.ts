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
