import type { ReportQuery } from '../flatten/types.js';

/**
 * How GET /reports sends its parameters. The spec leaves it open (its table lists them, a request
 * example sends a JSON body): `repeat` sends dimensions=a&dimensions=b, `brackets`
 * dimensions[]=a&dimensions[]=b (PHP style), `comma` dimensions=a,b, all in the query string;
 * `json-body` sends {"date_from","date_until","dimensions":[...]} as a JSON body on the GET, with
 * no query string.
 */
export type DimensionsEncoding = 'repeat' | 'brackets' | 'comma' | 'json-body';

/** Every form, in the order `adops doctor` tries them. */
export const DIMENSIONS_ENCODINGS: readonly DimensionsEncoding[] = [
  'repeat',
  'brackets',
  'comma',
  'json-body',
];

/** A GET /reports request: the path (relative to the base URL) and, for `json-body`, the body. */
export interface ReportRequest {
  readonly path: string;
  readonly body: { date_from: string; date_until: string; dimensions: string[] } | undefined;
}

/** The GET /reports request for a query in the given form. */
export function reportRequest(q: ReportQuery, encoding: DimensionsEncoding = 'repeat'): ReportRequest {
  if (encoding === 'json-body')
    return {
      path: '/reports',
      body: { date_from: q.period.start, date_until: q.period.end, dimensions: [...q.dimensions] },
    };
  return { path: reportPath(q, encoding), body: undefined };
}

/** The request path of GET /reports for a query-string form (relative to the base URL). */
export function reportPath(
  q: ReportQuery,
  encoding: Exclude<DimensionsEncoding, 'json-body'> = 'repeat',
): string {
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
