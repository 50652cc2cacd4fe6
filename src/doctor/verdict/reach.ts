// Row "reachability": did the server answer at all, and over what (plain http, or TLS with a
// certificate this machine trusts).
import type { Observations, Row } from '../types.js';
import { AUTH_FORMS } from '../types.js';

const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/;
/** Warn this many days before the certificate expires. */
const EXPIRY_WARN_DAYS = 14;

/** The reachability row, and the problem when nothing answered. */
export function reachVerdict(o: Observations, nowMs: number): { row: Row; problem: string | undefined } {
  const url = new URL(o.baseUrl);
  const answers = AUTH_FORMS.map((f) => o.auth[f]);
  const answered = answers.some((a) => a.kind === 'http');
  if (o.tls !== undefined && !o.tls.ok) {
    const detail = `${url.host}: TLS failed (${o.tls.code}: ${o.tls.detail})`;
    return {
      row: { check: 'reachability', status: 'fail', detail },
      problem:
        `the TLS handshake with ${url.host} failed (${o.tls.code}): the server's certificate is not ` +
        'trusted by this machine; fix the certificate, or point NODE_EXTRA_CA_CERTS at your CA',
    };
  }
  if (!answered) {
    const first = answers[0];
    const why = first?.kind === 'none' ? `${first.code}: ${first.detail}` : 'no answer';
    return {
      row: { check: 'reachability', status: 'fail', detail: `${url.host}: no answer (${why})` },
      problem: `${url.host} did not answer (${why}): check ADOPS_BASE_URL, DNS and the network`,
    };
  }
  if (url.protocol === 'http:') {
    const local = LOOPBACK.test(url.hostname);
    return {
      row: {
        check: 'reachability',
        status: local ? 'ok' : 'warn',
        detail: local
          ? `${url.host}: answers, plain http on a loopback address`
          : `${url.host}: answers over plain http: the key travels unencrypted; use https`,
      },
      problem: undefined,
    };
  }
  const tls = o.tls;
  if (tls === undefined) {
    return {
      row: { check: 'reachability', status: 'ok', detail: `${url.host}: answers over https` },
      problem: undefined,
    };
  }
  const daysLeft = Math.floor((Date.parse(tls.validTo) - nowMs) / 86_400_000);
  const soon = Number.isFinite(daysLeft) && daysLeft < EXPIRY_WARN_DAYS;
  return {
    row: {
      check: 'reachability',
      status: soon ? 'warn' : 'ok',
      detail:
        `${url.host}: answers over https; certificate ok (${tls.subject}, issued by ${tls.issuer}, ` +
        `valid until ${tls.validTo}${soon ? `: expires in ${daysLeft} days` : ''})`,
    },
    problem: undefined,
  };
}
