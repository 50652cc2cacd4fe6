// The catalogue side of the API: the spec's resource shapes (reads are permissive: the API may add
// fields, and the spec leaves several shapes open, so unknown fields pass through) and its paging.
import { ApiError, type ApiErrorDetails } from './errors.js';

/** The API answered a later page with items already seen: it ignores offset, or loops. */
export class ApiPaginationError extends ApiError {
  override name = 'ApiPaginationError';
  constructor(d: ApiErrorDetails & { offset: number }) {
    super(`the page at offset ${d.offset} repeats items already listed`, d);
  }
}

/**
 * An entity id as a number: a positive whole number, or a string of digits (APIs that encode
 * numbers as strings send "862599431"); undefined when it cannot be read.
 */
export function entityId(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** One page of a listing, as listPages yields it. */
export interface ListedPage<T> {
  /** The offset the page was asked for. */
  readonly offset: number;
  /** The page's items, minus those already yielded by earlier pages. */
  readonly items: T[];
  /** Items the API returned on this page, repeats included: the next page starts after them. */
  readonly size: number;
  /** True for the listing's last page (short or empty): nothing follows it. */
  readonly last: boolean;
}

/** Where a listing resumes: the next offset, and the ids already listed before it. */
export interface ListingStart {
  readonly offset?: number;
  readonly seen?: Iterable<number>;
}

/**
 * Yields every page of a listing (limit/offset), the last one included even when empty, from
 * `start.offset` (default 0). Items already yielded, or in `start.seen`, are dropped from later
 * pages (the order is not guaranteed, so an insert can shift items across a page boundary); a
 * non-empty page made only of seen items means the API repeats itself: that stops with
 * ApiPaginationError rather than looping forever. Ids are compared as numbers (entityId); an item
 * without a readable id is never taken for a repeat, so it passes through for the caller to judge.
 */
export async function* listPages<T>(
  fetchPage: (page: { limit: number; offset: number }) => Promise<T[]>,
  idOf: (item: T) => unknown,
  pageSize: number,
  where: { method: string; path: string },
  start: ListingStart = {},
): AsyncGenerator<ListedPage<T>> {
  if (!Number.isInteger(pageSize) || pageSize < 1)
    throw new RangeError(`page size must be a positive integer, got ${pageSize}`);
  const seen = new Set<number>(start.seen);
  for (let offset = start.offset ?? 0, pages = 1; ; pages++) {
    const page = await fetchPage({ limit: pageSize, offset });
    const fresh = page.filter((item) => {
      const id = entityId(idOf(item));
      return id === undefined || !seen.has(id);
    });
    if (page.length > 0 && fresh.length === 0) {
      throw new ApiPaginationError({
        status: 200,
        method: where.method,
        path: `${where.path}?limit=${pageSize}&offset=${offset}`,
        attempts: pages,
        offset,
        hint: 'the API seems to ignore offset: try a different page size, and report it',
        retryable: false,
      });
    }
    for (const item of fresh) {
      const id = entityId(idOf(item));
      if (id !== undefined) seen.add(id);
    }
    const last = page.length < pageSize;
    yield { offset, items: fresh, size: page.length, last };
    if (last) return;
    offset += page.length;
  }
}

/**
 * Yields the non-empty pages of a listing until a short or empty page, each without the items
 * earlier pages already showed (see listPages).
 */
export async function* paginate<T>(
  fetchPage: (page: { limit: number; offset: number }) => Promise<T[]>,
  idOf: (item: T) => unknown,
  pageSize: number,
  where: { method: string; path: string },
): AsyncGenerator<T[]> {
  for await (const page of listPages(fetchPage, idOf, pageSize, where))
    if (page.items.length > 0) yield page.items;
}

/** Delivery window: UNIX seconds; start 0 = start immediately, end 0 = no end. */
export interface Delivery {
  start: number;
  end?: number;
}

export interface Pricing {
  model: 'CPM' | 'CPC' | (string & {});
  value: number;
}

export interface Pacing {
  event: 'impressions' | 'clicks' | 'conversions' | (string & {});
  period: 'due_date' | 'day' | (string & {});
  /** The spec writes `spead`; the vendor means `spread`. Both are accepted. */
  speed: 'spread' | 'spead' | 'asap' | (string & {});
  value: number;
}

export type AdFormat = 'display' | 'native' | 'vast' | 'redirect';

/** A campaign as returned by reads. */
export interface Campaign {
  campaign_id: number;
  name?: string;
  ad_format?: AdFormat | (string & {});
  advertiser_id?: number;
  conversion_tracker_id?: number;
  folder_id?: number;
  account_id_created?: number;
  account_id_modified?: number;
  created?: number;
  modified?: number;
  is_active?: boolean;
  is_archived?: boolean;
  notes?: string;
  tier?: number;
  weight?: number;
  zone_ids?: number[];
  creative_ids?: number[];
  delivery?: Delivery;
  event_counts?: Record<string, number>;
  /** An object, or an empty array when unset. */
  pricing?: Pricing | unknown[];
  pacing?: Pacing | unknown[];
  targeting?: unknown;
  creative_optimization?: unknown[];
  metadata?: unknown[];
  watchlist?: unknown[];
  [field: string]: unknown;
}

/** A creative as returned by reads. */
export interface Creative {
  creative_id: number;
  campaign_id?: number;
  name?: string;
  ad_type?: string;
  is_active?: boolean;
  account_id_created?: number;
  account_id_modified?: number;
  created?: number;
  modified?: number;
  weight?: number;
  data?: CreativeData;
  delivery?: Delivery;
  targeting?: unknown;
  event_counts?: unknown;
  metadata?: unknown[];
  thumbnail?: { average_color?: string; filehash?: string };
  [field: string]: unknown;
}

export interface CreativeData {
  filehash?: string;
  width?: number;
  height?: number;
  alt_text?: string;
  target_window?: '_blank' | '_top' | '_self' | '_parent' | (string & {});
  use_iframe?: boolean;
  landing_page?: string;
  ad_verification_code?: string;
  [field: string]: unknown;
}

/** A list page request: limit (API default 100) and offset (items skipped). */
export interface PageRequest {
  limit?: number;
  offset?: number;
}
