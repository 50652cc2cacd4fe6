// `adops doctor`'s probes, each run only when the ones before leave something to learn, over a Pool that
// waits out 429s and retries transient failures (a flaky server is no wrong setting); and the TLS handshake.
import { connect, type PeerCertificate } from 'node:tls';
import { setTimeout as delay } from 'node:timers/promises';
import { Pool } from 'undici';
import { readBody } from '../api/body.js';
import { reportRequest } from '../api/client.js';
import { parseRetryAfter } from '../api/http.js';
import { apiMessageOf } from '../api/malformed.js';
import type { Dimension } from '../platform/config/dimensions.js';
import { errnoCode } from '../platform/config/files.js';
import { addDays } from '../platform/dates/calendar.js';
import { counterValue } from '../flatten/rows.js';
import type { Period } from '../flatten/types.js';
import { redactSecrets } from '../platform/log/redact.js';
import { backoffDelay, isTransientNetwork, isTransientStatus } from '../platform/retry/classify.js';
import { chooseForm, DAY, judgeForms, PAIR } from './forms.js';
import {
  AUTH_FORMS,
  hasStatus,
  isSuccess,
  REPORT_FORMS,
  type Answer,
  type AuthForm,
  type FormObservation,
  type Observations,
  type ReportForm,
  type TlsObservation,
} from './types.js';
import { chooseAuth } from './verdict.js';

type DoctorTarget = Pick<Observations, 'baseUrl' | 'configured'> & {
  apiKey: string;
  connectTimeoutMs: number;
};

/** Probes the server and returns what it saw; never throws for what the server does. */
export async function runProbes(t: DoctorTarget): Promise<Observations> {
  const now = new Date();
  const tls = t.baseUrl.startsWith('https:') ? await probeTls(t.baseUrl, t.connectTimeoutMs) : undefined;
  const prober = new Prober(t);
  const period = formPeriod(now);
  try {
    // Probe "auth" with each header form; the first answer also tells whether the server is reachable.
    const auth = {} as Record<AuthForm, Answer>;
    for (const form of AUTH_FORMS)
      auth[form] = await prober.send({ path: '/campaigns?limit=1', headers: authHeaders(form, t.apiKey) });
    const chosen = chooseAuth(auth, t.configured.auth);
    let scopes: Observations['scopes'];
    const forms: Partial<Record<ReportForm, FormObservation>> = {};
    let gzip: Observations['gzip'];
    if (chosen !== undefined) {
      const headers = authHeaders(chosen, t.apiKey);
      // Probe "scopes": one request per endpoint group (campaigns is the auth probe's answer).
      const id = firstCampaignId(auth[chosen]);
      scopes = {
        campaigns: auth[chosen],
        creatives:
          id === undefined
            ? 'no-campaign'
            : await prober.send({ path: `/campaigns/${id}/creatives?limit=1`, headers }),
        reports: await prober.send(reportProbe(t.configured.reportParams, DAY, yesterday(now), headers)),
      };
      // Probe "report params": PAIR in each form and, where that answered 2xx, DAY to check the sums against.
      if (!hasStatus(scopes.reports, 403))
        for (const form of REPORT_FORMS) {
          const pair = await prober.send(reportProbe(form, PAIR, period, headers));
          const day = isSuccess(pair)
            ? await prober.send(reportProbe(form, DAY, period, headers))
            : undefined;
          forms[form] = { pair, day };
        }
      // Probe "gzip": a report in the working form (a body worth compressing), else the catalogue's first page.
      const choice = chooseForm(judgeForms(forms, period), t.configured.reportParams);
      const request =
        choice === undefined
          ? { path: '/campaigns?limit=1', headers }
          : reportProbe(choice.form, DAY, period, headers);
      gzip = await prober.send({ ...request, headers: { ...headers, 'accept-encoding': 'gzip' } });
    }
    return {
      baseUrl: t.baseUrl,
      configured: t.configured,
      tls,
      auth,
      scopes,
      formPeriod: period,
      forms,
      gzip,
      clock: prober.clock,
      rateLimitHeaders: { ...prober.rateLimitHeaders },
      throttled: prober.throttled,
    };
  } finally {
    await prober.close();
  }
}

export function authHeaders(form: AuthForm, key: string): Record<string, string> {
  return form === 'bearer' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key };
}

export function reportProbe(
  form: ReportForm,
  dimensions: readonly Dimension[],
  period: Period,
  headers: Readonly<Record<string, string>>,
): ProbeRequest {
  // The client's own request builder: the doctor probes exactly what a pull would send.
  const request = reportRequest({ dimensions, period }, form);
  return request.body === undefined
    ? { path: request.path, headers }
    : { path: request.path, headers, body: JSON.stringify(request.body) };
}

/** Yesterday (UTC) alone: the scope probe's period. */
export function yesterday(now: Date): Period {
  const day = addDays(now.toISOString().slice(0, 10), -1);
  return { start: day, end: day };
}

/** The week up to yesterday (UTC): one day alone may hold no traffic to tell the forms apart by. */
export function formPeriod(now: Date): Period {
  const today = now.toISOString().slice(0, 10);
  return { start: addDays(today, -7), end: addDays(today, -1) };
}

/** The campaign_id of the first item of a campaigns page (a number, or digits in a string). */
export function firstCampaignId(a: Answer): number | undefined {
  if (!isSuccess(a)) return undefined;
  try {
    const doc = JSON.parse(a.body.toString('utf8')) as { items?: Array<{ campaign_id?: unknown }> };
    const id = counterValue(Array.isArray(doc.items) ? doc.items[0]?.campaign_id : undefined);
    return id > 0 ? id : undefined;
  } catch {
    return undefined;
  }
}

