// The whole verdict of `adops doctor`: every row, the settings, and whether a pull can work.
import type { Observations, Settings, Verdict } from '../types.js';
import { authVerdict } from './auth.js';
import { clockVerdict } from './clock.js';
import { formsVerdict } from './forms.js';
import { gzipVerdict } from './gzip.js';
import { rateLimitVerdict } from './rate-limit.js';
import { reachVerdict } from './reach.js';
import { scopesVerdict } from './scopes.js';

/**
 * Decides from the observations alone (no I/O): a pull can work when the server answered, a
 * header form was accepted, reports are not forbidden and some request form returned a correct
 * report. `nowMs` is our clock, for the certificate's expiry.
 */
export function decide(o: Observations, nowMs: number): Verdict {
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
  const settings: Settings | undefined =
    ok && auth.chosen !== undefined && forms.chosen !== undefined
      ? {
          ADOPS_AUTH: auth.chosen,
          ADOPS_REPORT_PARAMS: forms.chosen,
          ADOPS_HTTP_COMPRESSION: gzip.served === true ? 'gzip' : 'none',
        }
      : undefined;
  return {
    ok,
    rows: [
      reach.row,
      auth.row,
      scopes.row,
      ...forms.rows,
      gzip.row,
      clock.row,
      rateLimitVerdict(o.rateLimitHeaders, o.throttled),
    ],
    settings,
    problems,
    facts: {
      auth: auth.facts,
      forms: forms.judged,
      gzip: gzip.served,
      clockSkewSeconds: clock.skewSeconds,
      rateLimitHeaders: o.rateLimitHeaders,
      throttled: o.throttled,
    },
  };
}
