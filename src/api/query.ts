import type { ReportQuery } from '../report/types.js';

/**
 * How the dimension list travels in the GET /reports query string. The spec leaves it open:
 * `repeat` sends dimensions=a&dimensions=b, `brackets` dimensions[]=a&dimensions[]=b (PHP style),
 * `comma` dimensions=a,b.
 */
export type DimensionsEncoding = 'repeat' | 'brackets' | 'comma';

/** The request path of GET /reports for a query (relative to the base URL). */
export function reportPath(q: ReportQuery, encoding: DimensionsEncoding = 'repeat'): string {
  const params = new URLSearchParams();
  params.append('date_from', q.period.start);
  params.append('date_until', q.period.end);
  if (encoding === 'comma') params.append('dimensions', q.dimensions.join(','));
  else {
    const name = encoding === 'brackets' ? 'dimensions[]' : 'dimensions';
    for (const d of q.dimensions) params.append(name, d);
  }
  return `/reports?${params.toString()}`;
}

/** `?limit=..&offset=..` for a list page, omitting what is not set. */
export function pageQuery(page: { limit?: number; offset?: number } = {}): string {
  const params = new URLSearchParams();
  if (page.limit !== undefined) params.append('limit', String(page.limit));
  if (page.offset !== undefined) params.append('offset', String(page.offset));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}
