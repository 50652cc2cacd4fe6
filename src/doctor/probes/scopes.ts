// Probe "scopes": one request per endpoint group with the accepted header form; 403 means the key
// lacks that scope (or the method, or this machine's IP).
import { counterValue } from '../../flatten/rows.js';
import type { Prober } from '../http.js';
import { reportProbe } from '../requests.js';
import type { Answer, Observations, ReportForm } from '../types.js';
import { isSuccess } from '../verdict/answer.js';
import type { Period } from '../../flatten/types.js';

/**
 * Campaigns (the auth probe's answer, reused), creatives of the first campaign listed, and
 * yesterday's [day] report in the configured form.
 */
export async function probeScopes(
  prober: Prober,
  headers: Readonly<Record<string, string>>,
  campaigns: Answer,
  form: ReportForm,
  day: Period,
): Promise<NonNullable<Observations['scopes']>> {
  const id = firstCampaignId(campaigns);
  const creatives =
    id === undefined
      ? ('no-campaign' as const)
      : await prober.send({ path: `/campaigns/${id}/creatives?limit=1`, headers });
  const reports = await prober.send(reportProbe(form, ['day'], day, headers));
  return { campaigns, creatives, reports };
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
