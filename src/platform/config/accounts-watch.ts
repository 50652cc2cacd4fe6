// A worker keeps the accounts it started with (clients, limiters, keys built once); an edited accounts file
// is noticed and the restart it takes is logged, so a new or renamed account is not silently left unpulled.
import { createHash } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { errnoCode } from './files.js';

/** What the file holds now: a hash of its bytes, or why it cannot be read. */
function signature(path: string): string {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch (error) {
    return `unreadable:${errnoCode(error) ?? 'error'}`;
  }
}

/** Calls `onChange` when `path`'s bytes change (polled, unref'd); returns the function that stops it. */
export function watchAccountsFile(path: string, onChange: () => void, intervalMs = 2_000): () => void {
  let seen = signature(path);
  const listener = () => {
    const now = signature(path);
    if (now === seen) return;
    seen = now;
    onChange();
  };
  watchFile(path, { interval: intervalMs, persistent: false }, listener);
  return () => unwatchFile(path, listener);
}
