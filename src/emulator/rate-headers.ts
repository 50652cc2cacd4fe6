/** The request budget the rateLimitHeaders quirk advertises: this many requests per window. */
export const ADVERTISED_LIMIT = 600;
const WINDOW_SECONDS = 60;

/**
 * Counts /v2 requests in fixed one-minute windows (real time) for the X-RateLimit-* headers. The
 * emulator only advertises the budget: it never refuses a request for it (injected 429s are faults).
 */
export class RateWindow {
  private windowStart = 0;
  private used = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts one request and returns its headers; `refused` (an injected 429) shows none remaining. */
  take(refused: boolean): Record<string, string> {
    const seconds = Math.floor(this.now() / 1000);
    const start = seconds - (seconds % WINDOW_SECONDS);
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.used = 0;
    }
    this.used += 1;
    return {
      'x-ratelimit-limit': String(ADVERTISED_LIMIT),
      'x-ratelimit-remaining': String(refused ? 0 : Math.max(0, ADVERTISED_LIMIT - this.used)),
      // Seconds until the window resets (the IETF RateLimit draft's form, not an epoch time).
      'x-ratelimit-reset': String(start + WINDOW_SECONDS - seconds),
    };
  }
}
