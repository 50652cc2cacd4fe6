// Probe "report params": GET /reports with [day, campaign_id] in each parameter form, and for
// each form that answered 2xx the [day] report of the same period, to check the sums against.
import type { Prober } from '../http.js';
import { reportProbe } from '../requests.js';
import { REPORT_FORMS, type FormObservation, type ReportForm } from '../types.js';
import { isSuccess } from '../verdict/answer.js';
import { DAY, PAIR } from '../verdict/forms.js';
import type { Period } from '../../flatten/types.js';

/** Both reports of every form, one form after the other (a few small requests). */
export async function probeForms(
  prober: Prober,
  headers: Readonly<Record<string, string>>,
  period: Period,
): Promise<Record<ReportForm, FormObservation>> {
  const out = {} as Record<ReportForm, FormObservation>;
  for (const form of REPORT_FORMS) {
    const pair = await prober.send(reportProbe(form, PAIR, period, headers));
    const day = isSuccess(pair) ? await prober.send(reportProbe(form, DAY, period, headers)) : undefined;
    out[form] = { pair, day };
  }
  return out;
}
