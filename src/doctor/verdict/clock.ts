// Row "clock": the server's Date header against our clock. Periods ("yesterday") are computed from
// our clock and the late-data window from the server's, so a large skew shifts what is complete.
import type { Observations, Row } from '../types.js';

/** Skew above this many seconds is worth a warning; the Date header itself has 1 s resolution. */
export const CLOCK_WARN_SECONDS = 60;

/** The clock row and the skew in whole seconds (server minus ours; positive: the server is ahead). */
export function clockVerdict(clock: Observations['clock']): { row: Row; skewSeconds: number | undefined } {
  if (clock === undefined)
    return { row: { check: 'clock', status: 'info', detail: 'no Date header seen' }, skewSeconds: undefined };
  const server = Date.parse(clock.serverDate);
  if (Number.isNaN(server))
    return {
      row: { check: 'clock', status: 'warn', detail: `unreadable Date header "${clock.serverDate}"` },
      skewSeconds: undefined,
    };
  // The header is truncated to the second: half a second back evens out the rounding.
  const skew = Math.round((server + 500 - clock.localMs) / 1000);
  const way = skew > 0 ? 'ahead of' : 'behind';
  const said = `server Date ${clock.serverDate}: ${skew === 0 ? 'in step with ours' : `${Math.abs(skew)} s ${way} ours`}`;
  if (Math.abs(skew) > CLOCK_WARN_SECONDS) {
    return {
      row: {
        check: 'clock',
        status: 'warn',
        detail: `${said}: more than ${CLOCK_WARN_SECONDS} s; check NTP on this machine (or tell the API's operator)`,
      },
      skewSeconds: skew,
    };
  }
  return { row: { check: 'clock', status: 'ok', detail: said }, skewSeconds: skew };
}
