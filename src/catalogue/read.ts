// Reading the catalogue from the API, every page staged; 429s wait out the shared pause, faults back off.
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

export interface SyncRetryPolicy {
  /** Attempts per request, the first included. 12: the `hostile` profile (28% transient) fails 12 in a row
   * with p = 2.3e-7, so a 250-campaign sync exhausts one with p = 6e-5 (then its next try resumes). */
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

type Requester = <T>(call: () => Promise<T>) => Promise<T>;

/** A sync's client options: one attempt per call and 429s thrown (the requester retries), through `gate`. */
export function syncClientOptions(gate: RequestGate): Partial<ApiClientOptions> {
  return { attempts: 1, on429: 'throw', beforeRequest: async () => void (await gate.acquire()) };
}

/** A requester over `gate`: a 429 pauses the gate (for every process) and is sent again without spending an
 * attempt; a transient failure is retried after backoff; anything else throws. */
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

/** Reads every page of campaigns, then their creatives, a few at a time; staged pages not read again. */
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
    // Deleted after the campaign listing: not returned at all, so its creatives are soft-deleted too.
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

/** Maps `items` through `fn`, `limit` at once, in order; none starts after a failure. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`limit must be a whole number >= 1, got ${limit}`);
  const results = new Array<R>(items.length);
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
