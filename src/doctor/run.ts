// `adops doctor`'s probing, in order: each step runs only when the ones before it leave
// something to learn (no scopes without an accepted key, no report forms when reports are 403).
import { Prober, type ProbeRequest } from './http.js';
import { probeAuth } from './probes/auth.js';
import { probeForms } from './probes/forms.js';
import { probeGzip } from './probes/gzip.js';
import { probeScopes } from './probes/scopes.js';
import { probeTls } from './probes/tls.js';
import { authHeaders, formPeriod, reportProbe, yesterday } from './requests.js';
import type { AuthForm, FormObservation, Observations, ReportForm } from './types.js';
import { chooseAuth } from './verdict/auth.js';
import { hasStatus } from './verdict/answer.js';
import { chooseForm, DAY, judgeForms } from './verdict/forms.js';

export interface DoctorTarget {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly configured: { readonly auth: AuthForm; readonly reportParams: ReportForm };
  readonly connectTimeoutMs: number;
  /** Per request, for the headers and for the body each (default 15 s). */
  readonly timeoutMs?: number;
}

/** Probes the server and returns what it saw; never throws for what the server does. */
export async function runProbes(
  t: DoctorTarget,
  options: { now?: () => Date; sleep?: (ms: number) => Promise<void> } = {},
): Promise<Observations> {
  const now = options.now ?? (() => new Date());
  const tls = t.baseUrl.startsWith('https:') ? await probeTls(t.baseUrl, t.connectTimeoutMs) : undefined;
  const prober = new Prober({
    baseUrl: t.baseUrl,
    secrets: [t.apiKey],
    connectTimeoutMs: t.connectTimeoutMs,
    headersTimeoutMs: t.timeoutMs ?? 15_000,
    bodyTimeoutMs: t.timeoutMs ?? 15_000,
    ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
  });
  const period = formPeriod(now());
  try {
    const auth = await probeAuth(prober, t.apiKey);
    const chosen = chooseAuth(auth, t.configured.auth);
    let scopes: Observations['scopes'];
    let forms: Partial<Record<ReportForm, FormObservation>> = {};
    let gzip: Observations['gzip'];
    if (chosen !== undefined) {
      const headers = authHeaders(chosen, t.apiKey);
      scopes = await probeScopes(prober, headers, auth[chosen], t.configured.reportParams, yesterday(now()));
      if (!hasStatus(scopes.reports, 403)) forms = await probeForms(prober, headers, period);
      gzip = await probeGzip(prober, gzipRequest(forms, period, headers, t.configured.reportParams));
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
      clock: prober.clock(),
      rateLimitHeaders: prober.rateLimitHeaders(),
      throttled: prober.throttled(),
    };
  } finally {
    await prober.close();
  }
}

/** A report in the form that works (a body worth compressing), else the catalogue's first page. */
function gzipRequest(
  forms: Partial<Record<ReportForm, FormObservation>>,
  period: Observations['formPeriod'],
  headers: Readonly<Record<string, string>>,
  configured: ReportForm,
): ProbeRequest {
  const choice = chooseForm(judgeForms(forms, period), configured);
  return choice === undefined
    ? { path: '/campaigns?limit=1', headers }
    : reportProbe(choice.form, DAY, period, headers);
}
