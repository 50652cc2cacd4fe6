// Catalogue text as Postgres can hold it. Neither text nor jsonb can store a NUL (jsonb refuses
// `\u0000`: "unsupported Unicode escape sequence"), and an unpaired UTF-16 surrogate has no UTF-8
// form (jsonb refuses its escape; a text parameter silently becomes U+FFFD). An entity's name or
// notes holding one must not fail the whole sync, so such text is stored repaired: NULs removed,
// each unpaired surrogate replaced by U+FFFD, the same in the typed columns and in the jsonb.
// Report rows are refused instead (copy-encode.ts): there a value is a key. Pure.

// In a `u` regex, \p{Cs} matches only unpaired surrogates.
// eslint-disable-next-line no-control-regex -- NUL is exactly what is matched
const UNSTORABLE = /\u0000|\p{Cs}/u;
// eslint-disable-next-line no-control-regex -- NUL is exactly what is matched
const UNSTORABLE_ALL = /\u0000|\p{Cs}/gu;

/** `text` with each NUL removed and each unpaired surrogate replaced by U+FFFD. */
export function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, (c) => (c === '\u0000' ? '' : '\ufffd')) : text;
}

/**
 * `value` (parsed JSON) with every string and object key storable. `repaired(path, original)` is
 * told each string or key that changed, by its path as stored (`name`, `data.landing_page`,
 * `zone_ids[2]`) and its value as sent. Returns `value` itself when nothing changed.
 */
export function storableJson(
  value: unknown,
  repaired: (path: string, original: unknown) => void = () => undefined,
  path = '',
): unknown {
  if (typeof value === 'string') {
    const text = storableText(value);
    if (text !== value) repaired(path, value);
    return text;
  }
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((item, i) => {
      const stored = storableJson(item, repaired, `${path}[${i}]`);
      if (stored !== item) (out ??= [...value])[i] = stored;
    });
    return out ?? value;
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const storedKey = storableText(key);
    const at = path === '' ? storedKey : `${path}.${storedKey}`;
    if (storedKey !== key) {
      repaired(at, key);
      changed = true;
    }
    const stored = storableJson(item, repaired, at);
    if (stored !== item) changed = true;
    // A key that becomes one already there keeps the first value sent: nothing is overwritten.
    // Defined, not assigned: a `__proto__` key from JSON.parse stays a key.
    if (!Object.hasOwn(out, storedKey))
      Object.defineProperty(out, storedKey, {
        value: stored,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return changed ? out : value;
}
