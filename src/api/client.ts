// The management API's client: GET /reports (streamed, secrets redacted) and the catalogue listings.
import { type AccountConfig, requireApiKey, requireBaseUrl } from '../platform/config/env.js';
import type { Logger } from '../platform/log/logger.js';
import { redactBuffer } from '../platform/log/redact.js';
import { matcherOf } from '../platform/log/secret-pattern.js';
import type { ReportQuery } from '../flatten/types.js';
import { BODY_MB, ReportBody } from './body.js';
import { apiResponseError, RESPONSE_HINT } from './errors.js';
import { DEFAULT_RETRY_AFTER_CAP_MS } from '../platform/retry/classify.js';
import { realSleep, Transport, type TransportOptions } from './http.js';
import { excerptOf, parseJsonBody, reportBodyProblem } from './malformed.js';
import { paginate, type Campaign, type Creative, type PageRequest } from './pages.js';

/** A client's settings: the transport's (defaults in transportOptions) and how it asks for reports. */
export type ApiClientOptions = Partial<TransportOptions> &
  Pick<TransportOptions, 'baseUrl' | 'apiKey' | 'auth'> & {
    /** How GET /reports sends its parameters (query-string forms or a JSON body); default 'repeat'. */
    dimensionsEncoding?: DimensionsEncoding;
    /** The clock of FetchedReport.fetchedAt (default the system clock): information only, never a fence. */
    now?: () => Date;
    /** Strings redacted from report bodies before they leave the client (default: the API key). */
    secrets?: readonly string[];
  };

/** A report as the API client hands it on: the body (secrets redacted) and the facts of its fetch. */
export interface FetchedReport {
  readonly body: ReportBody; // Read once; its size and digest as received are known once it has been read.
  readonly fetchedAt: Date;
  readonly attempts: number; // HTTP attempts spent, the successful one included.
  /** From the first request to the response (a streamed body's rest arrives as it is read). */
  readonly fetchMs: number;
}

/** The endpoints of the management API the product reads. Errors are ApiError subclasses (see errors.ts). */
export interface ApiClient {
  /** GET /reports: the body decompressed and redacted, not parsed; a stream from `streamFromBytes` on. */
  fetchReport(
    q: ReportQuery,
    options?: { signal?: AbortSignal; streamFromBytes?: number },
  ): Promise<FetchedReport>;
  listCampaigns(page?: PageRequest): Promise<Campaign[]>;
  /** Every campaign, page by page (default 100, the API's documented default). */
  campaigns(pageSize?: number): AsyncIterable<Campaign[]>;
  listCreatives(campaignId: number, page?: PageRequest): Promise<Creative[]>;
  creatives(campaignId: number, pageSize?: number): AsyncIterable<Creative[]>;
  close(): Promise<void>;
}

/** The transport settings of a client with options `o` (the defaults filled in). */
export function transportOptions(o: ApiClientOptions): TransportOptions {
  return {
    baseUrl: o.baseUrl,
    apiKey: o.apiKey,
    auth: o.auth,
    connectTimeoutMs: o.connectTimeoutMs ?? 10_000,
    headersTimeoutMs: o.headersTimeoutMs ?? 60_000,
    bodyTimeoutMs: o.bodyTimeoutMs ?? 120_000,
    requestTimeoutMs: o.requestTimeoutMs ?? 1_800_000,
    attempts: Math.max(1, o.attempts ?? 5),
    baseBackoffMs: o.baseBackoffMs ?? 250,
    maxBackoffMs: o.maxBackoffMs ?? 30_000,
    maxRetryAfterMs: o.maxRetryAfterMs ?? 300_000,
    retryAfterCapMs: o.retryAfterCapMs ?? DEFAULT_RETRY_AFTER_CAP_MS,
    connections: o.connections ?? 16,
    maxBodyBytes: o.maxBodyBytes ?? 500 * BODY_MB,
    compression: o.compression ?? 'gzip',
    on429: o.on429 ?? 'wait',
    logger: o.logger,
    onAttempt: o.onAttempt,
    beforeRequest: o.beforeRequest,
    sleep: o.sleep ?? realSleep,
    random: o.random ?? Math.random,
    signal: o.signal,
    settings: o.settings,
  };
}

