// A misspelt variable (ADOPS_SHEMA) is silently ignored: each unread ADOPS_* one is warned of, with a guess.
import { REDIS_HA_VARS } from './connections.js';
import { ENV_SCHEMA } from './env.js';

/** The variables read apart from ENV_SCHEMA: the key, the webhook secret, the accounts file, Redis HA. */
const READ_APART = [
  'ADOPS_API_KEY',
  'ADOPS_API_KEY_FILE',
  'ADOPS_WEBHOOK_SECRET',
  'ADOPS_ACCOUNTS_FILE',
  ...REDIS_HA_VARS,
] as const;

export const KNOWN_VARIABLES: readonly string[] = [...Object.keys(ENV_SCHEMA), ...READ_APART];

/** A line per unread ADOPS_* variable (never its value), with the closest; `alsoKnown`: api_key_env names. */
export function unknownVariableWarnings(
  env: Readonly<Record<string, string | undefined>>,
  alsoKnown: readonly string[] = [],
): string[] {
  const known = new Set([...KNOWN_VARIABLES, ...alsoKnown]);
  return Object.keys(env)
    .filter((name) => name.startsWith('ADOPS_') && !known.has(name))
    .sort()
    .map(
      (name) =>
        `${name} is not a variable adops reads (ignored); did you mean ${closest(name, KNOWN_VARIABLES)}?`,
    );
}

/** The name of `names` fewest edits away from `name` (the first of equals). */
function closest(name: string, names: readonly string[]): string {
  let best = names[0] ?? '';
  let bestDistance = Infinity;
  for (const candidate of names) {
    const d = editDistance(name, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

/** Levenshtein distance: insertions, deletions and substitutions of one character each. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = row;
  }
  return previous[b.length] ?? 0;
}
