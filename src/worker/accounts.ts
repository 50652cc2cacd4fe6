// Each account's own API client and request limiter in a worker process: the one place that turns
// config.accounts into what the pull and sync workers use. The default account of a single-account
// deployment keeps the runtime's limiter (its Redis key is the one of releases before accounts).
import { createRequestLimiter, limiterKey, type RequestLimiter } from '../api/shared-limit.js';
import { DEFAULT_ACCOUNT, type Account } from '../config/accounts.js';
import { accountConfig, secretsOf } from '../config/env.js';
import { createAccountGuard, type AccountGuard } from './account-guard.js';
import { createWorkerApi, type FetcherFor, type ReportFetcher } from './pull.js';
import type { WorkerObserver } from './pull-worker.js';
import type { PullAccount } from './pull-worker.js';
import type { WorkerRuntime } from './runtime.js';

export interface WorkerAccounts {
  readonly fetcherFor: FetcherFor;
  readonly accounts: ReadonlyMap<string, PullAccount>;
  /** Holds an account's pulls while it is paused, down or busy (only with more than one account). */
  readonly guard: AccountGuard;
  close(): Promise<void>;
}

/** The request limiter of `account`: the runtime's for the default account, else its own key and rate. */
function limiterOf(rt: WorkerRuntime, account: Account, guard: AccountGuard): RequestLimiter {
  if (account.name === DEFAULT_ACCOUNT && account.rateLimitPerSecond === rt.config.queue.rateLimitPerSecond)
    return rt.limiter;
  return createRequestLimiter(
    rt.redis,
    limiterKey(rt.config.queue.prefix, account.name),
    account.rateLimitPerSecond,
    {
      onError: (error) =>
        rt.logger.warn(
          { err: error, account: account.name },
          'shared rate limit unavailable; request sent anyway',
        ),
      subscribe: true,
      // A 429 met by any process holds this account's pulls here too, outside the worker's slots.
      onPause: (ms) => guard.paused(account.name, ms),
      maxPauseMs: rt.config.http.retryAfterCapMs,
      stop: rt.shutdown.signal,
    },
  );
}

/** Opens an API client and a limiter per configured account. */
export function openWorkerAccounts(
  rt: WorkerRuntime,
  observer: WorkerObserver,
  concurrency: number,
): WorkerAccounts {
  const guard = createAccountGuard(rt.config.accounts.length, concurrency);
  const fetchers = new Map<string, ReportFetcher>();
  const accounts = new Map<string, PullAccount>();
  const limiters: RequestLimiter[] = [];
  for (const account of rt.config.accounts) {
    const limiter = limiterOf(rt, account, guard);
    if (limiter !== rt.limiter) limiters.push(limiter);
    const api = createWorkerApi(
      accountConfig(rt.config, account),
      rt.logger.child({ account: account.name }),
      {
        beforeRequest: async () => void (await limiter.acquire()),
        onAttempt: observer.attempt,
        // Usage headers saying the budget is spent: this account waits for its window, before any 429.
        onExhausted: (ms) => {
          guard.paused(account.name, ms);
          void limiter.pause(ms);
        },
      },
      // Every secret of the worker is redacted from the bodies it stores, not only this account's key.
      secretsOf(rt.config),
    );
    fetchers.set(account.name, api.fetcher);
    accounts.set(account.name, { limiter, reports: account.reports });
  }
  return {
    fetcherFor: (name) => fetchers.get(name),
    accounts,
    guard,
    close: async () => {
      for (const f of fetchers.values()) await f.close?.();
      for (const l of limiters) await l.close();
    },
  };
}
