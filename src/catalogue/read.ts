// Reading the catalogue from the API, every page staged: each request waits out 429s through the
// shared pause and retries transient faults with backoff.
import type { ApiClientOptions } from '../api/client.js';
import type { Config } from '../platform/config/env.js';
import { realSleep } from '../api/http.js';
import { backoffDelay, classifyFailure } from '../platform/retry/classify.js';
import type { RequestGate } from '../limits/limiter.js';
import { ApiError } from '../api/errors.js';
import { entityId, listPages } from '../api/pages.js';
import type { Logger } from '../platform/log/logger.js';
import type { RawCatalogue } from './rows.js';
import { isObject } from './fields.js';
import { CAMPAIGN_LISTING } from './runs.js';
import type { Checkpoint } from './checkpoint.js';

/** How hard a sync's request tries. */
export interface SyncRetryPolicy {
  /** Attempts per request against transient faults, the first included. 12: the `hostile` profile (28%
   * transient failures) fails 12 in a row with p = 2.3e-7, so a 250-campaign sync exhausts one with p =
   * 6e-5 (then its next try resumes); all 12 back off 152 s at most. */
  readonly attempts: number;
  /** 429s one request waits out before the sync gives up and goes back to the queue. */
  readonly rateLimitWaits: number;
  /** Base and cap of the backoff between attempts (the one backoff, backoffDelay in src/platform/retry/classify.ts). */
  readonly baseMs: number;
  readonly maxMs: number;
}

export const SYNC_RETRY: SyncRetryPolicy = { attempts: 12, rateLimitWaits: 30, baseMs: 250, maxMs: 30_000 };

/** The policy as configured: ADOPS_SYNC_ATTEMPTS and the backoff cap ADOPS_HTTP_MAX_BACKOFF_MS. */
export function syncRetryFromConfig(config: Pick<Config, 'queue' | 'http'>): Partial<SyncRetryPolicy> {
  return { attempts: config.queue.syncAttempts, maxMs: config.http.maxBackoffMs };
}

/** Counters of one sync's requests, for progress and the closing log line. */
export type RequestCounts = { requests: number; retries: number; rateLimited: number };

/** Sends one request of the sync, retried as the policy allows. */
type Requester = <T>(call: () => Promise<T>) => Promise<T>;

/** A sync's client options: one attempt per call and 429s thrown (the requester retries), through `gate`. */
export function syncClientOptions(gate: RequestGate): Partial<ApiClientOptions> {
  return { attempts: 1, on429: 'throw', beforeRequest: async () => void (await gate.acquire()) };
}

/** A requester over `gate`: a 429 pauses the gate (for every process sharing it) and is sent again without
 * spending an attempt; a transient failure is retried after backoff; anything else throws. */
export function createRequester(
  gate: RequestGate,
  policy: SyncRetryPolicy,
  counts: RequestCounts,
  options: { random?: () => number; sleep?: (ms: number) => Promise<void> } = {},
): Requester {
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? ((ms: number) => realSleep(ms));
  return async <T>(call: () => Promise<T>): Promise<T> => {
    let failures = 0;
    let waits = 0;
    for (;;) {
      counts.requests++;
      try {
        return await call();
      } catch (error) {
        const failure = classifyFailure(error);
        if (failure.kind === 'rate-limited' && waits < policy.rateLimitWaits) {
          waits++;
          counts.rateLimited++;
          await gate.pause(failure.retryAfterMs);
          continue;
        }
        if (failure.kind !== 'transient') throw error;
        failures++;
        if (failures >= policy.attempts) throw error;
        counts.retries++;
        await sleep(backoffDelay(failures, policy, random));
      }
    }
  };
}

/** A list page request. */
export type Page = { readonly limit: number; readonly offset: number };

/** The part of the API client a sync uses: one list page per call. */
export interface CatalogueApi {
  listCampaigns(page: Page): Promise<readonly unknown[]>;
  listCreatives(campaignId: number, page: Page): Promise<readonly unknown[]>;
}

/** A read; `onListed` is told when the campaigns are listed and as each one's creatives are. */
interface ReadOptions {
  readonly api: CatalogueApi;
  readonly request: Requester;
  readonly checkpoint: Checkpoint;
  readonly campaignConcurrency: number;
  readonly pageSize: number;
  readonly logger: Logger;
  readonly onListed: (done: number, total: number) => void;
}

