// Keeps one account's trouble from slowing the others' pulls in a worker process. A pull of an
// account that is paused (its 429), down (no answer, 5xx, 401/403) or already holding its share of
// the worker's concurrency does not start: the processor puts it back as delayed, freeing the slot
// at once, instead of sleeping in the slot until the account recovers. Local to the process: each
// worker learns an account's state from its own pulls; the 429 pause is shared through the
// account's request limiter (src/api/shared-limit.ts) as well.

/** Longest an account is held as down after repeated failures. */
const MAX_DOWN_MS = 60_000;
/** First hold after a failure: doubles with each failure in a row. */
const FIRST_DOWN_MS = 1_000;
/** Delay of a pull whose account already holds its share of the slots. */
const BUSY_DELAY_MS = 250;

export interface AccountGuard {
  /** Milliseconds a pull of `account` should wait before it starts; 0: start now (and count it). */
  enter(account: string): number;
  /** The pull of `account` that entered has ended; `ok` false when the account failed it (see failed). */
  leave(account: string): void;
  /** The account answered: its failure streak ends. */
  succeeded(account: string): void;
  /** The account failed a pull in a way its other pulls would too (no answer, 5xx, 401/403). */
  failed(account: string): void;
  /** The account answered 429: hold its pulls for `ms`. */
  paused(account: string, ms: number): void;
}

interface State {
  running: number;
  heldUntil: number;
  failures: number;
}

/**
 * A guard for `accounts` accounts sharing `concurrency` slots. With one account nothing is ever
 * held (its pulls behave as before accounts); with more, an account takes at most
 * concurrency - 1 slots at once, so another account always has a slot.
 */
export function createAccountGuard(
  accounts: number,
  concurrency: number,
  now: () => number = Date.now,
): AccountGuard {
  const states = new Map<string, State>();
  const state = (a: string): State => {
    let s = states.get(a);
    if (s === undefined) states.set(a, (s = { running: 0, heldUntil: 0, failures: 0 }));
    return s;
  };
  const share = Math.max(1, concurrency - 1);
  const guarded = accounts > 1;
  return {
    enter(account) {
      const s = state(account);
      if (guarded) {
        const held = s.heldUntil - now();
        if (held > 0) return held;
        if (s.running >= share) return BUSY_DELAY_MS + Math.floor(Math.random() * BUSY_DELAY_MS);
      }
      s.running++;
      return 0;
    },
    leave(account) {
      const s = state(account);
      s.running = Math.max(0, s.running - 1);
    },
    succeeded(account) {
      state(account).failures = 0;
    },
    failed(account) {
      const s = state(account);
      s.failures++;
      const ms = Math.min(MAX_DOWN_MS, FIRST_DOWN_MS * 2 ** (s.failures - 1));
      s.heldUntil = Math.max(s.heldUntil, now() + ms);
    },
    paused(account, ms) {
      const s = state(account);
      s.heldUntil = Math.max(s.heldUntil, now() + ms);
    },
  };
}

/**
 * True for a failure that says the account itself is in trouble, so its other pulls would fail
 * the same way now: no answer at all, a 5xx, or a refused key (401/403).
 */
export function isAccountTrouble(error: unknown): boolean {
  const e = error as { status?: unknown; code?: unknown; name?: unknown } | null;
  if (e === null || typeof e !== 'object') return false;
  if (typeof e.status === 'number') return e.status >= 500 || e.status === 401 || e.status === 403;
  return e.name === 'ApiTransportError';
}
