import { ApiError, type ApiErrorDetails } from './errors.js';

/** The API answered a later page with items already seen: it ignores offset, or loops. */
export class ApiPaginationError extends ApiError {
  override name = 'ApiPaginationError';
  constructor(d: ApiErrorDetails & { offset: number }) {
    super(`the page at offset ${d.offset} repeats items already listed`, d);
  }
}

/**
 * Yields list pages (limit/offset) until a short or empty page. Items already yielded are dropped
 * from later pages (the order is not guaranteed, so an insert can shift items across a page
 * boundary); a non-empty page made only of seen items means the API repeats itself: that stops
 * with ApiPaginationError rather than looping forever.
 */
export async function* paginate<T>(
  fetchPage: (page: { limit: number; offset: number }) => Promise<T[]>,
  idOf: (item: T) => number,
  pageSize: number,
  where: { method: string; path: string },
): AsyncGenerator<T[]> {
  if (!Number.isInteger(pageSize) || pageSize < 1)
    throw new RangeError(`page size must be a positive integer, got ${pageSize}`);
  const seen = new Set<number>();
  for (let offset = 0, pages = 1; ; pages++) {
    const page = await fetchPage({ limit: pageSize, offset });
    const fresh = page.filter((item) => !seen.has(idOf(item)));
    if (page.length > 0 && fresh.length === 0) {
      throw new ApiPaginationError({
        status: 200,
        apiMessage: undefined,
        method: where.method,
        path: `${where.path}?limit=${pageSize}&offset=${offset}`,
        attempts: pages,
        offset,
        hint: 'the API seems to ignore offset: try a different page size, and report it',
        retryable: false,
      });
    }
    for (const item of fresh) seen.add(idOf(item));
    if (fresh.length > 0) yield fresh;
    if (page.length < pageSize) return;
    offset += page.length;
  }
}