/** A client of the API; clients of one origin share a keep-alive pool, which the last close ends. */
export function createApiClient(o: ApiClientOptions): ApiClient {
  const http = new Transport(transportOptions(o));
  // Matchers built once per client (building one takes milliseconds), not once a body.
  const secrets = matcherOf([o.apiKey]);
  const bodySecrets = o.secrets === undefined ? secrets : matcherOf(o.secrets);

  /** GETs a listing: non-JSON is retried, no `items` array fails; items are left as sent (bad ids too). */
  async function list<T>(path: string): Promise<T[]> {
    let doc: unknown;
    const res = await http.send('GET', path, undefined, undefined, (raw, contentType) => {
      // An echoed key must not reach the catalogue tables or a sync's problem examples.
      const parsed = parseJsonBody(redactBuffer(raw, secrets), contentType);
      if (!parsed.ok) return parsed.problem;
      doc = parsed.doc;
      return undefined;
    });
    const items = typeof doc === 'object' && doc !== null ? (doc as { items?: unknown }).items : undefined;
    if (!Array.isArray(doc) && Array.isArray(items)) return items as T[];
    throw apiResponseError({
      status: res.status,
      method: 'GET',
      path: http.fullPath(path),
      attempts: res.attempts,
      hint: RESPONSE_HINT,
      retryable: false,
      problem: 'expected an object with an items array',
      excerpt: excerptOf(res.body, secrets),
    });
  }
  const int = (n: number, what: string) => {
    if (!Number.isSafeInteger(n) || n < 0)
      throw new RangeError(`${what} must be a non-negative integer, got ${n}`);
    return n;
  };
  const creativesPath = (cid: number) => `/campaigns/${int(cid, 'campaign id')}/creatives`;
  const where = (path: string) => ({ method: 'GET', path: http.fullPath(path) });

  const client: ApiClient = {
    async fetchReport(q, options) {
      const fetchedAt = o.now?.() ?? new Date();
      const request = reportRequest(q, o.dimensionsEncoding);
      const res = await http.send(
        'GET',
        request.path,
        request.body,
        options?.signal,
        reportBodyProblem,
        options?.streamFromBytes,
      );
      return {
        body: new ReportBody(res.stream ?? res.body, bodySecrets),
        fetchedAt,
        attempts: res.attempts,
        fetchMs: res.durationMs,
      };
    },
    listCampaigns: (page) => list<Campaign>(`/campaigns${pageQuery(page)}`),
    campaigns: (pageSize = 100) =>
      paginate(
        (p) => client.listCampaigns(p),
        (c) => c.campaign_id,
        pageSize,
        where('/campaigns'),
      ),
    listCreatives: (campaignId, page) => list<Creative>(`${creativesPath(campaignId)}${pageQuery(page)}`),
    creatives: (campaignId, pageSize = 100) =>
      paginate(
        (p) => client.listCreatives(campaignId, p),
        (c) => c.creative_id,
        pageSize,
        where(creativesPath(campaignId)),
      ),
    close: () => http.close(),
  };
  return client;
}

/** A client configured from the validated environment (ADOPS_BASE_URL, ADOPS_API_KEY, ADOPS_HTTP_*, ...). */
export function createApiClientFromConfig(
  config: AccountConfig,
  logger?: Logger,
  extra: Partial<ApiClientOptions> = {},
): ApiClient {
  return createApiClient({
    ...config.http,
    // One account's of the accounts file: its hints name its own entry, not the environment's variables.
    settings:
      config.account === undefined || config.accountsFile === undefined
        ? undefined
        : { account: config.account, file: config.accountsFile },
    baseUrl: requireBaseUrl(config),
    apiKey: requireApiKey(config),
    auth: config.auth,
    maxBodyBytes: config.http.maxBodyMb * BODY_MB,
    dimensionsEncoding: config.reportParams,
    ...(logger === undefined ? {} : { logger }),
    ...extra,
  });
}

/** How GET /reports sends its parameters (the spec leaves it open): dimensions=a&dimensions=b (`repeat`),
 * dimensions[]=a (`brackets`), dimensions=a,b (`comma`), or a JSON body on the GET (`json-body`). */
export type DimensionsEncoding = (typeof DIMENSIONS_ENCODINGS)[number];

/** Every form, in the order `adops doctor` tries them. */
export const DIMENSIONS_ENCODINGS = ['repeat', 'brackets', 'comma', 'json-body'] as const;

/** A GET /reports request: the path (relative to the base URL) and, for `json-body`, the body. */
export interface ReportRequest {
  readonly path: string;
  readonly body: { date_from: string; date_until: string; dimensions: string[] } | undefined;
}

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
