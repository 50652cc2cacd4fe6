// The verdict of `adops doctor` from the observations alone (no I/O); the report params rows are forms.ts's.
import { gunzipSync } from 'node:zlib';
import { formsVerdict } from './forms.js';
import {
  answerCode,
  AUTH_FORMS,
  describeAnswer,
  hasStatus,
  isSuccess,
  row,
  type Answer,
  type AuthForm,
  type Observations,
  type Row,
} from './types.js';

/** A row and, when it stops a pull, the sentence saying what to do. */
interface Finding {
  readonly row: Row;
  readonly problem?: string;
}

/** Decides whether a pull can work, and the rows and settings. `nowMs`: our clock. */
export function decide(o: Observations, nowMs: number) {
  const reach = reachVerdict(o, nowMs);
  const auth = authVerdict(o);
  const scopes = scopesVerdict(o);
  const forms = formsVerdict(o, scopes.reportsForbidden);
  const gzip = gzipVerdict(o.gzip);
  const clock = clockVerdict(o.clock);
  const problems = [reach.problem, auth.problem, scopes.problem, forms.problem].filter(
    (p): p is string => p !== undefined,
  );
  const ok = problems.length === 0 && auth.chosen !== undefined && forms.chosen !== undefined;
  return {
    /** True when a pull can work: reachable, a header form accepted, reports allowed, a form correct. */
    ok,
    rows: [
      reach.row,
      auth.row,
      scopes.row,
      ...forms.rows,
      gzip.row,
      clock.row,
      rateLimitVerdict(o.rateLimitHeaders, o.throttled),
    ] as readonly Row[],
    /** The env lines to set; undefined when a pull cannot work. */
    settings:
      ok && auth.chosen !== undefined && forms.chosen !== undefined
        ? {
            ADOPS_AUTH: auth.chosen,
            ADOPS_REPORT_PARAMS: forms.chosen,
            ADOPS_HTTP_COMPRESSION: gzip.served === true ? ('gzip' as const) : ('none' as const),
          }
        : undefined,
    /** One sentence per reason a pull cannot work, each saying what to do. */
    problems: problems as readonly string[],
    facts: {
      auth: { bearer: answerCode(o.auth.bearer), 'x-api-key': answerCode(o.auth['x-api-key']) },
      forms: forms.judged,
      gzip: gzip.served,
      clockSkewSeconds: clock.skewSeconds,
      rateLimitHeaders: o.rateLimitHeaders,
      throttled: o.throttled,
    },
  };
}

export type Verdict = ReturnType<typeof decide>;
export type Settings = NonNullable<Verdict['settings']>;

// Row "reachability": did the server answer, and over plain http or TLS with a trusted certificate.
const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/;
const EXPIRY_WARN_DAYS = 14;

function reachVerdict(o: Observations, nowMs: number): Finding {
  const url = new URL(o.baseUrl);
  const reachRow = row('reachability');
  const answers = AUTH_FORMS.map((f) => o.auth[f]);
  if (o.tls !== undefined && !o.tls.ok)
    return {
      row: reachRow('fail', `${url.host}: TLS failed (${o.tls.code}: ${o.tls.detail})`),
      problem:
        `the TLS handshake with ${url.host} failed (${o.tls.code}): the server's certificate is not ` +
        'trusted by this machine; fix the certificate, or point NODE_EXTRA_CA_CERTS at your CA',
    };
  if (!answers.some((a) => a.kind === 'http')) {
    const first = answers[0];
    const why = first?.kind === 'none' ? `${first.code}: ${first.detail}` : 'no answer';
    return {
      row: reachRow('fail', `${url.host}: no answer (${why})`),
      problem: `${url.host} did not answer (${why}): check ADOPS_BASE_URL, DNS and the network`,
    };
  }
  if (url.protocol === 'http:')
    return LOOPBACK.test(url.hostname)
      ? { row: reachRow('ok', `${url.host}: answers, plain http on a loopback address`) }
      : {
          row: reachRow(
            'warn',
            `${url.host}: answers over plain http: the key travels unencrypted; use https`,
          ),
        };
  const tls = o.tls;
  if (tls === undefined) return { row: reachRow('ok', `${url.host}: answers over https`) };
  const daysLeft = Math.floor((Date.parse(tls.validTo) - nowMs) / 86_400_000);
  const soon = Number.isFinite(daysLeft) && daysLeft < EXPIRY_WARN_DAYS;
  return {
    row: reachRow(
      soon ? 'warn' : 'ok',
      `${url.host}: answers over https; certificate ok (${tls.subject}, issued by ${tls.issuer}, ` +
        `valid until ${tls.validTo}${soon ? `: expires in ${daysLeft} days` : ''})`,
    ),
  };
}

// Row "auth": which header form the server accepts for this key. An accepted key may still lack a
// scope (403): that is the scopes row's business, so 403 counts as accepted here.
const LABEL: Record<AuthForm, string> = { bearer: 'Bearer', 'x-api-key': 'x-api-key' };

/** The header form to use: the configured one when accepted, else the other accepted one. */
export function chooseAuth(
  auth: Readonly<Record<AuthForm, Answer>>,
  configured: AuthForm,
): AuthForm | undefined {
  const accepted = (a: Answer) => isSuccess(a) || hasStatus(a, 403);
  return accepted(auth[configured]) ? configured : AUTH_FORMS.find((f) => accepted(auth[f]));
}

