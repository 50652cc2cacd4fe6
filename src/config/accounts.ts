// Accounts: one deployment pulls several ad server accounts into one warehouse. An account's name
// is stored in every row it owns (the `account` column) and named in every job id, lock and
// rate-limit key, so it is validated like a report name.
import { ConfigError } from './errors.js';

/** The account of a deployment without ADOPS_ACCOUNTS_FILE, and of rows written before accounts. */
export const DEFAULT_ACCOUNT = 'default';

/** An account's name: like a report's (lower case letter, then up to 40 lower case letters, digits or _). */
export const ACCOUNT_NAME = /^[a-z][a-z0-9_]{0,40}$/;

/** The name if valid; otherwise ConfigError naming `subject` (the flag, or `file: field`). */
export function checkAccountName(name: unknown, subject: string): string {
  if (typeof name !== 'string' || !ACCOUNT_NAME.test(name))
    throw new ConfigError(
      `${subject}: ${JSON.stringify(name) ?? String(name)} is not an account name; expected ${ACCOUNT_NAME.source} ` +
        '(lower case letter, then up to 40 lower case letters, digits or _)',
      subject,
    );
  return name;
}
