import cliProgress from 'cli-progress';
import { etaSeconds, progressLine, type SyncProgress } from '../../catalogue/checkpoint.js';

/** Draws a sync's progress on stderr while it runs. */
export interface ProgressView {
  update(progress: SyncProgress): void;
  stop(): void;
}

/**
 * A progress bar of campaigns listed (with requests and an ETA) when `stream` is a terminal; else
 * a line every `lineEveryMs` (none for a sync quicker than that, so logs stay quiet). Only ever
 * writes to `stream` (stderr): stdout keeps the command's one summary line.
 */
export function syncProgressView(
  stream: NodeJS.WritableStream & { isTTY?: boolean },
  lineEveryMs = 5_000,
): ProgressView {
  const bar =
    stream.isTTY === true
      ? new cliProgress.SingleBar(
          {
            stream,
            format: 'sync {phase} |{bar}| {value}/{total} campaigns | {requests} requests | ETA {eta_s}',
            hideCursor: true,
          },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
  let started = false;
  let lastLine = Date.now();
  return {
    update(p) {
      const now = Date.now();
      if (bar === undefined) {
        if (now - lastLine < lineEveryMs) return;
        lastLine = now;
        stream.write(`${progressLine(p, now)}\n`);
        return;
      }
      // The bar needs its total: nothing is drawn while the campaigns are still being listed.
      if (p.campaignsTotal === null) return;
      const eta = etaSeconds(p, now);
      const fields = {
        phase: p.phase,
        requests: p.requests,
        // Not `eta`: cli-progress fills that name with its own estimate.
        eta_s: eta === undefined ? '?' : `${Math.ceil(eta)}s`,
      };
      const total = p.campaignsTotal;
      if (!started) {
        bar.start(total, p.campaignsDone, fields);
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(p.campaignsDone, fields);
      }
    },
    stop() {
      if (started) bar?.stop();
    },
  };
}