function authVerdict(o: Observations): Finding & { chosen: AuthForm | undefined } {
  const detail = AUTH_FORMS.map((f) => `${LABEL[f]} ${describeAnswer(o.auth[f])}`).join('; ');
  const chosen = chooseAuth(o.auth, o.configured.auth);
  if (chosen !== undefined) return { row: row('auth')('ok', `${detail}; use ${chosen}`), chosen };
  const failed = { row: row('auth')('fail', detail), chosen };
  if (AUTH_FORMS.every((f) => o.auth[f].kind === 'none')) return failed;
  if (AUTH_FORMS.every((f) => hasStatus(o.auth[f], 401)))
    return {
      ...failed,
      problem:
        'the API refused the key (401) with both header forms: check ADOPS_API_KEY (or the file in ' +
        'ADOPS_API_KEY_FILE): a wrong, revoked or expired key',
    };
  const path = `${new URL(o.baseUrl).pathname}/campaigns?limit=1`;
  const statuses = AUTH_FORMS.map((f) => `${f}: ${answerCode(o.auth[f])}`).join(', ');
  return {
    ...failed,
    problem:
      `GET ${path} was not accepted with either header form (${statuses}): ` +
      'check ADOPS_BASE_URL (the account API URL, ending in /v2) and ADOPS_API_KEY',
  };
}

// Row "scopes": which endpoints answer 403. A pull needs reports; `adops sync` the campaigns and creatives.
function scopesVerdict(o: Observations): Finding & { reportsForbidden: boolean } {
  const s = o.scopes;
  const scopesRow = row('scopes');
  if (s === undefined)
    return { row: scopesRow('skip', 'not probed: no header form accepted'), reportsForbidden: false };
  const creatives: Answer | undefined = s.creatives === 'no-campaign' ? undefined : s.creatives;
  const detail = [
    `campaigns ${describeAnswer(s.campaigns)}`,
    creatives === undefined
      ? 'creatives not probed (no campaign listed)'
      : `creatives ${describeAnswer(creatives)}`,
    `reports ${describeAnswer(s.reports)}`,
  ].join('; ');
  if (hasStatus(s.reports, 403)) {
    const said = s.reports.apiMessage !== undefined ? ` ("${s.reports.apiMessage}")` : '';
    return {
      row: scopesRow('fail', detail),
      reportsForbidden: true,
      problem:
        `GET /reports answered 403${said}: the key lacks the reports scope (or the GET method, or ` +
        "this machine's IP): allow them in the API key settings",
    };
  }
  const catalogueForbidden = hasStatus(s.campaigns, 403) || hasStatus(creatives, 403);
  return {
    row: catalogueForbidden
      ? scopesRow('warn', `${detail}; adops sync needs the campaigns and creatives scopes`)
      : scopesRow('ok', detail),
    reportsForbidden: false,
  };
}

// Row "gzip": a body labelled gzip must really decompress, or every pull would fail. `served` undefined: unknown.
function gzipVerdict(a: Answer | undefined): { row: Row; served: boolean | undefined } {
  const gzipRow = row('gzip');
  if (a === undefined) return { row: gzipRow('skip', 'not probed'), served: undefined };
  if (!isSuccess(a))
    return { row: gzipRow('warn', `cannot tell: answered ${describeAnswer(a)}`), served: undefined };
  const encoding = (a.contentEncoding ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity')
    return { row: gzipRow('info', 'not served: the server ignores Accept-Encoding: gzip'), served: false };
  if (encoding !== 'gzip' && encoding !== 'x-gzip')
    return {
      row: gzipRow('warn', `answered Content-Encoding: ${encoding}, not gzip: use none`),
      served: false,
    };
  try {
    JSON.parse(gunzipSync(a.body).toString('utf8'));
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return {
      row: gzipRow('warn', `labelled gzip, but the body does not decompress to JSON (${why}): use none`),
      served: false,
    };
  }
  return {
    row: gzipRow('ok', `served (Content-Encoding: gzip, ${a.body.length} bytes compressed)`),
    served: true,
  };
}

// Row "clock": periods ("yesterday") come from our clock and the late-data window from the server's, so a
// large skew shifts what is complete. The Date header has 1 s resolution; skew is server minus ours.
const CLOCK_WARN_SECONDS = 60;

function clockVerdict(clock: Observations['clock']): { row: Row; skewSeconds: number | undefined } {
  const clockRow = row('clock');
  if (clock === undefined) return { row: clockRow('info', 'no Date header seen'), skewSeconds: undefined };
  const server = Date.parse(clock.serverDate);
  if (Number.isNaN(server))
    return { row: clockRow('warn', `unreadable Date header "${clock.serverDate}"`), skewSeconds: undefined };
  // The header is truncated to the second: half a second back evens out the rounding.
  const skew = Math.round((server + 500 - clock.localMs) / 1000);
  const way = skew > 0 ? 'ahead of' : 'behind';
  const said = `server Date ${clock.serverDate}: ${skew === 0 ? 'in step with ours' : `${Math.abs(skew)} s ${way} ours`}`;
  return {
    row:
      Math.abs(skew) > CLOCK_WARN_SECONDS
        ? clockRow(
            'warn',
            `${said}: more than ${CLOCK_WARN_SECONDS} s; check NTP on this machine (or tell the API's operator)`,
          )
        : clockRow('ok', said),
    skewSeconds: skew,
  };
}

/** Row "rate limits": the headers the server sends about its limits, and 429s met while probing. */
function rateLimitVerdict(headers: Readonly<Record<string, string>>, throttled: number): Row {
  const names = Object.keys(headers).sort();
  const seen =
    names.length === 0 ? 'no rate-limit headers seen' : names.map((n) => `${n}: ${headers[n]}`).join(', ');
  if (throttled === 0) return row('rate limits')('info', seen);
  return row('rate limits')(
    'warn',
    `${seen}; ${throttled} answer(s) were 429 and waited out: the key is near its limit, ` +
      'keep ADOPS_RATE_LIMIT (requests per second, all workers) below it',
  );
}
