// The catalogue side of the API: resource shapes (permissive: unknown fields pass through) and paging.
import { ApiError } from './errors.js';

/** Items one listing may hold: the API gives no count, so endless pages would be read for ever. */
export const MAX_LISTING_ITEMS = 200_000;

/** An entity id as a number (some APIs send "862599431"); undefined when it cannot be read. */
export function entityId(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

export interface ListedPage<T> {
  readonly offset: number;
  readonly items: T[]; // The page's items, minus those already yielded by earlier pages.
  /** Items the API returned on this page, repeats included: the next page starts after them. */
  readonly size: number;
  readonly last: boolean; // True for the listing's last page (short or empty): nothing follows it.
}

/** Where a listing resumes: the next offset, and the ids already listed before it. */
export interface ListingStart {
  readonly offset?: number;
  readonly seen?: Iterable<number>;
  readonly maxItems?: number; // Items the listing may hold, from offset 0 (default MAX_LISTING_ITEMS).
}

/** Yields every page, the last even when empty, dropping items seen (an insert shifts pages); a page of only
 * seen items throws ApiPaginationError rather than loop. An item without a readable id is never a repeat. */
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
      throw new ApiError(`the page at offset ${offset} repeats items already listed`, {
        name: 'ApiPaginationError',
        status: 200,
        method: where.method,
        path: `${where.path}?limit=${pageSize}&offset=${offset}`,
        attempts: pages,
        hint: 'the API seems to ignore offset: try a different page size, and report it',
        retryable: false,
      });
    }
    for (const item of fresh) {
      const id = entityId(idOf(item));
      if (id !== undefined) seen.add(id);
    }
    const last = page.length < pageSize;
    const maxItems = start.maxItems ?? MAX_LISTING_ITEMS;
    if (!last && offset + page.length >= maxItems)
      throw new ApiError(`the listing has no last page after ${maxItems.toLocaleString('en-US')} items`, {
        name: 'ApiListingTooLongError',
        status: 200,
        method: where.method,
        path: `${where.path}?limit=${pageSize}&offset=${offset}`,
        attempts: pages,
        hint:
          'its pages never run out (every page full of new items), so the sync stops rather than read for ever; ' +
          'check what ADOPS_BASE_URL answers; if the account really lists more, report it',
        retryable: false,
      });
    yield { offset, items: fresh, size: page.length, last };
    if (last) return;
    offset += page.length;
  }
}

/** The non-empty pages of a listing, without repeats (see listPages). */
export async function* paginate<T>(
  fetchPage: (page: { limit: number; offset: number }) => Promise<T[]>,
  idOf: (item: T) => unknown,
  pageSize: number,
  where: { method: string; path: string },
): AsyncGenerator<T[]> {
  for await (const page of listPages(fetchPage, idOf, pageSize, where))
    if (page.items.length > 0) yield page.items;
}

/** A campaign as listed, read permissively: the sync maps the fields it knows and counts the unreadable. */
export interface Campaign {
  campaign_id: number;
  [field: string]: unknown;
}

export interface Creative {
  creative_id: number;
  [field: string]: unknown;
}

/** A list page request: limit (API default 100) and offset (items skipped). */
export interface PageRequest {
  limit?: number;
  offset?: number;
}
