// What the bench's child processes share: reading their own memory, and answering the one request
// their parent sends over IPC.
import { readFileSync } from 'node:fs';

/** Peak (VmHWM) and current (VmRSS) resident set from /proc (Linux), else what Node reports. */
export function memory(): { peak: number; now: number } {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const kb = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { peak: kb('VmHWM'), now: kb('VmRSS') };
  } catch {
    return { peak: process.resourceUsage().maxRSS * 1024, now: process.memoryUsage().rss };
  }
}

/** Runs `run` on the parent's one request and sends back its result or its error, then exits. */
export function answerParent<Req, Res>(run: (req: Req) => Promise<Res>): void {
  process.once('message', (req: Req) => {
    run(req).then(
      (result) => process.send?.({ ok: true, result }, () => process.exit(0)),
      (error: unknown) =>
        process.send?.(
          { ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) },
          () => process.exit(1),
        ),
    );
  });
}
