// `adops doctor`'s probing, in order: each step runs only when the ones before it leave something to
// learn (no scopes without an accepted key, no report forms when reports are 403). The requests are
// built without I/O, with the client's own request builder.
import { reportRequest } from '../api/client.js';
import type { Dimension } from '../config/dimensions.js';
import { addDays } from '../dates/calendar.js';
import { counterValue } from '../flatten/rows.js';
import type { Period } from '../flatten/types.js';
import { chooseForm, DAY, judgeForms, PAIR } from './forms.js';
import { probeTls, Prober, type ProbeRequest } from './http.js';
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
} from './types.js';
import { chooseAuth } from './verdict.js';

/** The server probed, the settings configured today, and the key. */
type DoctorTarget = Pick<Observations, 'baseUrl' | 'configured'> & {
  apiKey: string;
  connectTimeoutMs: number;
};

/** Probes the server and returns what it saw; never throws for what the server does. */
export async function runProbes(t: DoctorTarget): Promise<Observations> {
  const now = new Date();
  const tls = t.baseUrl.startsWith('https:') ? await probeTls(t.baseUrl, t.connectTimeoutMs) : undefined;
  const prober = new Prober({
    baseUrl: t.baseUrl,
    secrets: [t.apiKey],
    connectTimeoutMs: t.connectTimeoutMs,
    timeoutMs: 15_000,
  });
  const period = formPeriod(now);
  try {
    // Probe "auth": GET /campaigns?limit=1 with the key in each header form. The first answer also
    // tells whether the server is reachable at all.
    const auth = {} as Record<AuthForm, Answer>;
    for (const form of AUTH_FORMS)
      auth[form] = await prober.send({ path: '/campaigns?limit=1', headers: authHeaders(form, t.apiKey) });
    const chosen = chooseAuth(auth, t.configured.auth);
    let scopes: Observations['scopes'];
    const forms: Partial<Record<ReportForm, FormObservation>> = {};
    let gzip: Observations['gzip'];
    if (chosen !== undefined) {
      const headers = authHeaders(chosen, t.apiKey);
      // Probe "scopes": one request per endpoint group with the accepted header form, campaigns being
      // the auth probe's answer; 403 means the key lacks that scope (or the method, or this machine's IP).
      const id = firstCampaignId(auth[chosen]);
      scopes = {
        campaigns: auth[chosen],
        creatives:
          id === undefined
            ? 'no-campaign'
            : await prober.send({ path: `/campaigns/${id}/creatives?limit=1`, headers }),
        reports: await prober.send(reportProbe(t.configured.reportParams, DAY, yesterday(now), headers)),
      };
      // Probe "report params": [day, campaign_id] in each parameter form, one after the other, and
      // for each form that answered 2xx the [day] report of the same period, to check the sums against.
      if (!hasStatus(scopes.reports, 403))
        for (const form of REPORT_FORMS) {
          const pair = await prober.send(reportProbe(form, PAIR, period, headers));
          const day = isSuccess(pair)
            ? await prober.send(reportProbe(form, DAY, period, headers))
            : undefined;
          forms[form] = { pair, day };
        }
      // Probe "gzip": a report in the form that works (a body worth compressing), else the
      // catalogue's first page, asked for gzip-compressed; the body is kept as received.
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

// The probe requests, built without I/O: auth headers per form, GET /reports per parameter form,
// and the dates asked for.
/** The header carrying the key in one form. */
export function authHeaders(form: AuthForm, key: string): Record<string, string> {
  return form === 'bearer' ? { authorization: `Bearer ${key}` } : { 'x-api-key': key };
}

/** GET /reports for these dimensions and period, its parameters sent in `form`. */
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
