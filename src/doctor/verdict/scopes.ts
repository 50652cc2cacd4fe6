// Row "scopes": which endpoints answer 403 to this key. Reports are what a pull needs; the
// catalogue (campaigns, creatives) is what `adops sync` needs.
import type { Answer, Observations, Row } from '../types.js';
import { describeAnswer, hasStatus } from './answer.js';

/** The scopes row, whether reports are forbidden, and the problem when they are. */
export function scopesVerdict(o: Observations): {
  row: Row;
  reportsForbidden: boolean;
  problem: string | undefined;
} {
  const s = o.scopes;
  if (s === undefined)
    return {
      row: { check: 'scopes', status: 'skip', detail: 'not probed: no header form accepted' },
      reportsForbidden: false,
      problem: undefined,
    };
  const creatives: Answer | undefined = s.creatives === 'no-campaign' ? undefined : s.creatives;
  const parts = [
    `campaigns ${describeAnswer(s.campaigns)}`,
    creatives === undefined
      ? 'creatives not probed (no campaign listed)'
      : `creatives ${describeAnswer(creatives)}`,
    `reports ${describeAnswer(s.reports)}`,
  ];
  const reportsForbidden = hasStatus(s.reports, 403);
  const catalogueForbidden = hasStatus(s.campaigns, 403) || hasStatus(creatives, 403);
  if (reportsForbidden) {
    const said =
      s.reports.kind === 'http' && s.reports.apiMessage !== undefined ? ` ("${s.reports.apiMessage}")` : '';
    return {
      row: { check: 'scopes', status: 'fail', detail: parts.join('; ') },
      reportsForbidden,
      problem:
        `GET /reports answered 403${said}: the key lacks the reports scope (or the GET method, or ` +
        "this machine's IP): allow them in the API key settings",
    };
  }
  return {
    row: {
      check: 'scopes',
      status: catalogueForbidden ? 'warn' : 'ok',
      detail: catalogueForbidden
        ? `${parts.join('; ')}; adops sync needs the campaigns and creatives scopes`
        : parts.join('; '),
    },
    reportsForbidden,
    problem: undefined,
  };
}
