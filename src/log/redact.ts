/** What replaces a secret wherever it would appear. */
export const REDACTED = '[REDACTED]';

/**
 * Replaces every occurrence of each secret in `text` (also URL-encoded and JSON-escaped forms) with
 * [REDACTED]. Secrets shorter than 4 characters are ignored: replacing them would mangle text.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 4) continue;
    for (const form of secretForms(secret)) {
      if (out.includes(form)) out = out.split(form).join(REDACTED);
    }
  }
  return out;
}

function secretForms(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]);
  return [...forms];
}