/** Field of an item that holds its id, by listing. */
const idOf = (field: string) => (item: unknown) => (isObject(item) ? item[field] : undefined);
const campaignId = (item: unknown) => entityId(idOf('campaign_id')(item));

/** Reads every page of campaigns, then each campaign's creatives, a few campaigns at a time; staged
 * pages are not read again, and every page read is staged, also when the read fails. */
export async function readCatalogue(o: ReadOptions): Promise<RawCatalogue> {
  let read: RawCatalogue;
  try {
    read = await readAll(o);
  } catch (error) {
    // What was read is staged for the next try; the read's own error is the one worth seeing.
    await o.checkpoint.flush().catch(() => undefined);
    throw error;
  }
  await o.checkpoint.flush();
  return read;
}

/** Both listings, campaigns first; see readCatalogue. */
async function readAll(o: ReadOptions): Promise<RawCatalogue> {
  const campaigns = await readListing(o, CAMPAIGN_LISTING, (p) => o.api.listCampaigns(p), 'campaign_id');
  if (campaigns === 'gone') throw new Error('the campaign listing cannot be gone');
  const ids = [...new Set(campaigns.map(campaignId).filter((id) => id !== undefined))];
  o.logger.debug({ campaigns: ids.length }, 'campaigns listed');
  let done = ids.filter((id) => o.checkpoint.listing(id).last).length;
  o.onListed(done, ids.length);

  const gone = new Set<number>();
  const listings = await mapLimit(ids, o.campaignConcurrency, async (id): Promise<[number, unknown[]]> => {
    const staged = o.checkpoint.listing(id).last;
    const creatives = await readListing(o, id, (p) => o.api.listCreatives(id, p), 'creative_id');
    if (!staged) o.onListed(++done, ids.length);
    if (creatives !== 'gone') return [id, creatives];
    // The campaign was deleted after the campaign listing: treat it as not returned at all,
    // so it and its creatives are soft-deleted rather than stored with no creatives.
    gone.add(id);
    o.logger.info({ campaignId: id }, 'campaign disappeared during the sync; treating it as deleted');
    return [id, []];
  });
  return {
    campaigns: campaigns.filter((c) => !gone.has(campaignId(c) ?? -1)),
    creativesByCampaign: new Map(listings.filter(([id]) => !gone.has(id))),
  };
}

/** Every item of one listing: staged pages first, then the rest from the API, each page staged. */
async function readListing(
  o: ReadOptions,
  listing: number,
  fetchPage: (p: Page) => Promise<readonly unknown[]>,
  idField: string,
): Promise<unknown[] | 'gone'> {
  const state = o.checkpoint.listing(listing);
  if (state.gone) return 'gone';
  const items = [...state.items];
  if (state.last) return items;
  const seen = items.map((item) => entityId(idOf(idField)(item))).filter((id) => id !== undefined);
  const path = listing === CAMPAIGN_LISTING ? '/campaigns' : `/campaigns/${listing}/creatives`;
  try {
    const pages = listPages(
      (p) => o.request(async () => [...(await fetchPage(p))]),
      idOf(idField),
      o.pageSize,
      { method: 'GET', path },
      { offset: state.next, seen },
    );
    for await (const page of pages) {
      items.push(...page.items);
      await o.checkpoint.add({ listing, ...page, gone: false });
    }
  } catch (error) {
    if (listing === CAMPAIGN_LISTING || !(error instanceof ApiError) || error.status !== 404) throw error;
    await o.checkpoint.add({ listing, offset: -1, items: [], size: 0, last: true, gone: true });
    return 'gone';
  }
  return items;
}

/** Maps `items` through `fn`, at most `limit` at once, in order; after a failure none starts, and it
 * rejects once those in flight settle, so no request outlives its sync. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`limit must be a whole number >= 1, got ${limit}`);
  const results = new Array<R>(items.length);
  // One iterator shared by the lanes: each takes the next item.
  const next = items.entries();
  let failure: { error: unknown } | undefined;
  const lane = async (): Promise<void> => {
    for (let it = next.next(); failure === undefined && it.done !== true; it = next.next()) {
      const [index, item] = it.value;
      try {
        results[index] = await fn(item, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure !== undefined) throw failure.error;
  return results;
}