// Short retries, since a doctor should answer in seconds, but enough that a flaky server still gets probed.
const PROBE_BACKOFF = { baseMs: 100, maxMs: 1_000 };
const ATTEMPTS = 8;
const THROTTLE_RETRIES = 8;
const MAX_RETRY_AFTER_MS = 10_000; // A longer Retry-After is not waited for: the 429 becomes the answer.
const PROBE_TIMEOUT_MS = 15_000;

/** One GET: the path relative to the base URL (query included). */
interface ProbeRequest {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** A body this large is no probe's answer: stop reading rather than fill memory. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Not worth retrying for a probe: nothing listens, or the server is too slow to wait for twice. */
const FINAL_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
]);

class Prober {
  private readonly pool: Pool;
  private readonly basePath: string;
  private readonly secrets: readonly string[];
  readonly rateLimitHeaders: Record<string, string> = {};
  throttled = 0;
  clock: Observations['clock'];

  constructor(t: DoctorTarget) {
    const url = new URL(t.baseUrl);
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.secrets = [t.apiKey];
    this.pool = new Pool(url.origin, {
      connections: 2,
      connectTimeout: t.connectTimeoutMs,
      headersTimeout: PROBE_TIMEOUT_MS,
      bodyTimeout: PROBE_TIMEOUT_MS,
    });
  }

  /** Never throws. */
  async send(req: ProbeRequest): Promise<Answer> {
    let failures = 0;
    let throttles = 0;
    for (;;) {
      try {
        const res = await this.pool.request({
          method: 'GET',
          path: this.basePath + req.path,
          headers: {
            accept: 'application/json',
            'user-agent': 'adops-export doctor',
            ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
            ...req.headers,
          },
          body: req.body,
        });
        this.note(res.headers);
        // As received (not decoded); past MAX_BODY_BYTES the socket is destroyed.
        const read = await readBody(res.body, 'identity', MAX_BODY_BYTES);
        if (read.kind !== 'ok')
          throw Object.assign(new Error(`body larger than ${MAX_BODY_BYTES} bytes`), { code: 'TOO_LARGE' });
        const body = read.body;
        const status = res.statusCode;
        if (status === 429 && throttles < THROTTLE_RETRIES) {
          const wait = parseRetryAfter(res.headers['retry-after'], Date.now()) ?? 1_000;
          if (wait <= MAX_RETRY_AFTER_MS) {
            throttles++;
            this.throttled++;
            await delay(wait + 25);
            continue;
          }
        }
        if (isTransientStatus(status) && ++failures < ATTEMPTS) {
          await delay(backoffDelay(failures, PROBE_BACKOFF));
          continue;
        }
        const encoding = res.headers['content-encoding'];
        return {
          kind: 'http',
          status,
          body,
          contentEncoding: Array.isArray(encoding) ? encoding.join(', ') : encoding,
          apiMessage: status >= 300 ? apiMessageOf(body, this.secrets) : undefined,
        };
      } catch (error) {
        const code = errnoCode(error) ?? 'error';
        if (isTransientNetwork(code, 'GET') && !FINAL_CODES.has(code) && ++failures < ATTEMPTS) {
          await delay(backoffDelay(failures, PROBE_BACKOFF));
          continue;
        }
        return {
          kind: 'none',
          code,
          detail: redactSecrets(error instanceof Error ? error.message : String(error), this.secrets),
        };
      }
    }
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private note(headers: Record<string, string | string[] | undefined>): void {
    const date = headers.date;
    if (this.clock === undefined && typeof date === 'string')
      this.clock = { serverDate: date, localMs: Date.now() };
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined && isRateLimitHeader(name))
        this.rateLimitHeaders[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }
  }
}

export function isRateLimitHeader(name: string): boolean {
  return /^(x-)?ratelimit(-|$)/i.test(name) || /^retry-after$/i.test(name);
}

/** The TLS handshake alone, for the certificate (the pool does not show it). Undefined when not even TCP
 * connected: that is reachability's finding. */
function probeTls(baseUrl: string, timeoutMs: number): Promise<TlsObservation | undefined> {
  const url = new URL(baseUrl);
  const port = url.port === '' ? 443 : Number(url.port);
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port, servername: url.hostname, timeout: timeoutMs });
    let connected = false;
    socket.once('connect', () => (connected = true));
    const done = (o: TlsObservation | undefined) => {
      socket.destroy();
      resolve(o);
    };
    socket.once('secureConnect', () => {
      const cert: PeerCertificate = socket.getPeerCertificate();
      done({
        ok: true,
        subject: nameOf(cert.subject) ?? url.hostname,
        issuer: nameOf(cert.issuer) ?? 'unknown issuer',
        validTo: cert.valid_to,
      });
    });
    const fail = (code: string, detail: string) => done(connected ? { ok: false, code, detail } : undefined);
    socket.once('timeout', () => fail('ETIMEDOUT', `no handshake within ${timeoutMs} ms`));
    socket.once('error', (error: NodeJS.ErrnoException) => fail(error.code ?? 'error', error.message));
  });
}

function nameOf(name: PeerCertificate['subject'] | undefined): string | undefined {
  if (name === undefined) return undefined;
  const pick = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return pick(name.CN) ?? pick(name.O);
}
